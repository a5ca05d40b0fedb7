package policy

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/wasm"
)

// A supplied policy whose gate ran out of time (its compile on a loaded machine) is refused for
// wasm.RecheckAfter, then gated again and used (wasm.Refusal, as host/module's registry does). The clock is
// the registry's, set by the test.
func TestATimedOutGateIsRetried(t *testing.T) {
	ctx := context.Background()
	code, err := os.ReadFile("../wasm/testdata/badpolicy.wasm") // the policy "bad": holds nothing for plain input
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	loads := 0
	r := NewRegistry(func(ctx context.Context, code []byte) (*wasm.Policy, error) {
		if loads++; loads == 1 {
			return nil, &wasm.Error{Kind: wasm.ErrTimeout, Op: "load", Msg: "compile exceeded the 2s timeout"}
		}
		return wasm.LoadPolicy(ctx, code, wasm.Config{})
	}, nil)
	r.now = func() time.Time { return now }
	t.Cleanup(r.Close)
	r.Supply(map[string]Supplied{"bad": {Code: code, Fixtures: []byte(`[{"input":{"abi":1},"answer":{"abi":1,"holds":[]}}]`)}})
	if _, err := r.Get(ctx, "bad"); !errors.Is(err, ErrRefused) || !errors.Is(err, wasm.ErrTimeout) {
		t.Fatalf("%v, want the timeout's refusal", err)
	}
	now = now.Add(wasm.RecheckAfter - time.Second)
	if _, err := r.Get(ctx, "bad"); !errors.Is(err, ErrRefused) || loads != 1 {
		t.Fatalf("before RecheckAfter: %v after %d loads, want the refusal, not another gate", err, loads)
	}
	now = now.Add(time.Second)
	if p, err := r.Get(ctx, "bad"); err != nil || p.Name() != "bad" || loads != 2 {
		t.Fatalf("after RecheckAfter: %v after %d loads, want the policy gated again and used", err, loads)
	}
}
