package wasm_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/guest/statefulset"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// TestCompareBuilds compares guest builds (e.g. TinyGo -gc=leaking vs the
// default GC vs standard Go), instance reuse vs a fresh instance per call, and
// the direct vs Extism path, by interleaving the calls round by round and
// printing medians. On a shared machine whose load drifts, interleaving is what
// keeps the ratios meaningful; RATIONALE.md's tables of builds were measured with it.
// It only runs when asked:
//
//	ORDINAL_COMPARE_BUILDS=leaking=/tmp/leaking.wasm,precise=/tmp/precise.wasm \
//	  go test -run TestCompareBuilds -v -timeout 60m ./host/wasm/
//
// ORDINAL_COMPARE_MAX_PODS (default 5000) skips larger snapshots for slow builds.
func TestCompareBuilds(t *testing.T) {
	spec := os.Getenv("ORDINAL_COMPARE_BUILDS")
	if spec == "" {
		t.Skip("set ORDINAL_COMPARE_BUILDS=name=file.wasm,... to compare guest builds")
	}
	maxPods := 5000
	fmt.Sscan(os.Getenv("ORDINAL_COMPARE_MAX_PODS"), &maxPods)

	type variant struct {
		name string
		call func([]byte) (wasm.CallStats, error)
	}
	vs := []variant{{"native", func(s []byte) (wasm.CallStats, error) { statefulset.Reconcile(s); return wasm.CallStats{}, nil }}}
	for _, build := range strings.Split(spec, ",") {
		name, file, _ := strings.Cut(build, "=")
		code, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		base := wasm.Config{MaxInstances: 1, Timeout: 5 * time.Minute, MemoryLimitPages: 65536}
		reused := load(t, code, base)
		base.MaxCallsPerInstance = 1
		fresh := load(t, code, base)
		vs = append(vs,
			variant{name + "/direct/reuse<64MiB", withStats(reused.ReconcileWithStats)},
			variant{name + "/direct/fresh", withStats(fresh.ReconcileWithStats)},
			variant{name + "/extism/reuse<64MiB", withStats(reused.ReconcileExtismWithStats)},
			variant{name + "/extism/fresh", withStats(fresh.ReconcileExtismWithStats)})
	}

	median := func(x []float64) float64 { s := slices.Clone(x); slices.Sort(s); return s[len(s)/2] }
	for _, n := range benchSizes {
		if n > maxPods {
			continue
		}
		snap := benchSnapshot(n)
		rounds := map[int]int{10: 21, 100: 11, 1000: 5}[n]
		if rounds == 0 {
			rounds = 3
		}
		ms := make([][]float64, len(vs))
		acquire := make([][]float64, len(vs))
		pages := make([]uint32, len(vs))
		for range rounds {
			for i, v := range vs {
				start := time.Now()
				st, err := v.call(snap)
				if err != nil {
					t.Fatalf("%d pods, %s: %v", n, v.name, err)
				}
				ms[i] = append(ms[i], float64(time.Since(start).Microseconds())/1000)
				acquire[i] = append(acquire[i], float64(st.Acquire.Microseconds())/1000)
				pages[i] = max(pages[i], st.MemoryPages)
			}
		}
		native := median(ms[0])
		for i, v := range vs {
			t.Logf("pods=%-5d %-28s median %9.2f ms  x-native %6.1f  acquire %5.2f ms  max guest %6.1f MiB",
				n, v.name, median(ms[i]), median(ms[i])/native, median(acquire[i]), float64(pages[i])/16)
		}
	}
}

// withStats adapts a Reconcile*WithStats method to the comparison's call shape.
func withStats(call func(context.Context, []byte) ([]byte, wasm.CallStats, error)) func([]byte) (wasm.CallStats, error) {
	return func(snapshot []byte) (wasm.CallStats, error) {
		_, st, err := call(context.Background(), snapshot)
		return st, err
	}
}
