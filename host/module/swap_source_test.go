package module

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// The module ConfigMap's policies: NAME.policy.wasm with its NAME.policy.fixtures.json; other keys are not.
func TestSuppliedPoliciesOfTheModuleConfigMap(t *testing.T) {
	cm := &corev1.ConfigMap{
		BinaryData: map[string][]byte{"ordinal.wasm": []byte("active"), "extended2.wasm": []byte("module"),
			"db-gate.policy.wasm": []byte("policy"), "Bad.policy.wasm": []byte("x"), "lone.policy.wasm": []byte("y")},
		Data: map[string]string{"db-gate.policy.fixtures.json": "[]"},
	}
	got := SuppliedPolicies(cm)
	if len(got) != 2 || string(got["db-gate"].Code) != "policy" || string(got["db-gate"].Fixtures) != "[]" ||
		string(got["lone"].Code) != "y" || got["lone"].Fixtures != nil {
		t.Fatalf("supplied policies %+v", got)
	}
	if _, ok := SuppliedModules(cm, "ordinal.wasm")["db-gate.policy"]; ok {
		t.Fatal("a policy supplied as a module")
	}
}

// A module file whose check ran out of time is checked again once wasm.RecheckAfter has passed on the
// swapper's clock, though the file never changes: the watch offers its bytes again when the swapper says the
// check is due (before, an unchanged file was never offered again, and the module stayed refused).
func TestWatchModuleFileRechecksATimedOutModule(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := filepath.Join(t.TempDir(), "module.wasm")
	if err := os.WriteFile(path, embedded.Module(), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := &timingOutFirst{}
	load := c.check
	ref := &Ref{}
	t.Cleanup(func() { ref.Install(nil, Info{}, nil) })
	s, err := NewSwapper(SwapConfig{Ref: ref, Load: load, SkipGate: true, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	go WatchModuleFile(ctx, s, path, 10*time.Millisecond, time.Millisecond, nil)
	waitStatus := func(what string, cond func(SwapStatus) bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute) // a positive signal awaited, never a pause
		for !cond(s.Status()) {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s: status %+v", what, s.Status())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitStatus("the timed-out check", func(st SwapStatus) bool { return st.Refusals == 1 })
	if s.RecheckDue() {
		t.Fatal("a check is due again at once; want it due only after wasm.RecheckAfter")
	}
	mu.Lock()
	now = now.Add(wasm.RecheckAfter)
	mu.Unlock()
	waitStatus("the unchanged file checked again and made active", func(st SwapStatus) bool { return st.Swaps == 1 })
	if s.RecheckDue() {
		t.Error("a check is due after the module became active")
	}
	if n := c.count("\x00asm"); n != 2 {
		t.Errorf("%d checks, want 2", n)
	}
}
