package policy_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/policies"
)

func newRegistry(t *testing.T) *policy.Registry {
	t.Helper()
	r := policy.NewRegistry(func(ctx context.Context, code []byte) (*wasm.Policy, error) {
		return wasm.LoadPolicy(ctx, code, wasm.Config{})
	}, policies.Builtin())
	t.Cleanup(r.Close)
	return r
}

// A supplied policy is used only once it passes its own fixtures under the name it describes; a refusal
// stands until the supply changes, and a change syncs the sets naming policies again (OnSupply).
func TestSuppliedPoliciesAreGatedOnTheirFixtures(t *testing.T) {
	ctx := context.Background()
	code, err := os.ReadFile("../wasm/testdata/badpolicy.wasm") // the policy "bad": holds nothing for plain input
	if err != nil {
		t.Fatal(err)
	}
	r := newRegistry(t)
	supplies := 0
	r.OnSupply(func() { supplies++ })
	good := `[{"description":"nothing held","input":{"abi":1},"answer":{"abi":1,"holds":[]}}]`
	wrong := `[{"input":{"abi":1},"answer":{"abi":1,"holds":[{"action":0,"reason":"R","message":"m"}]}}]`
	for _, c := range []struct {
		name, fixtures, want string
	}{
		{"bad", "", "comes with its fixtures"},
		{"bad", wrong, "fixture 0"},
		{"other", good, `supplied as "other" and describes itself as "bad"`},
	} {
		r.Supply(map[string]policy.Supplied{c.name: {Code: code, Fixtures: []byte(c.fixtures)}})
		if _, err := r.Get(ctx, c.name); !errors.Is(err, policy.ErrRefused) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with fixtures %q: %v, want a refusal saying %q", c.name, c.fixtures, err, c.want)
		}
	}
	r.Supply(map[string]policy.Supplied{"bad": {Code: code, Fixtures: []byte(good)}})
	p, err := r.Get(ctx, "bad")
	if err != nil || p.Name() != "bad" {
		t.Fatalf("the gated policy: %v", err)
	}
	if supplies != 4 {
		t.Errorf("OnSupply called %d times for 4 changes", supplies)
	}
	r.Supply(map[string]policy.Supplied{"bad": {Code: code, Fixtures: []byte(good)}})
	if supplies != 4 {
		t.Error("OnSupply called for a supply that changed nothing")
	}
	// a shipped policy's name is not replaced by a supplied one
	r.Supply(map[string]policy.Supplied{"window": {Code: code, Fixtures: []byte(good)}})
	if p, err := r.Get(ctx, "window"); err != nil || p.Name() != "window" {
		t.Errorf("the shipped window: %v", err)
	}
	if _, err := r.Get(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "shipped: handoff, pdb, window") {
		t.Errorf("an unknown policy: %v", err)
	}
}

// Regression (issue 32, finding 1): a supplied policy was gated on its first caller's context, holding the
// registry's lock, so a webhook review's deadline was cached as the policy's refusal until its keys
// changed. The gate runs on its own context: a caller already past its deadline is told the policy is
// still being checked, nothing is refused, and the next caller gets the policy from that one gate.
func TestCallersDeadlineIsNeverCachedAsAPolicyRefusal(t *testing.T) {
	code, err := os.ReadFile("../wasm/testdata/badpolicy.wasm")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var loads atomic.Int32
	r := policy.NewRegistry(func(ctx context.Context, code []byte) (*wasm.Policy, error) {
		loads.Add(1)
		select { // a gate on the caller's context would load (and fail) at once
		case <-release:
		case <-ctx.Done():
		}
		return wasm.LoadPolicy(ctx, code, wasm.Config{})
	}, nil)
	t.Cleanup(r.Close)
	r.Supply(map[string]policy.Supplied{"bad": {Code: code,
		Fixtures: []byte(`[{"description":"nothing held","input":{"abi":1},"answer":{"abi":1,"holds":[]}}]`)}})
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel()
	_, err = r.Get(expired, "bad")
	if !errors.Is(err, wasm.ErrStillChecking) || errors.Is(err, policy.ErrRefused) || !strings.Contains(err.Error(), `policy "bad" is still being checked`) {
		t.Fatalf("a caller past its deadline: %v, want the policy still being checked", err)
	}
	close(release)
	if p, err := r.Get(context.Background(), "bad"); err != nil || p.Name() != "bad" {
		t.Fatalf("the next caller: %v", err)
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("%d gate runs, want the one the first caller started", n)
	}
}
