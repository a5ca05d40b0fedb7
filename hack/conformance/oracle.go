package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// oracleRunner runs the reference oracle binary (path from $ORACLE).
type oracleRunner struct {
	bin   string
	tmp   string
	seq   atomic.Int64
	calls atomic.Int64
}

func (o *oracleRunner) run(stdin []byte, args ...string) []byte { return o.runEnv(nil, stdin, args...) }

// runEnv runs the oracle with env added to this process's environment.
func (o *oracleRunner) runEnv(env []string, stdin []byte, args ...string) []byte {
	o.calls.Add(1)
	cmd := exec.Command(o.bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		fatalf("oracle %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes()
}

func (o *oracleRunner) tmpFile(content []byte) string {
	p := filepath.Join(o.tmp, fmt.Sprintf("in-%d.json", o.seq.Add(1)))
	if err := os.WriteFile(p, content, 0o644); err != nil {
		fatalf("%v", err)
	}
	return p
}

// encodeSnapshot is the on-disk form of a snapshot: pretty, sorted keys, revision data compact.
func encodeSnapshot(s M) []byte {
	return pretty(prepareSnapshot(s))
}

// prepareSnapshot normalises a snapshot in place: empty lists instead of null, revision data
// as compact JSON (byte-identical to what the controller created).
func prepareSnapshot(s M) M {
	for _, k := range []string{"pods", "revisions", "claims"} {
		if s[k] == nil {
			s[k] = []any{}
		}
	}
	for _, r := range jsonobj.AsArr(s["revisions"]) {
		ro := jsonobj.AsObj(r)
		switch d := ro["data"].(type) {
		case compactJSON, nil:
		default:
			ro["data"] = compactJSON(compactMarshal(d))
		}
	}
	if f, ok := s["features"].(M); ok && len(f) == 0 {
		delete(s, "features")
	}
	return s
}

// defaults applies API-server defaulting (oracle defaults) and returns the normalised snapshot.
// The "abi" field is preserved.
func (o *oracleRunner) defaults(s M) M {
	abi, hasABI := s["abi"]
	out := mustDecodeObj(o.run(encodeSnapshot(clone(s)), "defaults", "-"))
	if hasABI {
		out["abi"] = abi
	}
	return prepareSnapshot(out)
}

// plan runs one sync (oracle plan -events) on a snapshot file and returns the oracle's plan.
func (o *oracleRunner) planFile(path string) M {
	return mustDecodeObj(o.run(nil, "plan", "-events", path))
}

func (o *oracleRunner) plan(s M) M {
	return o.planFile(o.tmpFile(encodeSnapshot(clone(s))))
}

// simulate runs oracle simulate -json -events -steps N and returns the timeline and the final
// world (as a normalised snapshot).
func (o *oracleRunner) simulate(s M, steps int) (timeline M, final M) {
	in := o.tmpFile(encodeSnapshot(clone(s)))
	fin := in + ".final.json"
	tl := mustDecodeObj(o.run(nil, "simulate", "-json", "-events", "-steps", fmt.Sprint(steps), "-final", fin, in))
	b, err := os.ReadFile(fin)
	if err != nil {
		fatalf("%v", err)
	}
	return tl, prepareSnapshot(mustDecodeObj(b))
}
