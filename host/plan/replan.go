package plan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
)

// MaxReplans is how many refusals of one sync go back to the module (the ABI allows 64): the module places
// each by planning again from the start, and TinyGo's leaking GC keeps every pass, so a Parallel burst of
// thousands of refused creates must not ask for dozens (a 1000-replica set ran a module out of memory at
// 51). After that many the sync stops at the refusal, as without replans, and the next one plans again.
const MaxReplans = 8

// maxFailureMessage bounds the API server's message a write failure carries (kube-apiserver's are short).
const maxFailureMessage = 4096

// replanAfter reports the refusal of action i of cur to the module and checks its answer: the same sync
// (the actions already issued unchanged, action i carrying the refusal), a plan the firewall allows.
func replanAfter(ctx context.Context, replan Replan, scope *firewall.Scope, cur *abi.Plan, i int, refusal error, failures *[]abi.WriteFailure) (*abi.Plan, error) {
	if len(*failures) >= MaxReplans {
		return nil, fmt.Errorf("more than %d writes of one sync refused: the next sync plans again", MaxReplans)
	}
	f := abi.WriteFailure{Action: i, Reason: string(apierrors.ReasonForError(refusal)), Message: refusal.Error()}
	var st apierrors.APIStatus
	if errors.As(refusal, &st) && st.Status().Message != "" {
		f.Message = st.Status().Message // what client-go's StatusError prints, whatever wraps it here
	}
	if f.Message == "" {
		f.Message = "unknown error"
	}
	if len(f.Message) > maxFailureMessage {
		f.Message = f.Message[:maxFailureMessage] + "..." // it comes back in events and the sync's error
	}
	*failures = append(*failures, f)
	next, err := replan(ctx, *failures)
	if err != nil {
		return nil, err
	}
	if next.Error != nil && next.Error.Code != abi.CodeSyncFailed {
		return nil, fmt.Errorf("the module refused the write failures: %w", next.Error)
	}
	if len(next.Actions) <= i {
		return nil, fmt.Errorf("its plan has %d actions, not the %d already issued", len(next.Actions), i+1)
	}
	for k := 0; k < i; k++ {
		if !sameAction(&cur.Actions[k], &next.Actions[k]) {
			return nil, fmt.Errorf("its plan's action %d is not the one issued", k)
		}
	}
	want := cur.Actions[i]
	want.Error = f.Message
	if !sameAction(&want, &next.Actions[i]) {
		return nil, fmt.Errorf("its plan's action %d is not the refused write with the API server's answer", i)
	}
	if err := firewall.Check(scope, next); err != nil {
		return nil, err
	}
	return next, nil
}

// asPlanned is p with the status writes Status rewrote as the module planned them.
func asPlanned(p *abi.Plan, rewritten map[int][2]abi.Action) *abi.Plan {
	if len(rewritten) == 0 {
		return p
	}
	out := *p
	out.Actions = slices.Clone(p.Actions)
	for k, rw := range rewritten {
		out.Actions[k] = rw[0]
	}
	return &out
}

func sameAction(a, b *abi.Action) bool {
	return a.Verb == b.Verb && a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name &&
		a.PatchType == b.PatchType && a.Error == b.Error && bytes.Equal(a.Object, b.Object) && bytes.Equal(a.Patch, b.Patch)
}
