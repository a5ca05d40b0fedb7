package wasm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/wasm"
)

// The test modules (testdata/*/main.go) answer any input with a fixed empty plan,
// and misbehave only when the input contains "misbehave".
var (
	misbehave = []byte(`{"abi":1,"misbehave":true}`)
	behave    = []byte(`{"abi":1}`)
)

// Timeouts here bound misbehaving modules; no assertion depends on timing.
const boundTimeout = 500 * time.Millisecond

// loadCompiled loads a test module whose Config.Timeout is short, compiled first under the default
// timeout into a compilation cache of the test's own: Load's compile is bounded by the timeout too, and
// under -race on a loaded machine it can take longer than a bound meant for a looping call.
func loadCompiled(t *testing.T, name string, cfg wasm.Config) *wasm.Module {
	t.Helper()
	cfg.CacheDir = t.TempDir()
	warm := cfg
	warm.Timeout = 0
	loadTestModule(t, name, warm).Close(context.Background())
	return loadTestModule(t, name, cfg)
}

func TestMisbehavingModules(t *testing.T) {
	cases := []struct {
		module   string
		cfg      wasm.Config
		kind     error
		contains []string
	}{
		{"trap", wasm.Config{}, wasm.ErrTrap,
			[]string{"module trapped: unreachable", "panic: test module asked to misbehave"}},
		// Stopped by the timeout, or by the work budget when a garbage collection waiting for the
		// looping guest keeps the timer from firing (both are ErrTimeout; TestWorkBudget pins the latter).
		// The healthy calls after it are bounded by the same timeout: a fresh instance each.
		{"loop", wasm.Config{Timeout: boundTimeout}, wasm.ErrTimeout,
			[]string{"exceeded"}},
		{"oom", wasm.Config{MemoryLimitPages: 256}, wasm.ErrOutOfMemory,
			[]string{"out of memory"}},
		{"hostcall", wasm.Config{}, wasm.ErrTrap,
			[]string{"module called extism:host/env.input_length, which the direct path does not provide"}},
	}
	for _, tc := range cases {
		t.Run(tc.module, func(t *testing.T) {
			// One instance, so the good call after the bad one must use a new instance.
			tc.cfg.MaxInstances = 1
			if tc.cfg.Timeout == 0 {
				tc.cfg.Timeout = 30 * time.Second // a bound, in case the module hangs
			}
			m := loadCompiled(t, tc.module, tc.cfg)
			ctx := context.Background()

			_, st, err := m.ReconcileWithStats(ctx, misbehave)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("got %v, want kind %v", err, tc.kind)
			}
			var werr *wasm.Error
			if !errors.As(err, &werr) || werr.Op != "reconcile" || werr.Path != "direct" {
				t.Errorf("error %#v lacks op/path", err)
			}
			for _, s := range tc.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if !st.Recycled {
				t.Error("failed instance was not recycled")
			}

			for i := range 3 {
				out, st, err := m.ReconcileWithStats(ctx, behave)
				if err != nil {
					t.Fatalf("call %d after the failure: %v", i, err)
				}
				decodePlan(t, out)
				if i == 0 && !st.FreshInstance {
					t.Error("the call after a failure reused the failed instance")
				}
				if i > 0 && st.FreshInstance {
					t.Error("a healthy instance was not reused")
				}
			}
			s := m.Stats().Direct
			if s.DiscardedAfterError != 1 || s.Instantiated != 2 || s.Calls != 4 {
				t.Errorf("stats %+v, want 1 discarded, 2 instantiated, 4 calls", s)
			}
		})
	}
}

func TestCallerDeadlineAndCancel(t *testing.T) {
	m := loadTestModule(t, "loop", wasm.Config{Timeout: time.Minute, MaxInstances: 1})

	ctx, cancel := context.WithTimeout(context.Background(), boundTimeout)
	defer cancel()
	_, err := m.Reconcile(ctx, misbehave)
	if !errors.Is(err, wasm.ErrTimeout) || !strings.Contains(err.Error(), "caller's deadline") {
		t.Errorf("caller deadline: got %v", err)
	}

	// A cancel during the call ends it as canceled. The canceller is a goroutine: on a starved machine it
	// may not run before the call's work budget runs out, and then the call ends on its budget before any
	// cancel, rightly; such a round proves nothing and is tried again.
	for round := 1; ; round++ {
		ctx, cancel := context.WithCancel(context.Background())
		var called atomic.Bool
		go func() { time.Sleep(50 * time.Millisecond); called.Store(true); cancel() }()
		_, err = m.Reconcile(ctx, misbehave)
		cancel()
		if errors.Is(err, wasm.ErrCanceled) {
			break
		}
		if called.Load() || !strings.Contains(fmt.Sprint(err), "work budget") || round == 10 {
			t.Errorf("cancel (round %d): got %v", round, err)
			break
		}
	}

	if _, err := m.Reconcile(context.Background(), behave); err != nil {
		t.Errorf("after cancel: %v", err)
	}
}

func TestLoadRefusesBadModules(t *testing.T) {
	cases := []struct {
		name     string
		wasm     []byte
		kind     error
		contains string
	}{
		{"abi2", testModule(t, "abi2"), wasm.ErrUnsupportedABI, `module "ordinal-test-abi2" speaks ABI 2; this host speaks ABI 1`},
		{"noexports", testModule(t, "noexports"), wasm.ErrBadModule, "missing export ordinal_alloc; missing export ordinal_reconcile; missing export ordinal_describe"},
		{"not wasm", []byte("#!/bin/sh\necho hi\n"), wasm.ErrBadModule, "not a valid wasm module"},
		{"empty", nil, wasm.ErrBadModule, "not a valid wasm module"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := wasm.Load(context.Background(), tc.wasm, wasm.Config{})
			if err == nil {
				m.Close(context.Background())
				t.Fatal("Load accepted the module")
			}
			if !errors.Is(err, tc.kind) || !errors.Is(err, wasm.ErrBadModule) {
				t.Errorf("got %v, want kind %v (and ErrBadModule)", err, tc.kind)
			}
			if !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %q does not say %q", err, tc.contains)
			}
		})
	}
}

func TestSnapshotLargerThanMemoryLimit(t *testing.T) {
	m := loadTestModule(t, "trap", wasm.Config{MemoryLimitPages: 32}) // 2 MiB
	big := make([]byte, 3<<20)
	_, err := m.Reconcile(context.Background(), big)
	if !errors.Is(err, wasm.ErrOutOfMemory) || !strings.Contains(err.Error(), "cannot fit in the 2 MiB guest memory limit") {
		t.Errorf("got %v", err)
	}
	if s := m.Stats().Direct; s.DiscardedAfterError != 0 {
		t.Errorf("an oversized snapshot cost an instance: %+v", s)
	}
}

func TestRecycling(t *testing.T) {
	ctx := context.Background()
	t.Run("fresh instance per call", func(t *testing.T) {
		m := loadTestModule(t, "trap", wasm.Config{MaxCallsPerInstance: 1, MaxInstances: 1})
		for range 3 {
			if _, err := m.Reconcile(ctx, behave); err != nil {
				t.Fatal(err)
			}
		}
		// Load's describe instance served call 1 (its first reconcile); 2 more followed.
		if s := m.Stats().Direct; s.Instantiated != 3 || s.RecycledForCalls != 3 {
			t.Errorf("stats %+v", s)
		}
	})
	// An instance above RecycleAbovePages is kept while it has at most doubled since its first call and has
	// room under MemoryLimitPages for another call like it (a session's instance of a large set); beyond
	// that it is recycled.
	t.Run("memory above threshold", func(t *testing.T) {
		snap := rollingUpdateSnapshot(100)
		m := loadGuest(t, wasm.Config{RecycleAbovePages: 4, MaxInstances: 1})
		_, first, err := m.ReconcileWithStats(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		if first.Recycled || first.MemoryPages <= 4 {
			t.Fatalf("first call %+v: want kept with more than 4 pages", first)
		}
		// whole snapshots again: the leaking guest grows by each, so it passes twice its first size
		var last wasm.CallStats
		for i := 0; i < 8 && !last.Recycled; i++ {
			if _, last, err = m.ReconcileWithStats(ctx, snap); err != nil {
				t.Fatal(err)
			}
		}
		if !last.Recycled || last.MemoryPages <= 2*first.MemoryPages {
			t.Errorf("last call %+v: want recycled above %d pages", last, 2*first.MemoryPages)
		}
		if s := m.Stats().Direct; s.RecycledForMemory != 1 {
			t.Errorf("stats %+v", s)
		}
		// no room for another call like the first: recycled at once
		tight := loadGuest(t, wasm.Config{RecycleAbovePages: 4, MaxInstances: 1, MemoryLimitPages: first.MemoryPages + first.MemoryPages/2})
		if _, st, err := tight.ReconcileWithStats(ctx, snap); err != nil || !st.Recycled {
			t.Errorf("under a tight memory limit: %+v, %v: want recycled", st, err)
		}
	})
}

func TestExtismPathNeedsPDKExports(t *testing.T) {
	m := loadTestModule(t, "trap", wasm.Config{})
	_, err := m.ReconcileExtism(context.Background(), behave)
	if !errors.Is(err, wasm.ErrBadModule) || !strings.Contains(err.Error(), `no Extism export "describe"`) {
		t.Errorf("got %v", err)
	}
}

func TestClosedModule(t *testing.T) {
	m, err := wasm.Load(context.Background(), testModule(t, "trap"), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m.Close(context.Background())
	if _, err := m.Reconcile(context.Background(), behave); !errors.Is(err, wasm.ErrClosed) {
		t.Errorf("direct after Close: %v", err)
	}
	if _, err := m.ReconcileExtism(context.Background(), behave); !errors.Is(err, wasm.ErrClosed) {
		t.Errorf("extism after Close: %v", err)
	}
}

// The work budget ends a looping call on its own, with no timer: a guest's machine code cannot be
// preempted, so a garbage collection that waits for it would otherwise keep the timeout from firing.
func TestWorkBudget(t *testing.T) {
	m := loadTestModule(t, "loop", wasm.Config{Timeout: time.Hour, WorkBudget: 1 << 20, MaxInstances: 1})
	_, err := m.Reconcile(context.Background(), misbehave)
	if !errors.Is(err, wasm.ErrTimeout) || !strings.Contains(err.Error(), "work budget of 1048576") {
		t.Fatalf("got %v, want a timeout naming the work budget", err)
	}
	// The spent instance is replaced; a call within the budget runs.
	if _, err := m.Reconcile(context.Background(), behave); err != nil {
		t.Fatalf("good call after a spent budget: %v", err)
	}
	// The default budget is far above what a large reconcile uses.
	big := load(t, guestWasm(t), wasm.Config{})
	if _, err := big.Reconcile(context.Background(), benchSnapshot(5000)); err != nil {
		t.Fatalf("5000-pod reconcile within the default budget: %v", err)
	}
}
