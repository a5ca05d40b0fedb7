package plan_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/plan"
)

// POLICY.md section 4: "The host records what a sync held in the set's status, as the condition PolicyHold".
// Without replans a held write stops the sync there, and Status is never asked: a set of a reconcile module
// without writeFailures is never told in its status what its policies hold, however long they hold it.
func TestAHoldThatStopsTheSyncIsRecorded(t *testing.T) {
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
	n := len(first.Actions)
	_, _ = plan.Apply(context.Background(), scope, first, &fakeWriter{}, plan.Options{Judge: judge, Set: "web", Status: status})
	if len(first.Actions) != n {
		t.Fatalf("the module's plan has %d actions after Apply, %d before: Apply changed the plan it was given", len(first.Actions), n)
	}
	for _, h := range told {
		if len(h) > 0 {
			return
		}
	}
	t.Fatalf("Status was told %v: the held write never reaches the set's status", told)
}

// The plan's status write, rewritten by Status (the host's PolicyHold condition added), is refused (409: the
// set changed since the snapshot). The refusal goes back to the module, whose new plan carries its own status
// write with the answer, as it planned it, without the host's condition: replanAfter compares that to the
// rewritten write and calls the module's plan "not the refused write", so the sync fails as if the module
// broke the write-failures contract, instead of as the status write's refusal.
func TestARefusedStatusWriteWithTheConditionGoesBackToTheModule(t *testing.T) {
	scope, first := conformanceCase(t, "pod-states/parallel-steady-failed-web-1")
	s := statusWriteIndex(t, first)
	module := *first
	module.Actions = append([]abi.Action(nil), first.Actions...) // the module's own plan, kept to answer the replan
	conflict := apiRefusal(abi.WriteFailure{Reason: "Conflict", Message: `Operation cannot be fulfilled on statefulsets.apps "web": the object has been modified`})
	w := &fakeWriter{answers: map[int]error{s: conflict}}
	status := func(a *abi.Action, held []plan.HeldWrite) *abi.Action {
		if a == nil {
			return nil
		}
		out := *a
		out.Object = []byte(`{"status":{"replicas":3,"conditions":[{"type":"PolicyHold","status":"False","reason":"NothingHeld"}]}}`)
		return &out
	}
	replan := func(_ context.Context, fs []abi.WriteFailure) (*abi.Plan, error) {
		next := module
		next.Actions = append([]abi.Action(nil), module.Actions...)
		next.Actions[s].Error = fs[len(fs)-1].Message
		return &next, nil
	}
	_, err := plan.Apply(context.Background(), scope, first, w, plan.Options{Set: "web", Status: status, Replan: replan})
	if err != nil && strings.Contains(err.Error(), "is not the refused write") {
		t.Fatalf("the status write's refusal came back as a broken replan: %v", err)
	}
}

// The status write Status rewrites is sent and reported as rewritten; the plan Apply was given, the module's
// answer, keeps the module's own write.
func TestStatusRewriteLeavesTheModulesPlanAlone(t *testing.T) {
	scope, first := conformanceCase(t, "pod-states/parallel-steady-failed-web-1")
	s := statusWriteIndex(t, first)
	own := string(first.Actions[s].Object)
	rewritten := json.RawMessage(`{"status":{"replicas":3,"conditions":[{"type":"PolicyHold","status":"False","reason":"NothingHeld"}]}}`)
	status := func(a *abi.Action, _ []plan.HeldWrite) *abi.Action {
		if a == nil {
			return nil
		}
		out := *a
		out.Object = rewritten
		return &out
	}
	res, err := plan.Apply(context.Background(), scope, first, &fakeWriter{}, plan.Options{Set: "web", Status: status})
	if err != nil {
		t.Fatal(err)
	}
	if string(first.Actions[s].Object) != own {
		t.Fatalf("the module's plan was changed: its status write is now %s", first.Actions[s].Object)
	}
	if string(res.Plan.Actions[s].Object) != string(rewritten) {
		t.Fatalf("the plan carried out sent %s, want the rewritten status", res.Plan.Actions[s].Object)
	}
}

// statusWriteIndex is the index of p's (last) status write; the test fails when it has none.
func statusWriteIndex(t *testing.T, p *abi.Plan) int {
	t.Helper()
	s := -1
	for k, a := range p.Actions {
		if a.Verb == abi.VerbUpdateStatus {
			s = k
		}
	}
	if s < 0 {
		t.Fatal("the case's plan writes no status")
	}
	return s
}
