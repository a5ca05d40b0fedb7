package plan_test

import (
	"context"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/plan"
)

// POLICY.md section 4: "The host records what a sync held in the set's status, as the condition PolicyHold".
// Without replans a held write stops the sync there, and Status is never asked: a set of a reconcile module
// without writeFailures is never told in its status what its policies hold, however long they hold it.
func TestReviewAHoldThatStopsTheSyncIsRecorded(t *testing.T) {
	scope, first, failures, _ := refusedCase(t, "pod-states/parallel-steady-failed-web-1", "pod-states.parallel-steady-failed-web-1.first")
	i := failures[0].Action
	judge := func(context.Context, *abi.Plan, int) map[int]plan.Hold {
		return map[int]plan.Hold{i: {Policy: "handoff", Reason: "R", Message: "held"}}
	}
	var told [][]plan.HeldWrite
	status := func(a *abi.Action, held []plan.HeldWrite) *abi.Action {
		told = append(told, held)
		return nil
	}
	_, _ = plan.Apply(context.Background(), scope, first, &fakeWriter{}, plan.Options{Judge: judge, Set: "web", Status: status})
	for _, h := range told {
		if len(h) > 0 {
			return
		}
	}
	t.Fatalf("Status was told %v: the held write never reaches the set's status", told)
}
