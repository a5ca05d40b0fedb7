package module

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// A candidate whose check ran out of time (a compile on a loaded machine) is no verdict on its bytes:
// offered again once wasm.RecheckAfter has passed, it is checked again and made active; offered before
// then, it is ignored as the registry ignores it. A candidate refused for its content stays refused
// however long it waits. The clock is the swapper's, set by the test.
func TestOfferRechecksATimedOutCandidate(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	c := &timingOutFirst{}
	load := c.check
	ref := &Ref{}
	rec := record.NewFakeRecorder(10)
	s, err := NewSwapper(SwapConfig{Ref: ref, Load: load, SkipGate: true, Recorder: rec, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Install(nil, Info{}, nil) })
	junk, slow := []byte("junk, not wasm"), embedded.Module()

	obj := &corev1.ObjectReference{Kind: "ConfigMap", Namespace: "ns", Name: "module"}
	if swapped, err := s.Offer(ctx, "test", junk, obj); swapped || !errors.Is(err, wasm.ErrBadModule) {
		t.Fatalf("junk: swapped %v, %v; want its refusal", swapped, err)
	}
	now = now.Add(24 * time.Hour)
	if swapped, err := s.Offer(ctx, "test", junk, nil); swapped || err != nil || c.count("junk") != 1 {
		t.Fatalf("junk a day on: swapped %v, %v after %d checks; want it ignored, not checked again", swapped, err, c.count("junk"))
	}

	if swapped, err := s.Offer(ctx, "test", slow, obj); swapped || !errors.Is(err, wasm.ErrTimeout) {
		t.Fatalf("a check out of time: swapped %v, %v; want the timeout", swapped, err)
	}
	if junkEvent, slowEvent := <-rec.Events, <-rec.Events; strings.Contains(junkEvent, "checked again") ||
		!strings.Contains(slowEvent, "out of time, not a verdict: offered again from 2026-11-30T03:01:00Z, it is checked again") {
		t.Errorf("events %q and %q: want only the second to say when the module is checked again", junkEvent, slowEvent)
	}
	now = now.Add(wasm.RecheckAfter - time.Second)
	if swapped, err := s.Offer(ctx, "test", slow, nil); swapped || err != nil || c.count("\x00asm") != 1 {
		t.Fatalf("before RecheckAfter: swapped %v, %v after %d checks; want it ignored", swapped, err, c.count("\x00asm"))
	}
	now = now.Add(time.Second)
	if swapped, err := s.Offer(ctx, "test", slow, nil); !swapped || err != nil || c.count("\x00asm") != 2 {
		t.Fatalf("after RecheckAfter: swapped %v, %v after %d checks; want it checked again and active", swapped, err, c.count("\x00asm"))
	}
	if st := s.Status(); st.Swaps != 1 || st.Refusals != 2 {
		t.Errorf("status: %d swaps, %d refusals; want 1 and 2", st.Swaps, st.Refusals)
	}
}
