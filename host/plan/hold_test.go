package plan_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/plan"
)

// A write a policy holds is never issued: it goes back to the module as kube-apiserver's answer to a write
// an admission webhook denies (403 Forbidden, the hold's message), the module's new plan is carried on, and
// the policies are asked again about the writes after it.
func TestApplyHoldsAWriteAsARefusal(t *testing.T) {
	scope, first, failures, after := refusedCase(t, "pod-states/parallel-steady-failed-web-1", "pod-states.parallel-steady-failed-web-1.first")
	i := failures[0].Action
	if first.Actions[i].Verb != abi.VerbDelete || first.Actions[i].Name != "web-1" {
		t.Fatalf("the case's refused write is %+v, want the delete of web-1", first.Actions[i])
	}
	hold := plan.Hold{Policy: "handoff", Reason: "RoleNotHandedOff", Message: "web-1 is the primary", RetryAfter: time.Minute}
	const refusal = `pods "web-1" is forbidden: policy handoff holds this write: web-1 is the primary`
	var judged []int
	judge := func(_ context.Context, p *abi.Plan, from int) map[int]plan.Hold {
		judged = append(judged, from)
		if from == 0 {
			return map[int]plan.Hold{i: hold}
		}
		return nil
	}
	var asked []abi.WriteFailure
	replan := func(_ context.Context, fs []abi.WriteFailure) (*abi.Plan, error) {
		asked = append([]abi.WriteFailure(nil), fs...)
		next := *after
		next.Actions = append([]abi.Action(nil), after.Actions...)
		next.Actions[i].Error = fs[len(fs)-1].Message // the module carries the answer it was given
		return &next, nil
	}
	w := &fakeWriter{}
	var rs []plan.Result
	a, err := plan.Apply(context.Background(), scope, first, w, plan.Options{Replan: replan, Judge: judge, Set: "web",
		Each: func(r plan.Result) { rs = append(rs, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if want := []abi.WriteFailure{{Action: i, Reason: "Forbidden", Message: refusal}}; !reflect.DeepEqual(asked, want) {
		t.Fatalf("the module was told %+v, want %+v", asked, want)
	}
	for _, wr := range w.writes {
		if strings.HasPrefix(wr, "delete Pod web-1") {
			t.Fatalf("the held delete reached the API server: %v", w.writes)
		}
	}
	if len(w.writes) != len(after.Actions)-1 {
		t.Fatalf("writes %v: want every other write of the new plan", w.writes)
	}
	if rs[i].Outcome != plan.Held || !strings.Contains(rs[i].Err.Error(), refusal) {
		t.Fatalf("result of the held write: %+v", rs[i])
	}
	if !reflect.DeepEqual(judged, []int{0, i + 1}) {
		t.Fatalf("the policies were asked from %v, want from 0 and again after the replan from %d", judged, i+1)
	}
	if want := []plan.HeldWrite{{Verb: "delete", Kind: "Pod", Name: "web-1", Hold: hold}}; !reflect.DeepEqual(a.Held, want) {
		t.Fatalf("held %+v, want %+v", a.Held, want)
	}
}

// Without replans (a module whose describe lacks writeFailures) a held write stops the sync there, as any
// refused write does, with upstream's Failed<Verb> event carrying the hold.
func TestApplyHoldWithoutReplanStops(t *testing.T) {
	scope, first, failures, _ := refusedCase(t, "pod-states/parallel-steady-failed-web-1", "pod-states.parallel-steady-failed-web-1.first")
	i := failures[0].Action
	judge := func(context.Context, *abi.Plan, int) map[int]plan.Hold {
		return map[int]plan.Hold{i: {Policy: "handoff", Reason: "R", Message: "held"}}
	}
	w := &fakeWriter{}
	var rs []plan.Result
	a, err := plan.Apply(context.Background(), scope, first, w, plan.Options{Judge: judge, Set: "web", Each: func(r plan.Result) { rs = append(rs, r) }})
	var we *plan.WriteError
	if err == nil || !errors.As(err, &we) || we.Index != i || len(w.writes) != i || a.Issued != i+1 {
		t.Fatalf("err=%v writes=%v issued=%d: want the sync stopped at the held write, nothing issued from it", err, w.writes, a.Issued)
	}
	if evs := messages(rs[i].Events); len(evs) != 1 || !strings.Contains(evs[0], "policy handoff holds this write: held") {
		t.Fatalf("events %q", evs)
	}
}

// Admit is asked right before a write not held is sent, with the plan being carried out: a hold it returns
// holds the write exactly as Judge's would (refused, reported to the module, among the sync's held writes),
// and the writes it admits are sent.
func TestApplyAdmitHoldsAWriteBeforeItIsSent(t *testing.T) {
	scope, first, failures, after := refusedCase(t, "pod-states/parallel-steady-failed-web-1", "pod-states.parallel-steady-failed-web-1.first")
	i := failures[0].Action
	hold := plan.Hold{Policy: "pdb", Reason: "BudgetChanged", Message: "PodDisruptionBudget db: changed", RetryAfter: time.Second}
	var admitted []string
	admit := func(_ context.Context, p *abi.Plan, k int) *plan.Hold {
		a := p.Actions[k]
		if a.Error != "" || a.Verb == abi.VerbUpdateStatus {
			t.Errorf("asked about action %d (%s %s, error %q): only writes to be sent are", k, a.Verb, a.Name, a.Error)
		}
		if k == i {
			return &hold
		}
		admitted = append(admitted, a.Verb+" "+a.Kind+" "+a.Name)
		return nil
	}
	replan := func(_ context.Context, fs []abi.WriteFailure) (*abi.Plan, error) {
		next := *after
		next.Actions = append([]abi.Action(nil), after.Actions...)
		next.Actions[i].Error = fs[len(fs)-1].Message
		return &next, nil
	}
	w := &fakeWriter{}
	var rs []plan.Result
	a, err := plan.Apply(context.Background(), scope, first, w, plan.Options{Replan: replan, Admit: admit, Set: "web",
		Each: func(r plan.Result) { rs = append(rs, r) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, wr := range w.writes {
		if strings.HasPrefix(wr, "delete Pod web-1") {
			t.Fatalf("the write Admit held reached the API server: %v", w.writes)
		}
	}
	if len(w.writes) != len(after.Actions)-1 || len(w.writes) != len(admitted)+1 { // + the status write
		t.Fatalf("admitted %v, written %v: want every other write of the new plan, each admitted", admitted, w.writes)
	}
	if rs[i].Outcome != plan.Held || rs[i].Hold == nil || *rs[i].Hold != hold || !strings.Contains(rs[i].Err.Error(), "policy pdb holds this write") {
		t.Fatalf("result of the write Admit held: %+v", rs[i])
	}
	if want := []plan.HeldWrite{{Verb: "delete", Kind: "Pod", Name: "web-1", Hold: hold}}; !reflect.DeepEqual(a.Held, want) {
		t.Fatalf("held %+v, want %+v", a.Held, want)
	}
}

// Status is given the plan's status write right before it is sent, with the writes held so far, and its
// answer is what is sent; a plan that wrote no status gets the host's status write appended at its end,
// issued and reported as the plan's last action.
func TestApplyStatusRecordsTheHolds(t *testing.T) {
	scope, first, failures, after := refusedCase(t, "pod-states/parallel-steady-failed-web-1", "pod-states.parallel-steady-failed-web-1.first")
	i := failures[0].Action
	hold := plan.Hold{Policy: "handoff", Reason: "RoleNotHandedOff", Message: "web-1 is the primary"}
	judge := func(_ context.Context, p *abi.Plan, from int) map[int]plan.Hold {
		if from == 0 {
			return map[int]plan.Hold{i: hold}
		}
		return nil
	}
	replan := func(withStatus bool) plan.Replan {
		return func(_ context.Context, fs []abi.WriteFailure) (*abi.Plan, error) {
			next := *after
			next.Actions = nil
			for _, a := range after.Actions {
				if a.Verb != abi.VerbUpdateStatus || withStatus {
					next.Actions = append(next.Actions, a)
				}
			}
			next.Actions[i].Error = fs[len(fs)-1].Message
			return &next, nil
		}
	}
	var given [][]plan.HeldWrite
	var planned []*abi.Action
	status := func(a *abi.Action, held []plan.HeldWrite) *abi.Action {
		given, planned = append(given, held), append(planned, a)
		return &abi.Action{Verb: abi.VerbUpdateStatus, Kind: abi.KindStatefulSet, Namespace: "default", Name: "web", Object: json.RawMessage(`{"status":{"held":true}}`)}
	}
	want := []plan.HeldWrite{{Verb: "delete", Kind: "Pod", Name: "web-1", Hold: hold}}

	// the plan's own status write, replaced
	w := &fakeWriter{}
	a, err := plan.Apply(context.Background(), scope, first, w, plan.Options{Replan: replan(true), Judge: judge, Status: status, Set: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(planned) != 1 || planned[0] == nil || !reflect.DeepEqual(given[0], want) {
		t.Fatalf("Status was given %+v with %+v: want the plan's status write once, with the hold", planned, given)
	}
	last := a.Plan.Actions[len(a.Plan.Actions)-1]
	if string(last.Object) != `{"status":{"held":true}}` || len(a.Plan.Actions) != len(after.Actions) || a.Issued != len(after.Actions) {
		t.Fatalf("the status sent: %s (%d actions, %d issued)", last.Object, len(a.Plan.Actions), a.Issued)
	}

	// a plan without one: the host's, appended and reported
	given, planned = nil, nil
	w = &fakeWriter{}
	var rs []plan.Result
	a, err = plan.Apply(context.Background(), scope, first, w, plan.Options{Replan: replan(false), Judge: judge, Status: status, Set: "web",
		Each: func(r plan.Result) { rs = append(rs, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(planned) != 1 || planned[0] != nil || !reflect.DeepEqual(given[0], want) {
		t.Fatalf("Status was given %+v with %+v: want nil once, at the end, with the hold", planned, given)
	}
	n := len(a.Plan.Actions)
	if n != len(after.Actions) || a.Issued != n || a.Plan.Actions[n-1].Verb != abi.VerbUpdateStatus ||
		w.writes[len(w.writes)-1] != "updateStatus StatefulSet web " || rs[len(rs)-1].Index != n-1 || rs[len(rs)-1].Outcome != plan.Succeeded {
		t.Fatalf("the appended status write: actions %d, issued %d, writes %v, last result %+v", n, a.Issued, w.writes, rs[len(rs)-1])
	}
}
