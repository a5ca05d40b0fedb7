package plan_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/host/plan"
)

// refusedCase is a write-failures case: the plan upstream made for its source case (every write
// succeeding), the write failures its snapshot carries, and the plan upstream made with those refusals.
func refusedCase(t *testing.T, source, name string) (*firewall.Scope, *abi.Plan, []abi.WriteFailure, *abi.Plan) {
	t.Helper()
	scope, first := conformanceCase(t, source)
	_, after := conformanceCase(t, filepath.Join("write-failures", name))
	raw, err := os.ReadFile(filepath.Join("..", "..", "internal", "conformance", "cases", "write-failures", name+".snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var snap abi.Snapshot
	if err := json.Unmarshal(raw, &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.WriteFailures) == 0 {
		t.Fatalf("%s carries no writeFailures", name)
	}
	return scope, first, snap.WriteFailures, after
}

// apiRefusal is the API server's answer a write failure reports.
func apiRefusal(f abi.WriteFailure) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReason(f.Reason), Message: f.Message}}
}

// A refused write goes back to the module with the refusal, and the rest of its new plan is carried out:
// here a Parallel set's failed pod whose delete the API server refuses, and the status upstream writes
// anyway.
func TestApplyAsksTheModuleAfterARefusedWrite(t *testing.T) {
	scope, first, failures, after := refusedCase(t, "pod-states/parallel-steady-failed-web-1", "pod-states.parallel-steady-failed-web-1.first")
	w := &fakeWriter{answers: map[int]error{failures[0].Action: apiRefusal(failures[0])}}
	var asked [][]abi.WriteFailure
	replan := func(_ context.Context, fs []abi.WriteFailure) (*abi.Plan, error) {
		asked = append(asked, append([]abi.WriteFailure(nil), fs...))
		return after, nil
	}
	var rs []plan.Result
	a, err := plan.Apply(context.Background(), scope, first, w, plan.Options{Replan: replan, Set: "web", Each: func(r plan.Result) { rs = append(rs, r) }})
	if err != nil {
		t.Fatalf("err=%v", err)
	}
	if !reflect.DeepEqual(asked, [][]abi.WriteFailure{failures}) {
		t.Fatalf("the module was asked with %+v, want %+v", asked, failures)
	}
	if a.Plan != after || a.Replans != 1 || a.Issued != len(after.Actions) {
		t.Fatalf("applied %+v: want the new plan carried out to its end", a)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Action.Verb+" "+r.Action.Name)
	}
	if want := []string{"delete web-1", "updateStatus web"}; !reflect.DeepEqual(got, want) || rs[0].Outcome != plan.FailedAsPlanned || rs[1].Outcome != plan.Succeeded {
		t.Fatalf("issued %v outcomes %v, want %v: the refused delete, then the status upstream writes anyway", got, outcomes(rs), want)
	}
	// upstream's FailedDelete event comes from the new plan (no host-made one beside it)
	if evs := messages(append(rs[0].Events, a.AtEnd...)); len(evs) != 1 || !strings.Contains(evs[0], "Delete Pod web-1 in StatefulSet web failed error: "+failures[0].Message) {
		t.Fatalf("events %q", evs)
	}
}

// Two refusals of one sync: the status update's Conflict is retried, and the retry refused again; the module
// is asked with both, each naming an action of the plan it answered before.
func TestApplyReportsEveryRefusalOfTheSync(t *testing.T) {
	const name = "pod-states.parallel-steady-never-ready-web-4.retry"
	scope, first, failures, after := refusedCase(t, "pod-states/parallel-steady-never-ready-web-4", name)
	if len(failures) != 2 {
		t.Fatalf("%s: %d write failures, want 2", name, len(failures))
	}
	w := &fakeWriter{answers: map[int]error{failures[0].Action: apiRefusal(failures[0]), failures[1].Action: apiRefusal(failures[1])}}
	// the module's answer after the first refusal: the plan with that refusal alone
	once := *after
	once.Actions = append([]abi.Action(nil), after.Actions...)
	once.Actions[failures[1].Action].Error = ""
	var asked []int
	replan := func(_ context.Context, fs []abi.WriteFailure) (*abi.Plan, error) {
		asked = append(asked, len(fs))
		if len(fs) == 1 {
			return &once, nil
		}
		return after, nil
	}
	a, err := plan.Apply(context.Background(), scope, first, w, plan.Options{Replan: replan, Set: "web"})
	if err != nil || a.Plan != after || a.Replans != 2 || !reflect.DeepEqual(asked, []int{1, 2}) || len(w.writes) != len(after.Actions) {
		t.Fatalf("err=%v replans=%d asked=%v writes=%v", err, a.Replans, asked, w.writes)
	}
}

// The module's new plan must be the same sync: an action already issued that changed, or a refused write
// not recorded as refused, stops the plan; so does a new plan the firewall refuses.
func TestApplyHoldsTheNewPlanToTheSync(t *testing.T) {
	scope, first, failures, after := refusedCase(t, "pod-states/parallel-steady-failed-web-1", "pod-states.parallel-steady-failed-web-1.first")
	k := failures[0].Action
	for _, tc := range []struct {
		name   string
		mutate func(p *abi.Plan)
		want   string
	}{
		{"refusal not recorded", func(p *abi.Plan) { p.Actions[k].Error = "" }, "not the refused write"},
		{"another write", func(p *abi.Plan) { p.Actions[k].Name = "web-2" }, "not the refused write"},
		{"fewer actions", func(p *abi.Plan) { p.Actions = p.Actions[:k] }, "not the 1 already issued"},
		{"a write out of bounds", func(p *abi.Plan) {
			p.Actions = append(p.Actions, abi.Action{Verb: abi.VerbDelete, Kind: abi.KindPod, Namespace: scope.Namespace, Name: "someone-elses-pod"})
		}, "firewall"},
		{"a snapshot refused", func(p *abi.Plan) { p.Error = &abi.Error{Code: abi.CodeInvalidSnapshot, Message: "no"} }, "refused the write failures"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := *after
			bad.Actions = append([]abi.Action(nil), after.Actions...)
			tc.mutate(&bad)
			w := &fakeWriter{answers: map[int]error{k: apiRefusal(failures[0])}}
			a, err := plan.Apply(context.Background(), scope, first, w, plan.Options{Set: "web",
				Replan: func(context.Context, []abi.WriteFailure) (*abi.Plan, error) { return &bad, nil }})
			var we *plan.WriteError
			if !errors.As(err, &we) || we.Index != k || !strings.Contains(err.Error(), tc.want) || a.Plan != first || len(w.writes) != k+1 {
				t.Fatalf("err=%v plan kept=%v writes=%v: want a WriteError at %d saying %q, nothing issued after", err, a.Plan == first, w.writes, k, tc.want)
			}
			if !apierrors.IsInternalError(err) {
				t.Errorf("err=%v: the API server's answer is lost", err)
			}
			if tc.want == "firewall" {
				var refused *firewall.RefusedError
				if !errors.As(err, &refused) {
					t.Errorf("err=%v: not a firewall refusal", err)
				}
			}
		})
	}
}

// With a module that reads writeFailures, even the refusals upstream's ControllerRefManager ignores go back
// to it: an adoption that failed leaves the pod unclaimed, which changes the rest of the sync.
func TestApplyReportsIgnorableRefusalsToAModuleThatReadsThem(t *testing.T) {
	scope, p := conformanceCase(t, "ownership/ordered-release-selector-mismatch")
	w := &fakeWriter{answers: map[int]error{0: apierrors.NewNotFound(pods, "web-2"), 1: apierrors.NewAlreadyExists(pods, "web-2")}}
	asked := 0
	next := *p
	next.Actions = append([]abi.Action(nil), p.Actions...)
	next.Actions[0].Error = apierrors.NewNotFound(pods, "web-2").Error()
	a, err := plan.Apply(context.Background(), scope, p, w, plan.Options{Replan: func(_ context.Context, fs []abi.WriteFailure) (*abi.Plan, error) {
		asked++
		if len(fs) != 1 || fs[0].Action != 0 || fs[0].Reason != string(metav1.StatusReasonNotFound) {
			t.Errorf("asked with %+v", fs)
		}
		return &next, nil
	}})
	if err != nil || asked != 1 || a.Replans != 1 {
		t.Fatalf("err=%v asked=%d", err, asked)
	}
}

func TestWithWriteFailures(t *testing.T) {
	fs := []abi.WriteFailure{{Action: 2, Reason: "Conflict", Message: "m"}}
	for in, want := range map[string]string{
		`{"abi":1}`:                     `{"abi":1,"writeFailures":[{"action":2,"reason":"Conflict","message":"m"}]}`,
		"{\"abi\":1}\n  ":               `{"abi":1,"writeFailures":[{"action":2,"reason":"Conflict","message":"m"}]}`,
		`{}`:                            `{"writeFailures":[{"action":2,"reason":"Conflict","message":"m"}]}`,
		`{"writeFailures":[],"abi":1 }`: `{"writeFailures":[],"abi":1 ,"writeFailures":[{"action":2,"reason":"Conflict","message":"m"}]}`,
	} {
		got, err := plan.WithWriteFailures([]byte(in), fs)
		if err != nil || string(got) != want {
			t.Errorf("%q: got %q, %v; want %q", in, got, err, want)
		}
		var v map[string]any
		if err := json.Unmarshal(got, &v); err != nil {
			t.Errorf("%q: not JSON: %v", got, err)
		}
	}
	for _, in := range []string{`[]`, ``, `"x"`, `{`} {
		if _, err := plan.WithWriteFailures([]byte(in), fs); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// Regression (hostile probe, F2): every refusal sent back makes the module plan the sync again from the
// start, and a Parallel burst of refused creates ran a 1000-replica module out of memory at 51 of them. The
// applier sends at most MaxReplans; the next refusal stops the sync there (the next sync plans again).
// Messages are bounded before they go back (F4: they come back in events and the sync's error).
func TestApplyAsksAtMostMaxReplansTimes(t *testing.T) {
	scope, first := conformanceCase(t, "history/limit-0-steady") // 12 writes
	w := &refuseAll{}
	asked := 0
	replan := func(_ context.Context, fs []abi.WriteFailure) (*abi.Plan, error) {
		asked++
		for _, f := range fs {
			if len(f.Message) > 4096+3 {
				t.Errorf("a %d-byte message went back to the module", len(f.Message))
			}
		}
		next := *first
		next.Actions = append([]abi.Action(nil), first.Actions...)
		for _, f := range fs {
			next.Actions[f.Action].Error = f.Message
		}
		return &next, nil
	}
	_, err := plan.Apply(context.Background(), scope, first, w, plan.Options{Replan: replan})
	if asked != plan.MaxReplans || err == nil || !strings.Contains(err.Error(), "writes of one sync refused") {
		t.Fatalf("asked %d times (want %d), err=%v", asked, plan.MaxReplans, err)
	}
}

// refuseAll refuses every write with a long message.
type refuseAll struct{}

func (refuseAll) Write(context.Context, *abi.Action, types.UID) (string, error) {
	return "", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "x", errors.New(strings.Repeat("quota ", 2000)))
}

func (refuseAll) CanAdopt(context.Context) error { return nil }
