package policy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/wasm"
)

// flaky is a policy whose next answers the test decides: a timeout of its own, or an answer.
type flaky struct {
	calls   int
	timeout bool
}

func (f *flaky) Name() string      { return "flaky" }
func (f *flaky) Wants(string) bool { return false }
func (f *flaky) Evaluate(ctx context.Context, _ []byte) ([]byte, error) {
	f.calls++
	if f.timeout {
		return nil, &wasm.Error{Kind: wasm.ErrTimeout, Op: "evaluate", Msg: "exceeded 2s timeout"}
	}
	return []byte(`{"abi":1,"holds":[]}`), nil
}

// Issue 29: a looping policy cost its timeout on every sync. After a timeout it is not asked for 5 s,
// then 10 s, ... up to 5 minutes (a failure at once, holding nothing, saying until when); an answer resets
// it; a caller's own deadline never counts against the policy.
func TestALoopingPolicyIsNotAskedAgainAtOnce(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	f := &flaky{timeout: true}
	b := &breaker{Module: f, now: func() time.Time { return now }}
	ctx := context.Background()
	ask := func() error { _, err := b.Evaluate(ctx, nil); return err }

	if err := ask(); !errors.Is(err, wasm.ErrTimeout) || f.calls != 1 {
		t.Fatalf("first call: %v (%d calls)", err, f.calls)
	}
	err := ask()
	if !errors.Is(err, ErrSkipped) || f.calls != 1 || !strings.Contains(err.Error(), "not asked again until 2026-11-26T10:00:05Z") {
		t.Fatalf("within 5 s of the timeout: %v (%d calls)", err, f.calls)
	}
	now = now.Add(5 * time.Second)
	if err := ask(); !errors.Is(err, wasm.ErrTimeout) || f.calls != 2 {
		t.Fatalf("after the pause: %v (%d calls)", err, f.calls)
	}
	now = now.Add(9 * time.Second) // the second pause is 10 s
	if err := ask(); !errors.Is(err, ErrSkipped) || f.calls != 2 {
		t.Fatalf("9 s into the 10 s pause: %v (%d calls)", err, f.calls)
	}
	for i := 0; i < 20; i++ { // doubling, bounded
		now = now.Add(time.Hour)
		_ = ask()
	}
	if d := b.until.Sub(now); d != breakerMax {
		t.Errorf("pause after many timeouts %s, want %s", d, breakerMax)
	}
	f.timeout = false
	now = now.Add(breakerMax)
	if err := ask(); err != nil {
		t.Fatalf("an answer after the pause: %v", err)
	}
	f.timeout = true
	if err := ask(); !errors.Is(err, wasm.ErrTimeout) {
		t.Fatal(err)
	}
	if d := b.until.Sub(now); d != breakerFirst {
		t.Errorf("after an answer, a timeout pauses %s again, want %s (the count starts over)", d, breakerFirst)
	}

	// a caller whose deadline has passed: not the policy's timeout
	now = now.Add(time.Hour)
	c := &breaker{Module: f, now: func() time.Time { return now }}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Evaluate(done, nil); !errors.Is(err, wasm.ErrTimeout) {
		t.Fatal(err)
	}
	if _, err := c.Evaluate(ctx, nil); errors.Is(err, ErrSkipped) {
		t.Errorf("a caller's deadline paused the policy: %v", err)
	}
}

// A replay's breaker (OnClock) is its own, on the replay's clock: the pause of the breaker Registry.Get put
// the policy behind (the live syncs', on the process's clock) does not skip the replay's calls, the replay's
// pauses run on its clock, and its timeouts do not count against the live breaker.
func TestOnClockIsTheReplaysOwnBreaker(t *testing.T) {
	ctx := context.Background()
	wall := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	f := &flaky{timeout: true}
	live := &breaker{Module: f, now: func() time.Time { return wall }}
	if _, err := live.Evaluate(ctx, nil); !errors.Is(err, wasm.ErrTimeout) {
		t.Fatalf("live call: %v", err)
	}
	virtual := time.Date(2020, 1, 4, 10, 0, 0, 0, time.UTC)
	replayed := OnClock(live, func() time.Time { return virtual })
	if _, err := replayed.Evaluate(ctx, nil); !errors.Is(err, wasm.ErrTimeout) || f.calls != 2 {
		t.Fatalf("the replay's first call, with the live breaker paused: %v (%d calls, want 2)", err, f.calls)
	}
	_, err := replayed.Evaluate(ctx, nil)
	if want := "not asked again until 2020-01-04T10:00:05Z (in 5s)"; !errors.Is(err, ErrSkipped) || !strings.Contains(err.Error(), want) || f.calls != 2 {
		t.Fatalf("the replay's second call at once: %v (%d calls), want skipped, %q", err, f.calls, want)
	}
	virtual = virtual.Add(5 * time.Second)
	if _, err := replayed.Evaluate(ctx, nil); !errors.Is(err, wasm.ErrTimeout) || f.calls != 3 {
		t.Fatalf("the replay's call 5s later on its clock: %v (%d calls, want 3)", err, f.calls)
	}
	if live.timeouts != 1 {
		t.Errorf("the live breaker counts %d timeouts in a row, want its own 1", live.timeouts)
	}
}
