package conformance

import (
	"context"
	"errors"
	"testing"
)

// A gate whose failures are all reconcile's errors wraps the first (a timeout stays a timeout for
// errors.Is: no verdict on the module); one with a plan's difference is a verdict and wraps nothing.
func TestGateErrWrapsACallErrorNotADifference(t *testing.T) {
	errSlow := errors.New("timeout")
	cases := []Case{{Name: "a", Snapshot: []byte(`{}`), Plan: []byte(`{"actions":[]}`)}}
	slow := func(context.Context, []byte) ([]byte, error) { return nil, errSlow }
	res := Gate(context.Background(), cases, slow, 1, 1)
	if err := res.Err(); !errors.Is(err, errSlow) || err.Error() != res.String() {
		t.Errorf("a case out of time: %v, want an error that wraps it, worded as %q", err, res.String())
	}
	differs := func(context.Context, []byte) ([]byte, error) { return []byte(`{"actions":[{"verb":"delete"}]}`), nil }
	res = Gate(context.Background(), cases, differs, 1, 1)
	if err := res.Err(); err == nil || errors.Unwrap(err) != nil {
		t.Errorf("a plan's difference: %v (wrapping %v), want a verdict wrapping nothing", err, errors.Unwrap(err))
	}
	ok := func(context.Context, []byte) ([]byte, error) { return []byte(`{"actions":[]}`), nil }
	if res := Gate(context.Background(), cases, ok, 1, 1); res.Err() != nil {
		t.Errorf("every case passed: %v", res.Err())
	}
}
