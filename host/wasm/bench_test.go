package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/guest/statefulset"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// Benchmarks compare one reconcile of a RollingUpdate template change (see
// rollingUpdateSnapshot) natively, through the direct exports and through the
// Extism SDK, with a reused instance and with a fresh instance per call.
// Custom metrics: x-native (time relative to the native call for the same
// snapshot), guest-MiB (guest memory after the call), and for fresh instances
// acquire-ms (instantiation, included in ns/op).
//
// ORDINAL_TEST_WASM selects another build of the guest (e.g. -gc=leaking).

var benchSizes = []int{10, 100, 1000, 5000}

var snapshots sync.Map // pods -> []byte

func benchSnapshot(n int) []byte {
	if s, ok := snapshots.Load(n); ok {
		return s.([]byte)
	}
	s, _ := snapshots.LoadOrStore(n, rollingUpdateSnapshot(n))
	return s.([]byte)
}

var nativeNs sync.Map // pods -> float64 ns/op

// nativeNsPerOp is the native call's time for the x-native ratio: the result of
// the pods=N/native sub-benchmark, or, when -bench filtered that out, a quick
// measurement here (testing.Benchmark cannot be nested in a benchmark).
func nativeNsPerOp(n int) float64 {
	if v, ok := nativeNs.Load(n); ok {
		return v.(float64)
	}
	snap := benchSnapshot(n)
	start, runs := time.Now(), 0
	for runs < 3 || time.Since(start) < 500*time.Millisecond {
		statefulset.Reconcile(snap)
		runs++
	}
	ns := float64(time.Since(start).Nanoseconds()) / float64(runs)
	nativeNs.Store(n, ns)
	return ns
}

func BenchmarkReconcile(b *testing.B) {
	wasmBytes := guestWasm(b)
	ctx := context.Background()
	modes := []struct {
		name string
		cfg  wasm.Config
	}{
		// "default" is Config's defaults (recycle above 64 MiB) with a looser
		// timeout; recycling is pushed out of the way so "reuse" measures pure reuse.
		{"default", wasm.Config{MaxInstances: 1, Timeout: 5 * time.Minute}},
		{"reuse", wasm.Config{MaxInstances: 1, RecycleAbovePages: 65536, MemoryLimitPages: 65536, Timeout: 5 * time.Minute}},
		{"fresh", wasm.Config{MaxInstances: 1, MaxCallsPerInstance: 1, MemoryLimitPages: 65536, Timeout: 5 * time.Minute}},
	}
	for _, n := range benchSizes {
		snap := benchSnapshot(n)
		b.Run(fmt.Sprintf("pods=%d/native", n), func(b *testing.B) {
			b.SetBytes(int64(len(snap)))
			for b.Loop() {
				statefulset.Reconcile(snap)
			}
			nativeNs.Store(n, float64(b.Elapsed().Nanoseconds())/float64(b.N))
		})
		for _, mode := range modes {
			m := load(b, wasmBytes, mode.cfg)
			paths := []struct {
				name string
				call func(context.Context, []byte) ([]byte, wasm.CallStats, error)
			}{{"direct", m.ReconcileWithStats}, {"extism", m.ReconcileExtismWithStats}}
			for _, path := range paths {
				b.Run(fmt.Sprintf("pods=%d/%s/%s", n, path.name, mode.name), func(b *testing.B) {
					b.SetBytes(int64(len(snap)))
					var st wasm.CallStats
					var acquire float64
					for b.Loop() {
						var err error
						if _, st, err = path.call(ctx, snap); err != nil {
							b.Fatal(err)
						}
						acquire += float64(st.Acquire.Nanoseconds())
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/nativeNsPerOp(n), "x-native")
					b.ReportMetric(float64(st.MemoryPages)/16, "guest-MiB")
					if mode.name != "reuse" {
						b.ReportMetric(acquire/float64(b.N)/1e6, "acquire-ms")
					}
				})
			}
		}
	}
}

// BenchmarkInstantiate is the cost of a fresh instance (plus _initialize) on
// each path: a fresh instance per call with a tiny snapshot that fails fast.
func BenchmarkInstantiate(b *testing.B) {
	m := loadGuest(b, wasm.Config{MaxInstances: 1, MaxCallsPerInstance: 1})
	ctx := context.Background()
	tiny := []byte(`{}`)
	for _, path := range []struct {
		name string
		call func(context.Context, []byte) ([]byte, wasm.CallStats, error)
	}{{"direct", m.ReconcileWithStats}, {"extism", m.ReconcileExtismWithStats}} {
		b.Run(path.name, func(b *testing.B) {
			var acquire float64
			for b.Loop() {
				_, st, err := path.call(ctx, tiny)
				if err != nil {
					b.Fatal(err)
				}
				acquire += float64(st.Acquire.Nanoseconds())
			}
			b.ReportMetric(acquire/float64(b.N), "instantiate-ns")
		})
	}
}

// BenchmarkLoad is wasm.Load (compile, instantiate, describe) without and with
// a warm on-disk compilation cache, as the CLI pays on every run.
func BenchmarkLoad(b *testing.B) {
	wasmBytes := guestWasm(b)
	ctx := context.Background()
	dir := b.TempDir()
	for _, c := range []struct {
		name string
		cfg  wasm.Config
	}{{"no-cache", wasm.Config{}}, {"warm-dir-cache", wasm.Config{CacheDir: dir}}} {
		b.Run(c.name, func(b *testing.B) {
			if c.cfg.CacheDir != "" { // warm it
				m, err := wasm.Load(ctx, wasmBytes, c.cfg)
				if err != nil {
					b.Fatal(err)
				}
				m.Close(ctx)
			}
			for b.Loop() {
				m, err := wasm.Load(ctx, wasmBytes, c.cfg)
				if err != nil {
					b.Fatal(err)
				}
				m.Close(ctx)
			}
		})
	}
}

// BenchmarkSessionOnePodChanged is one sync of a 1000-pod set through a Session when one pod changed since
// the previous sync (the session sends the other 999 as references), beside the same sync sent whole. The set
// (rollingUpdateSnapshot) has a new template whose revision does not exist yet, so every sync plans its creation.
// guest-ms/op is the module's time per call (CallStats.Guest) over every call of the session: each instance's
// whole call (the first, and the one after each recycle; whole/op of them) amortized over the calls it served, as
// BenchmarkHeldSync's guest-ms/op. calls/instance above b.N says no instance was recycled during the run: the
// first whole call (~24 ms) is then spread over b.N+1 calls, an instance's life is longer, and the figure is an
// upper bound (a longer -benchtime shows the recycles' own pace).
func BenchmarkSessionOnePodChanged(b *testing.B) {
	for _, recycleAbove := range []uint32{256, 1024} {
		b.Run(fmt.Sprintf("recycle-above-%d-pages", recycleAbove), func(b *testing.B) { benchSessionOnePodChanged(b, recycleAbove) })
	}
}

func benchSessionOnePodChanged(b *testing.B, recycleAbove uint32) {
	ctx := context.Background()
	m := loadGuest(b, wasm.Config{MaxInstances: 1, RecycleAbovePages: recycleAbove})
	snaps := [2][]byte{rollingUpdateSnapshot(1000), nil}
	// the second: pod web-0 with another resourceVersion (and so other bytes)
	var s map[string]any
	if err := json.Unmarshal(snaps[0], &s); err != nil {
		b.Fatal(err)
	}
	for i, p := range s["pods"].([]any) { // as an API server returns them: a uid and a resourceVersion each
		md := p.(map[string]any)["metadata"].(map[string]any)
		md["uid"], md["resourceVersion"] = fmt.Sprintf("uid-%d", i), fmt.Sprint(1000+i)
	}
	snaps[0], _ = json.Marshal(s)
	md := s["pods"].([]any)[0].(map[string]any)["metadata"].(map[string]any)
	md["resourceVersion"] = "999999"
	snaps[1], _ = json.Marshal(s)
	b.Run("session", func(b *testing.B) {
		recycled := m.Stats().Direct.RecycledForMemory
		sess := m.NewSession()
		if _, err := sess.Reconcile(ctx, snaps[1]); err != nil {
			b.Fatal(err)
		}
		i := 0
		for b.Loop() {
			i++
			if _, err := sess.Reconcile(ctx, snaps[i%2]); err != nil {
				b.Fatal(err)
			}
		}
		st := sess.Stats()
		b.ReportMetric(float64(st.References)/float64(st.Objects), "referenced/object")
		// what a delta call leaves allocated decides how often the instance is recycled (and the next call sent whole)
		b.ReportMetric(float64(st.Calls)/float64(m.Stats().Direct.RecycledForMemory-recycled+1), "calls/instance")
		b.ReportMetric(float64(st.Guest.Microseconds())/1000/float64(st.Calls), "guest-ms/op")
		b.ReportMetric(float64(st.Whole)/float64(st.Calls), "whole/op")
	})
	b.Run("whole", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := m.Reconcile(ctx, snaps[i%2]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkHeldSync is the module's part of a held sync of a 1000-pod OrderedReady set with a claim per pod, sent
// as the delta a Session sends. Settled (settledSet): one pod changed (a new resourceVersion: nothing to do), or
// one pod gone and back (the sync creates it, then has nothing to do). Template-changed (templateChangedSet): the set
// of BenchmarkSessionOnePodChanged, one pod changed, every sync planning the update revision's creation, the top
// pod's delete and the status. Mid-rollout (midRolloutSet): half the pods
// at the update revision and the next one down recreated but not Ready, which changes under a new resourceVersion
// and stays not Ready (the sync waits). guest-ms/op is the module's time per sync (CallStats.Guest: copy in,
// reconcile, copy out) over every sync, the first included, as BenchmarkSessionOnePodChanged's: each instance's
// whole call (the first, and the one after each recycle, with the refused delta before it; whole/op of them)
// amortized over the syncs it served, an upper bound when no instance was recycled (calls/instance above b.N);
// delta-ms/op is the delta calls' alone. calls/instance is how many calls an instance serves before the pool recycles it for its memory (default
// Config), after which the set is sent whole again; cpu-ms/op the CPU time of the benchmark's thread per delta
// call (the guest runs on it; the figure to compare on a loaded machine, where the others count waits for a core).
func BenchmarkHeldSync(b *testing.B) {
	settled, s := settledSet(b, 1000)
	rolling, r := midRolloutSet(b, 1000)
	changed, c := templateChangedSet(b, 1000)
	variants := []struct {
		name   string
		whole  []byte
		deltas [2][]byte
		// plan: what each delta's plan does (checked on the loop's first two calls), nil for nothing
		plan func(planOf) bool
	}{
		{"pod-changed", settled, [2][]byte{heldDelta(b, s, 500, false, 7001), heldDelta(b, s, 500, false, 7002)}, nil},
		{"pod-gone-and-back", settled, [2][]byte{heldDelta(b, s, 500, true, 0), heldDelta(b, s, 500, false, 7003)},
			func(p planOf) bool { // nothing once it is back, its create while it is gone
				return len(p.Actions) == 0 || p.Actions[0].Verb == "create" && p.Actions[0].Kind == "Pod" && p.Actions[0].Name == "web-500"
			}},
		{"mid-rollout-waiting", rolling, [2][]byte{heldDelta(b, r, 499, false, 7004), heldDelta(b, r, 499, false, 7005)}, nil},
		// the set of BenchmarkSessionOnePodChanged, its update revision yet to be created: every sync plans that
		{"template-changed", changed, [2][]byte{heldDelta(b, c, 0, false, 7006), heldDelta(b, c, 0, false, 7007)},
			func(p planOf) bool {
				return len(p.Actions) == 3 && p.Actions[0].Verb == "create" && p.Actions[0].Kind == "ControllerRevision" &&
					p.Actions[1].Verb == "delete" && p.Actions[1].Name == "web-999"
			}},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			ctx := context.Background()
			m := loadGuest(b, wasm.Config{MaxInstances: 1})
			_, st, err := m.ReconcileWithStats(ctx, v.whole)
			if err != nil {
				b.Fatal(err)
			}
			first := st.Guest
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var guest, delta time.Duration
			var cpu int64
			wholes, i := 0, 0
			for b.Loop() {
				i++
				cpu0 := threadCPU()
				out, st, err := m.ReconcileWithStats(ctx, v.deltas[i%2])
				spent := threadCPU() - cpu0
				if err != nil {
					b.Fatal(err)
				}
				guest += st.Guest
				if bytes.Contains(out, []byte(`"code":"StaleReference"`)) { // a recycled instance: the set whole again
					wholes++
					_, st, err := m.ReconcileWithStats(ctx, v.whole)
					if err != nil {
						b.Fatal(err)
					}
					guest += st.Guest
					continue
				}
				delta += st.Guest
				cpu += spent
				if i <= 2 {
					var p planOf
					if err := json.Unmarshal(out, &p); err != nil || p.Error != nil || v.plan == nil && len(p.Actions) != 0 ||
						v.plan != nil && !v.plan(p) {
						b.Fatalf("the delta's plan is not the variant's (%v): %.600s", err, out)
					}
				}
			}
			b.ReportMetric(float64((first+guest).Microseconds())/1000/float64(i+1), "guest-ms/op")
			b.ReportMetric(float64(delta.Microseconds())/1000/float64(i-wholes), "delta-ms/op")
			if cpu > 0 {
				b.ReportMetric(float64(cpu)/1e6/float64(i-wholes), "cpu-ms/op")
			}
			b.ReportMetric(float64(i+1)/float64(m.Stats().Direct.RecycledForMemory+1), "calls/instance")
			b.ReportMetric(float64(wholes+1)/float64(i+1), "whole/op")
		})
	}
}
