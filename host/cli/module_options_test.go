package cli

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A command's steps share one load of the module (commandModules): judging a snapshot, settling a scenario
// and previewing the edit loaded it three times before, and `ordinal test` once per test. A test's own
// policies are loaded beside the command's module (withPolicyFiles); once closed, nothing is loaded again.
func TestCommandModulesLoadOnce(t *testing.T) {
	ctx := context.Background()
	mods := (&moduleOptions{memoryLimitMB: 64, timeout: 30 * time.Second}).commandModules()
	m1, _, err := mods.reconciler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, err := mods.all(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if all.module != m1 || all.pols == nil || all.named == nil {
		t.Fatalf("all() gave module %p (reconciler's %p), policies %v", all.module, m1, all.pols)
	}
	child := mods.withPolicyFiles([]string{"no-such-policy.wasm"})
	if m, _, err := child.reconciler(ctx); err != nil || m != m1 {
		t.Errorf("a test's modules: module %p (%v), want the command's %p", m, err, m1)
	}
	if _, err := child.all(ctx); err == nil {
		t.Error("a test's policy file that does not exist was not refused")
	}
	child.close()
	if m, _, err := mods.reconciler(ctx); err != nil || m != m1 {
		t.Errorf("closing a test's modules closed the command's: %p %v", m, err)
	}
	mods.close()
	if _, _, err := mods.reconciler(ctx); !errors.Is(err, errClosedModules) {
		t.Errorf("after close: %v, want errClosedModules (nothing loaded again)", err)
	}
	if _, err := mods.all(ctx); !errors.Is(err, errClosedModules) {
		t.Errorf("after close: %v, want errClosedModules", err)
	}
	mods.close() // a second close does nothing
}
