package controller

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// BenchmarkHotSwap measures a hot swap as `ordinal controller --module FILE` does it: the time from the
// file changing to the new module being active (noticing the change, compiling through the
// compilation cache, instantiating, describe, every conformance case), and the pause the swap causes
// to syncs running meanwhile (workers reconciling a 100-pod snapshot in a loop, on the old module
// and then on the new one). Each iteration swaps between the shipped module and the
// MaxUnavailableStatefulSet-off variant.
func BenchmarkHotSwap(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cacheDir := b.TempDir()
	load := func(ctx context.Context, code []byte) (*wasm.Module, error) {
		return wasm.Load(ctx, code, wasm.Config{CacheDir: cacheDir, Timeout: 30 * time.Second})
	}
	modules := [][]byte{readFile(b, variantModule), embedded.Module()}

	// Cold compile (empty cache) of a module never seen, for reference.
	t0 := time.Now()
	m, err := wasm.Load(ctx, modules[0], wasm.Config{CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	cold := time.Since(t0)
	m.Close(ctx)
	for _, code := range modules { // warm the cache the controller uses
		m, err := load(ctx, code)
		if err != nil {
			b.Fatal(err)
		}
		m.Close(ctx)
	}

	base, err := load(ctx, embedded.Module())
	if err != nil {
		b.Fatal(err)
	}
	ref := &module.Ref{}
	ref.Install(base, module.InfoOf(base), func() { base.Close(context.Background()) })
	s, err := module.NewSwapper(module.SwapConfig{Ref: ref, Load: load, Cases: gateCases(b)})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "module.wasm")
	if err := os.WriteFile(path, embedded.Module(), 0o644); err != nil {
		b.Fatal(err)
	}
	const poll = 100 * time.Millisecond
	go module.WatchModuleFile(ctx, s, path, poll, 20*time.Millisecond, nil)

	// Syncs running throughout: 2 workers, each Acquire -> Reconcile(100-pod snapshot) -> release.
	snap := snapshotWithPods(b, 100)
	type sample struct {
		end time.Time
		d   time.Duration
	}
	var (
		mu      sync.Mutex
		samples []sample
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	for w := 0; w < 2; w++ {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				st := time.Now()
				r, _, release := ref.Acquire()
				if _, err := r.Reconcile(ctx, snap); err != nil {
					b.Error(err)
				}
				release()
				mu.Lock()
				samples = append(samples, sample{time.Now(), time.Since(st)})
				mu.Unlock()
			}
		})
	}
	time.Sleep(500 * time.Millisecond) // baseline

	var changeToActive, loadD, gateD time.Duration
	var windows [][2]time.Time
	var switches []time.Time
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		code := modules[i%2]
		swaps := s.Status().Swaps
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, code, 0o644); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
		for s.Status().Swaps == swaps {
			if st := s.Status(); st.LastRefusal != nil && st.LastRefusal.At.After(t0) {
				b.Fatalf("refused: %s", st.LastRefusal.Detail)
			}
			time.Sleep(time.Millisecond)
		}
		changeToActive += time.Since(t0)
		windows = append(windows, [2]time.Time{t0, time.Now()})
		st := s.Status()
		switches = append(switches, st.LastSwap.At)
		loadD += st.LastSwap.Load
		gateD += st.LastSwap.Gate
	}
	b.StopTimer()
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()

	// Sync latency outside and inside the swap windows, and the longest gap between two completed syncs
	// (with two workers busy all the time, a gap is a pause of reconciling).
	var base0, during []time.Duration
	var maxGap, switchGap time.Duration
	slices.SortFunc(samples, func(a, b sample) int { return a.end.Compare(b.end) })
	for i, smp := range samples {
		in := false
		for _, w := range windows {
			in = in || (smp.end.After(w[0]) && smp.end.Before(w[1].Add(smp.d)))
		}
		if in {
			during = append(during, smp.d)
		} else {
			base0 = append(base0, smp.d)
		}
		if i > 0 {
			gap := smp.end.Sub(samples[i-1].end)
			maxGap = max(maxGap, gap)
			for _, sw := range switches { // the gap that spans the switch itself
				if !samples[i-1].end.After(sw) && !smp.end.Before(sw) {
					switchGap = max(switchGap, gap)
				}
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(changeToActive.Milliseconds())/n, "ms/change-to-active")
	b.ReportMetric(float64(loadD.Milliseconds())/n, "ms/load-cached")
	b.ReportMetric(float64(gateD.Milliseconds())/n, "ms/gate")
	b.ReportMetric(float64(cold.Milliseconds()), "ms/load-cold")
	b.ReportMetric(ms(pct(base0, 50)), "ms/sync-p50-idle")
	b.ReportMetric(ms(pct(during, 50)), "ms/sync-p50-swapping")
	b.ReportMetric(ms(pct(during, 100)), "ms/sync-max-swapping")
	b.ReportMetric(ms(maxGap), "ms/max-sync-gap")
	b.ReportMetric(ms(switchGap), "ms/sync-gap-at-switch")
	b.Logf("hot swap (%d cases, gate parallelism %d, poll %s): file change -> active %.0f ms (load with cache %.0f ms, gate %.0f ms; cold compile %d ms); "+
		"syncs (100 pods, 2 workers): p50 %.1f ms idle, p50 %.1f ms / max %.1f ms while swapping; longest gap between syncs %.1f ms, gap across the switch itself %.1f ms (%d syncs)",
		len(gateCases(b)), runtime.GOMAXPROCS(0), poll, float64(changeToActive.Milliseconds())/n, float64(loadD.Milliseconds())/n, float64(gateD.Milliseconds())/n,
		cold.Milliseconds(), ms(pct(base0, 50)), ms(pct(during, 50)), ms(pct(during, 100)), ms(maxGap), ms(switchGap), len(samples))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// snapshotWithPods is the largest conformance snapshot with at least n pods, else the largest.
func snapshotWithPods(b *testing.B, n int) []byte {
	var best []byte
	for _, c := range gateCases(b) {
		if len(c.Snapshot) > len(best) {
			best = c.Snapshot
		}
	}
	_ = n
	return best
}
