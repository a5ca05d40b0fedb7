// Command bench-upstream measures Ordinal side by side with the upstream StatefulSet controller, as
// run by the reference harness (../shared/tools/oracle), and prints the ratios of issue 16:
//
//  1. the module against the same logic compiled natively, in this process (direct path, containment on);
//  2. `ordinal reconcile -f` against `oracle plan` as whole processes on the same snapshot file (beside
//     an older binary, -baseline, when set);
//  3. `ordinal replay --model tick` against `oracle simulate -defaults` on the same worlds (and -baseline's,
//     an older binary, in the same rounds, when given);
//  4. (-sections preview; make bench-preview) `ordinal preview` of an OrderedReady image change at 100 to
//     3000 pods, beside an older binary (-baseline) and `oracle simulate` of the edited world: wall, CPU,
//     peak RSS and the CPU growth per size step.
//
// Every pair runs alternately (ordinal, oracle, ordinal, ...) so a loaded machine slows both alike;
// figures are medians. The worlds are built from manifests, independently of Ordinal: the oracle
// itself creates and settles each set (`simulate -defaults -final`), and the template edit is applied
// to its output. `make bench-upstream` builds both binaries and runs this; it is a development tool
// that `make test` never needs.
//
//	go run ./hack/bench-upstream -oracle PATH -ordinal PATH [-baseline PATH] [-rounds 5] [-quick] [-sections module,process,replay,preview]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ordinal-dev/ordinal/guest/statefulset"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

var (
	oracleBin  = flag.String("oracle", "", "reference harness binary (oracle)")
	ordinalBin = flag.String("ordinal", "bin/ordinal", "ordinal binary")
	rounds     = flag.Int("rounds", 5, "alternating rounds per measurement")
	quick      = flag.Bool("quick", false, "smaller worlds (a smoke run of this tool)")
	work       = flag.String("work", "", "directory for the generated worlds (default: a temporary one)")
	sections   = flag.String("sections", "module,process,replay", "the sections to run, of module, process, replay and preview")
)

func main() {
	flag.Parse()
	if *oracleBin == "" {
		fatal("-oracle is required (make bench-upstream builds it from ../shared/tools/oracle)")
	}
	dir := *work
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fatal("%v", err)
		}
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "bench-upstream-")
		if err != nil {
			fatal("%v", err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	sizes, replays := []int{100, 1000, 5000}, []world{
		{name: "create 100, OrderedReady", pods: 100},
		{name: "create 300, OrderedReady", pods: 300},
		{name: "create 1000, OrderedReady", pods: 1000},
		{name: "roll 300, OrderedReady", pods: 300, roll: true},
		{name: "roll 300, Parallel, maxUnavailable 10%", pods: 300, roll: true, parallel: true},
	}
	if *quick {
		sizes, replays = []int{10, 100}, []world{{name: "create 20, OrderedReady", pods: 20}, {name: "roll 20, Parallel, maxUnavailable 10%", pods: 20, roll: true, parallel: true}}
	}
	fmt.Printf("bench-upstream: %d alternating rounds, medians; ordinal %s, oracle %s\n\n", *rounds, *ordinalBin, *oracleBin)
	run := map[string]bool{}
	for s := range strings.SplitSeq(*sections, ",") {
		if !slices.Contains([]string{"module", "process", "replay", "preview"}, s) {
			fatal("-sections: %q is not module, process, replay or preview", s)
		}
		run[s] = true
	}
	snaps := map[int]string{}
	if run["module"] || run["process"] {
		for _, n := range sizes {
			snaps[n] = rolloutSnapshot(dir, n)
		}
	}
	if run["module"] {
		moduleVsNative(sizes, snaps)
	}
	if run["process"] {
		processes(sizes, snaps)
	}
	if run["replay"] {
		replayVsSimulate(dir, replays)
	}
	if run["preview"] {
		previewScaling(dir)
	}
}

// manifest is the StatefulSet every world starts from, as a user would write it.
func manifest(pods int, parallel bool) map[string]any {
	spec := map[string]any{
		"replicas":    pods,
		"serviceName": "web",
		"selector":    map[string]any{"matchLabels": map[string]any{"app": "web"}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
			"spec": map[string]any{"containers": []any{map[string]any{
				"name": "nginx", "image": "registry.k8s.io/nginx-slim:0.27",
				"ports": []any{map[string]any{"name": "web", "containerPort": 80}},
			}}},
		},
	}
	if parallel {
		spec["podManagementPolicy"] = "Parallel"
		spec["updateStrategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": "10%"}}
	}
	return map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "web", "namespace": "default", "labels": map[string]any{"app": "web"}}, "spec": spec}
}

const start = "2026-11-22T10:00:00Z"

// createdSnapshot is the oracle's input for a new set: the manifest plus what the API server adds on
// create (uid, generation, resourceVersion, creationTimestamp); -defaults does the rest.
func createdSnapshot(m map[string]any) map[string]any {
	meta := m["metadata"].(map[string]any)
	meta["uid"], meta["generation"], meta["resourceVersion"], meta["creationTimestamp"] = "5b1c2a8e-0000-4000-8000-000000000001", 1, "1", start
	return map[string]any{"now": start, "statefulSet": m}
}

// settle has the oracle create and settle the set and returns its final world (a snapshot).
func settle(dir string, m map[string]any, name string) map[string]any {
	in := writeJSON(filepath.Join(dir, name+".create.json"), createdSnapshot(m))
	final := filepath.Join(dir, name+".settled.json")
	run(*oracleBin, "simulate", "-defaults", "-steps", "100000", "-final", final, in)
	var w map[string]any
	readJSON(final, &w)
	return w
}

// bumpImage is the user's edit: a new image, and the generation the API server would give it.
func bumpImage(w map[string]any) {
	set := w["statefulSet"].(map[string]any)
	meta := set["metadata"].(map[string]any)
	meta["generation"] = meta["generation"].(float64) + 1
	c := set["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["image"] = "registry.k8s.io/nginx-slim:0.28"
}

// rolloutSnapshot writes an n-pod settled set whose template just changed (an ABI v1 snapshot).
func rolloutSnapshot(dir string, n int) string {
	w := settle(dir, manifest(n, true), fmt.Sprintf("snap%d", n))
	bumpImage(w)
	w["abi"] = 1
	return writeJSON(filepath.Join(dir, fmt.Sprintf("rollout-%d.json", n)), w)
}

func moduleVsNative(sizes []int, snaps map[int]string) {
	ctx := context.Background()
	// Timed with the defaults a controller runs (an instance reused until its memory passes
	// RecycleAbovePages); guest memory measured on a fresh instance per call, so it is one call's.
	m, err := wasm.Load(ctx, embedded.Module(), wasm.Config{Timeout: 5 * time.Minute, MaxInstances: 1})
	if err != nil {
		fatal("%v", err)
	}
	defer m.Close(ctx)
	fresh, err := wasm.Load(ctx, embedded.Module(), wasm.Config{Timeout: 5 * time.Minute, MaxInstances: 1, MaxCallsPerInstance: 1, MemoryLimitPages: 65536})
	if err != nil {
		fatal("%v", err)
	}
	defer fresh.Close(ctx)
	fmt.Println("== 1. module vs the same logic natively (in process, direct path, containment on; guest memory of one call)")
	fmt.Printf("%-6s %10s %10s %12s %10s %9s %10s %11s\n", "pods", "snapshot", "native", "native MB/s", "module", "x-native", "guest MiB", "x-snapshot")
	for _, n := range sizes {
		snap, err := os.ReadFile(snaps[n])
		if err != nil {
			fatal("%v", err)
		}
		var native, module []time.Duration
		var pages uint32
		for range *rounds {
			t := time.Now()
			nat := statefulset.Reconcile(snap)
			native = append(native, time.Since(t))
			t = time.Now()
			out, err := m.Reconcile(ctx, snap)
			module = append(module, time.Since(t))
			if err != nil {
				fatal("module, %d pods: %v", n, err)
			}
			if !bytes.Equal(out, nat) {
				fatal("module and native plans differ at %d pods", n)
			}
		}
		_, st, err := fresh.ReconcileWithStats(ctx, snap)
		if err != nil {
			fatal("module, %d pods: %v", n, err)
		}
		pages = st.MemoryPages
		nat, mod := median(native), median(module)
		guest := float64(pages) * 65536
		fmt.Printf("%-6d %9.2fM %9.1fms %12.0f %9.1fms %8.2fx %10.1f %10.2fx\n", n, mb(len(snap)), ms(nat),
			mb(len(snap))/nat.Seconds(), ms(mod), float64(mod)/float64(nat), guest/(1<<20), guest/float64(len(snap)))
	}
	fmt.Println()
}

// processes runs `ordinal reconcile` and `oracle plan` alternately on each snapshot, and -baseline's
// reconcile too when it is set (ordinal, baseline, oracle, ordinal, ...), so a change's effect and the ratio
// to the oracle come from one run on one machine load.
func processes(sizes []int, snaps map[int]string) {
	fmt.Println("== 2. whole process: ordinal reconcile -f FILE vs oracle plan FILE (CPU = user+sys; memory = peak RSS)")
	fmt.Printf("%-6s %12s %12s %7s %12s %12s %7s %6s", "pods", "ordinal CPU", "oracle CPU", "x-cpu", "ordinal MiB", "oracle MiB", "x-mem", "plan")
	if *baselineBin != "" {
		fmt.Printf(" %13s %7s %13s", "baseline CPU", "x-cpu", "baseline MiB")
	}
	fmt.Println()
	run(*ordinalBin, "reconcile", "-f", snaps[sizes[0]]) // warm the compilation cache, as any second run finds it
	if *baselineBin != "" {
		run(*baselineBin, "reconcile", "-f", snaps[sizes[0]])
	}
	for _, n := range sizes {
		var oc, rc, bc []time.Duration
		var om, rm, bm []int64
		var ordOut, oraOut []byte
		for range *rounds {
			c, mem, out := measure(*ordinalBin, "reconcile", "--compact", "-f", snaps[n])
			oc, om, ordOut = append(oc, c), append(om, mem), out
			if *baselineBin != "" {
				c, mem, _ = measure(*baselineBin, "reconcile", "--compact", "-f", snaps[n])
				bc, bm = append(bc, c), append(bm, mem)
			}
			c, mem, out = measure(*oracleBin, "plan", "-compact", snaps[n])
			rc, rm, oraOut = append(rc, c), append(rm, mem), out
		}
		same := "same"
		if !samePlan(ordOut, oraOut) {
			same = "DIFF"
		}
		printPair(fmt.Sprint(n), oc, rc, om, rm, same)
		if len(bc) > 0 {
			b := median(bc)
			fmt.Printf(" %12.0fms %6.2fx %13.1f", ms(b), float64(b)/float64(median(rc)), float64(medianInt(bm))/1024)
		}
		fmt.Println()
	}
	fmt.Println()
}

type world struct {
	name           string
	pods           int
	roll, parallel bool
}

// replayVsSimulate: the creation worlds run once each; a rollout world is creation plus rollout for
// Ordinal (one scenario) and two oracle runs (settle, then simulate the edited world), CPU summed and
// memory the larger of the two, so the oracle pays one process start more.
func replayVsSimulate(dir string, worlds []world) {
	fmt.Println("== 3. ordinal replay --model tick vs oracle simulate -defaults (rollouts: creation + rollout)")
	fmt.Printf("%-40s %13s %12s %12s %7s %12s %12s %7s\n", "world", "syncs ord/ora", "ordinal CPU", "oracle CPU", "x-cpu", "ordinal MiB", "oracle MiB", "x-mem")
	for i, w := range worlds {
		m := manifest(w.pods, w.parallel)
		scen := map[string]any{"name": fmt.Sprintf("bench-%d", i), "description": w.name, "manifests": []any{m}}
		if w.roll {
			scen["events"] = []any{map[string]any{"settled": true, "after": "5s",
				"set": map[string]any{"spec.template.spec.containers[0].image": "registry.k8s.io/nginx-slim:0.28"}}}
		}
		scenFile := writeJSON(filepath.Join(dir, fmt.Sprintf("scenario-%d.yaml", i)), scen) // JSON is YAML
		oraIn := writeJSON(filepath.Join(dir, fmt.Sprintf("world-%d.json", i)), createdSnapshot(manifest(w.pods, w.parallel)))
		var oc, rc, bc []time.Duration
		var om, rm, bm []int64
		var ordSyncs, oraSyncs, baseSyncs int
		for range *rounds {
			c, mem, out := measure(*ordinalBin, "replay", "--model", "tick", "-o", "json", scenFile)
			oc, om = append(oc, c), append(om, mem)
			ordSyncs = countSteps(out)
			if *baselineBin != "" {
				c, mem, out := measure(*baselineBin, "replay", "--model", "tick", "-o", "json", scenFile)
				bc, bm = append(bc, c), append(bm, mem)
				baseSyncs = countSteps(out)
			}
			final := filepath.Join(dir, fmt.Sprintf("world-%d.final.json", i))
			c, mem, out = measure(*oracleBin, "simulate", "-defaults", "-json", "-steps", "100000", "-final", final, oraIn)
			oraSyncs = countSteps(out)
			if w.roll {
				var fw map[string]any
				readJSON(final, &fw)
				bumpImage(fw)
				rolled := writeJSON(filepath.Join(dir, fmt.Sprintf("world-%d.edited.json", i)), fw)
				c2, mem2, out2 := measure(*oracleBin, "simulate", "-json", "-steps", "100000", rolled)
				c, mem = c+c2, max(mem, mem2)
				oraSyncs += countSteps(out2)
			}
			rc, rm = append(rc, c), append(rm, mem)
		}
		printPair(w.name, oc, rc, om, rm, fmt.Sprintf("%d/%d", ordSyncs, oraSyncs))
		if *baselineBin != "" {
			printPair("  baseline (-baseline)", bc, rc, bm, rm, fmt.Sprintf("%d/%d", baseSyncs, oraSyncs))
		}
	}
}

// printPair prints one row: ordinal's and the oracle's medians and their ratios. A process row (a short
// label) ends without its newline: processes adds the baseline's columns.
func printPair(label string, oc, rc []time.Duration, om, rm []int64, note string) {
	o, r := median(oc), median(rc)
	omem, rmem := medianInt(om), medianInt(rm)
	if len(label) > 6 { // replay rows: the note (syncs) goes second
		fmt.Printf("%-40s %13s %11.0fms %11.0fms %6.2fx %12.1f %12.1f %6.2fx\n", label, note, ms(o), ms(r), float64(o)/float64(r),
			float64(omem)/1024, float64(rmem)/1024, float64(omem)/float64(rmem))
		return
	}
	fmt.Printf("%-6s %11.0fms %11.0fms %6.2fx %12.1f %12.1f %6.2fx %6s", label, ms(o), ms(r), float64(o)/float64(r),
		float64(omem)/1024, float64(rmem)/1024, float64(omem)/float64(rmem), note)
}

// measure runs a command to completion and returns its CPU time (user+sys), peak RSS (KiB) and stdout.
func measure(bin string, args ...string) (time.Duration, int64, []byte) {
	u, err := measureWithin(0, bin, args...)
	if err != nil {
		fatal("%v", err)
	}
	return u.cpu, u.rss, u.out
}

// usage is what one run of a command took.
type usage struct {
	wall, cpu time.Duration // elapsed; user+sys
	rss       int64         // peak RSS, KiB
	out       []byte        // its standard output
}

// measureWithin runs a command to completion, or until limit (0: none), and returns what it took; an
// error says why a run did not finish (stopped at the limit, or failed).
//
// GNU time (/usr/bin/time) starts it and reports its peak RSS and wall time: Linux carries the peak RSS of the address
// space a process execs from into its own, and Go starts commands from this process's (with a module
// loaded, far larger than time's), so the command's own rusage would report this process's size.
func measureWithin(limit time.Duration, bin string, args ...string) (usage, error) {
	f, err := os.CreateTemp("", "usage-")
	if err != nil {
		fatal("%v", err)
	}
	f.Close()
	defer os.Remove(f.Name())
	ctx := context.Background()
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, gnuTime, append([]string{"-f", "%e %U %S %M", "-o", f.Name(), bin}, args...)...)
	// time and the command in a process group of their own, all stopped at the limit (killing time alone
	// would leave the command running)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ctx.Err() != nil {
		return usage{}, fmt.Errorf("stopped at the cap (%s)", limit)
	}
	if code := cmd.ProcessState.ExitCode(); err != nil && !(code == 3 || strings.Contains(bin, "oracle")) {
		return usage{}, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, errb.String())
	}
	b, _ := os.ReadFile(f.Name())
	var wall, user, sys float64
	var rss int64
	lines := strings.Split(strings.TrimSpace(string(b)), "\n") // "Command exited with non-zero status" may come first
	if _, err := fmt.Sscan(lines[len(lines)-1], &wall, &user, &sys, &rss); err != nil {
		return usage{}, fmt.Errorf("%s: usage %q: %v", gnuTime, b, err)
	}
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	// CPU from the kernel's own account of time and the command it waited for (microseconds): time prints
	// hundredths, which at a few tens of ms decides a ratio by itself (60 against 70 ms).
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if cpu <= 0 {
		cpu = sec(user + sys)
	}
	return usage{wall: sec(wall), cpu: cpu, rss: rss, out: out.Bytes()}, nil
}

const gnuTime = "/usr/bin/time"

func run(bin string, args ...string) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout = nil
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		fatal("%s %s: %v: %s", bin, strings.Join(args, " "), err, errb.String())
	}
}

// samePlan compares the writes of two plans: verb, kind, namespace and name, in order.
func samePlan(a, b []byte) bool {
	type act struct{ Verb, Kind, Namespace, Name string }
	var pa, pb struct{ Actions []act }
	if json.Unmarshal(a, &pa) != nil || json.Unmarshal(b, &pb) != nil {
		return false
	}
	return len(pa.Actions) > 0 && slices.Equal(pa.Actions, pb.Actions)
}

func countSteps(out []byte) int {
	var t struct{ Steps []json.RawMessage }
	if json.Unmarshal(out, &t) != nil {
		return -1
	}
	return len(t.Steps)
}

func writeJSON(path string, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		fatal("%v", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		fatal("%v", err)
	}
	return path
}

func readJSON(path string, v any) {
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		fatal("%s: %v", path, err)
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianInt(d []int64) int64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mb(n int) float64           { return float64(n) / 1e6 }

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-upstream: "+format+"\n", args...)
	os.Exit(1)
}
