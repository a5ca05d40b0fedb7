package module

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeReconciler counts calls and can block them.
type fakeReconciler struct {
	name    string
	calls   atomic.Int64
	block   chan struct{}
	entered chan struct{}
}

func (f *fakeReconciler) Reconcile(ctx context.Context, _ []byte) ([]byte, error) {
	f.calls.Add(1)
	if f.entered != nil {
		f.entered <- struct{}{}
	}
	if f.block != nil {
		<-f.block
	}
	return []byte(`{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[]}`), nil
}

// A sync in flight finishes on the module it started with; the swapped-out module is released only
// after that sync is done, exactly once; the next sync gets the new
func TestModuleRefSwapBetweenSyncs(t *testing.T) {
	ref := &Ref{}
	old := &fakeReconciler{name: "old", block: make(chan struct{}), entered: make(chan struct{}, 1)}
	var released atomic.Int64
	ref.Install(old, Info{Digest: "sha256:old"}, func() { released.Add(1) })

	done := make(chan struct{})
	go func() { // a sync in flight on the old module
		r, info, release := ref.Acquire()
		defer release()
		if info.Digest != "sha256:old" {
			t.Errorf("sync got %s", info.Digest)
		}
		_, _ = r.Reconcile(context.Background(), nil)
		close(done)
	}()
	<-old.entered
	nu := &fakeReconciler{name: "new"}
	ref.Install(nu, Info{Digest: "sha256:new"}, nil)
	if n := released.Load(); n != 0 {
		t.Fatalf("old module released while a sync still runs on it")
	}
	r, info, release := ref.Acquire()
	if r != nu || info.Digest != "sha256:new" {
		t.Fatalf("a sync after the swap got %v", info.Digest)
	}
	release()
	release() // idempotent
	close(old.block)
	<-done
	if n := released.Load(); n != 1 {
		t.Fatalf("old module released %d times after its last sync, want 1", n)
	}
	if old.calls.Load() != 1 || nu.calls.Load() != 0 {
		t.Fatalf("calls: old %d new %d", old.calls.Load(), nu.calls.Load())
	}
}

// Under concurrent syncs and swaps, every module is released exactly once, never while in use.
func TestModuleRefConcurrentSwaps(t *testing.T) {
	ref := &Ref{}
	type mod struct {
		inUse    atomic.Int64
		released atomic.Bool
	}
	var mods []*mod
	var mu sync.Mutex
	install := func() {
		m := &mod{}
		mu.Lock()
		mods = append(mods, m)
		mu.Unlock()
		ref.Install(&fakeReconciler{}, Info{}, func() {
			if m.inUse.Load() != 0 {
				t.Errorf("released while in use")
			}
			if m.released.Swap(true) {
				t.Errorf("released twice")
			}
		})
	}
	install()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _, release := ref.Acquire()
				release()
			}
		})
	}
	for i := 0; i < 200; i++ {
		install()
	}
	close(stop)
	wg.Wait()
	install()
	for i, m := range mods[:len(mods)-1] {
		if !m.released.Load() {
			t.Errorf("module %d never released", i)
		}
	}
}
