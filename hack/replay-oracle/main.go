// Command replay-oracle captures the reference oracle's timelines for the replay scenarios, so
// that host/replay's tests can check, step for step and without the oracle, that a scenario replayed
// with the tick kubelet model is exactly what `oracle simulate` does.
//
//	ORACLE=/tmp/oracle/oracle go run ./hack/replay-oracle [-dir testdata/scenarios]
//
// For every scenario the tick model can express, the scenario is replayed with the embedded module
// and the tick model. Each segment (the part between two user events) starts from a world the
// replay recorded; the oracle simulates from that world for as many steps as the segment has (to
// convergence for the last one). The first world has its objects' specs as the manifests wrote them,
// defaulted by the oracle itself (-defaults), so the replay's defaulting is checked too. The result, converted to the ABI plan shape, goes to
// <dir>/oracle/<scenario>.json with the sha256 of the segment's starting world.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ordinal-dev/ordinal/host/embedded"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/wasm"

	"github.com/ordinal-dev/ordinal/internal/oracleplan"
)

func main() {
	dir := flag.String("dir", "testdata/scenarios", "scenario directory")
	flag.Parse()
	bin := os.Getenv("ORACLE")
	if bin == "" {
		fatal("set ORACLE to the reference harness's oracle binary (hack/conformance/README.md says how to build it)")
	}
	ctx := context.Background()
	m, err := wasm.Load(ctx, embedded.Module(), wasm.Config{})
	if err != nil {
		fatal("%v", err)
	}
	defer m.Close(ctx)
	files, _ := filepath.Glob(filepath.Join(*dir, "*.yaml"))
	if err := os.MkdirAll(filepath.Join(*dir, "oracle"), 0o755); err != nil {
		fatal("%v", err)
	}
	version, _ := exec.Command(bin, "version").Output()
	for _, f := range files {
		sc, err := replay.LoadScenario(f)
		if err != nil {
			fatal("%v", err)
		}
		if why := replay.TickExpressible(sc); why != "" {
			fmt.Printf("%-40s skipped: %s\n", sc.Name, why)
			continue
		}
		tl, err := replay.Run(ctx, sc, replay.Options{Module: m, Model: replay.ModelTick,
			LoadModule: func(ctx context.Context, _ string) (hostplan.Reconciler, error) { return m, nil }})
		if err != nil {
			fatal("%s: %v", f, err)
		}
		capture := replay.OracleCapture{Scenario: sc.Name, Oracle: strings.SplitN(string(version), "\n", 2)[0]}
		compared := 0
		for i, seg := range tl.Segments {
			end := len(tl.Steps)
			last := i == len(tl.Segments)-1
			if !last {
				end = tl.Segments[i+1].FirstStep
			}
			sum := sha256.Sum256(seg.Snapshot)
			cs := replay.OracleSegment{FirstStep: seg.FirstStep, SnapshotSHA256: hex.EncodeToString(sum[:])}
			if !seg.Comparable {
				cs.Skipped = "a pod was still starting when the segment began; the oracle starts only pods it created itself"
				capture.Segments = append(capture.Segments, cs)
				continue
			}
			steps := end - seg.FirstStep
			if last {
				steps = replay.DefaultMaxSteps
			}
			input, flags := seg.Snapshot, []string(nil)
			if i == 0 && len(sc.Manifests) > 0 {
				// The first world comes from the manifests: the harness defaults them itself, so a
				// defaulting difference between the replay and the API server shows as a different plan.
				input, flags = withManifestSpecs(seg.Snapshot, sc.Manifests), []string{"-defaults"}
			}
			if sc.Kubelet.Tick != nil {
				flags = append(flags, "-tick", sc.Kubelet.Tick.D().String())
			}
			cs.Steps, cs.StopReason = simulate(bin, input, steps, flags...)
			if !last {
				cs.StopReason = ""
			}
			compared++
			capture.Segments = append(capture.Segments, cs)
		}
		b, _ := json.MarshalIndent(capture, "", "  ")
		out := filepath.Join(*dir, "oracle", sc.Name+".json")
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			fatal("%v", err)
		}
		fmt.Printf("%-40s %d/%d segments, %d steps -> %s\n", sc.Name, compared, len(tl.Segments), len(tl.Steps), out)
	}
}

// simulate runs `oracle simulate -json -events` on a snapshot and converts its steps.
func simulate(bin string, snapshot []byte, steps int, flags ...string) ([]replay.OracleStep, string) {
	tmp, err := os.CreateTemp("", "replay-oracle-*.json")
	if err != nil {
		fatal("%v", err)
	}
	defer os.Remove(tmp.Name())
	tmp.Write(snapshot)
	tmp.Close()
	args := append([]string{"simulate", "-json", "-events", "-steps", fmt.Sprint(steps)}, flags...)
	cmd := exec.Command(bin, append(args, tmp.Name())...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		fatal("oracle simulate: %v\n%s", err, errb.String())
	}
	var tl struct {
		Steps []struct {
			Step int                `json:"step"`
			Now  string             `json:"now"`
			Pods []replay.OraclePod `json:"pods"`
			Plan json.RawMessage    `json:"plan"`
		} `json:"steps"`
		StopReason string `json:"stopReason"`
	}
	if err := json.Unmarshal(out.Bytes(), &tl); err != nil {
		fatal("oracle output: %v", err)
	}
	var res []replay.OracleStep
	for _, s := range tl.Steps {
		pb, err := oracleplan.ToABI(s.Plan)
		if err != nil {
			fatal("%v", err)
		}
		pods := s.Pods
		if pods == nil {
			pods = []replay.OraclePod{}
		}
		res = append(res, replay.OracleStep{Now: s.Now, Pods: pods, Plan: pb})
	}
	return res, tl.StopReason
}

// withManifestSpecs is the replay's first world with every object's spec put back as its manifest wrote
// it, undefaulted: the identities, statuses and times the replay made up stay (the harness needs the same
// ones to make the same writes), the defaulting is left to the harness's own -defaults.
func withManifestSpecs(snapshot []byte, manifests []json.RawMessage) []byte {
	specs := map[string]json.RawMessage{}
	for _, m := range manifests {
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec json.RawMessage `json:"spec"`
		}
		if err := json.Unmarshal(m, &o); err != nil {
			fatal("manifest: %v", err)
		}
		if o.Spec != nil {
			specs[o.Kind+"/"+o.Metadata.Name] = o.Spec
		}
	}
	var snap map[string]any
	if err := json.Unmarshal(snapshot, &snap); err != nil {
		fatal("snapshot: %v", err)
	}
	put := func(kind string, o any) {
		m, _ := o.(map[string]any)
		md, _ := m["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		if spec, ok := specs[kind+"/"+name]; ok {
			m["spec"] = spec
		}
	}
	put("StatefulSet", snap["statefulSet"])
	for key, kind := range map[string]string{"pods": "Pod", "claims": "PersistentVolumeClaim"} {
		list, _ := snap[key].([]any)
		for _, o := range list {
			put(kind, o)
		}
	}
	b, err := json.Marshal(snap)
	if err != nil {
		fatal("%v", err)
	}
	return b
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "replay-oracle: "+format+"\n", args...)
	os.Exit(1)
}
