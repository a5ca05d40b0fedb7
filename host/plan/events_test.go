package plan_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/plan"
)

func intp(i int) *int { return &i }

func messages(evs []abi.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Message)
	}
	return out
}

func TestEventsFollowTheirWrites(t *testing.T) {
	p := &abi.Plan{
		Actions: []abi.Action{
			{Verb: "create", Kind: "ControllerRevision", Name: "web-abc"},
			{Verb: "create", Kind: "PersistentVolumeClaim", Name: "data-web-0"},
			{Verb: "create", Kind: "Pod", Name: "web-0"},
			{Verb: "delete", Kind: "Pod", Name: "web-3"},
			{Verb: "updateStatus", Kind: "StatefulSet", Name: "web"},
		},
		Events: []abi.Event{
			{Type: "Normal", Reason: "SuccessfulCreate", Message: "Create Claim data-web-0 Pod web-0 in StatefulSet web success", Action: intp(1)},
			{Type: "Normal", Reason: "SuccessfulCreate", Message: "Create Pod web-0 in StatefulSet web successful", Action: intp(2)},
			{Type: "Normal", Reason: "SuccessfulDelete", Message: "Delete Pod web-3 in StatefulSet web successful", Action: intp(3)},
			{Type: "Warning", Reason: "ConflictingController", Message: "ConflictingController: ... claim data-web-9 ..."},
		},
	}
	ev := plan.NewEvents(p, "web")
	res := func(i int, o plan.Outcome, err error) plan.Result {
		return plan.Result{Index: i, Action: &p.Actions[i], Outcome: o, Err: err}
	}
	if got := messages(ev.After(res(0, plan.Succeeded, nil))); got != nil {
		t.Errorf("revision create: %v", got)
	}
	if got := messages(ev.After(res(1, plan.Succeeded, nil))); !reflect.DeepEqual(got, []string{p.Events[0].Message}) {
		t.Errorf("claim create: %v", got)
	}
	// A write rejected as predicted still reports its event (upstream records after the rejection too).
	if got := messages(ev.After(res(2, plan.FailedAsPlanned, errors.New("AlreadyExists")))); !reflect.DeepEqual(got, []string{p.Events[1].Message}) {
		t.Errorf("pod create: %v", got)
	}
	// An unexpected failure records upstream's Failed<Verb> warning instead.
	got := ev.After(res(3, plan.Failed, errors.New("boom")))
	if len(got) != 1 || got[0].Reason != "FailedDelete" || got[0].Type != "Warning" || got[0].Message != "Delete Pod web-3 in StatefulSet web failed error: boom" {
		t.Errorf("failed delete: %+v", got)
	}
	if got := ev.AtEnd(errors.New("stopped")); got != nil {
		t.Errorf("events of no write after a plan that stopped: %v", got)
	}
	if got := messages(ev.AtEnd(nil)); !reflect.DeepEqual(got, []string{p.Events[3].Message}) {
		t.Errorf("at the end: %v", got)
	}
	// A module that gives no index: everything after the plan.
	p.Events[0].Action, p.Events[1].Action, p.Events[2].Action = nil, nil, nil
	if got := plan.NewEvents(p, "web").AtEnd(nil); len(got) != 4 {
		t.Errorf("without indices: %v", got)
	}
}

func TestFailureEvents(t *testing.T) {
	err := errors.New("boom")
	ev := plan.NewEvents(&abi.Plan{}, "web")
	for _, tc := range []struct {
		a    abi.Action
		want string
	}{
		{abi.Action{Verb: "create", Kind: "Pod", Name: "web-1"}, "Create Pod web-1 in StatefulSet web failed error: boom"},
		{abi.Action{Verb: "create", Kind: "PersistentVolumeClaim", Name: "data-web-1"}, "Create Claim data-web-1 for Pod web-1 in StatefulSet web failed error: boom"},
		{abi.Action{Verb: "updateStatus", Kind: "StatefulSet", Name: "web"}, ""},
	} {
		got := ev.After(plan.Result{Action: &tc.a, Outcome: plan.Failed, Err: err})
		if tc.want == "" && got != nil || tc.want != "" && (len(got) != 1 || got[0].Message != tc.want) {
			t.Errorf("%s %s: %+v", tc.a.Verb, tc.a.Kind, got)
		}
	}
}

// Truncate cuts at a character boundary: a cut inside a multi-byte character would record invalid UTF-8.
func TestTruncateKeepsCharactersWhole(t *testing.T) {
	if got := plan.Truncate("abc", 5); got != "abc" {
		t.Errorf("short text changed: %q", got)
	}
	s := strings.Repeat("é", 600) // 2 bytes each
	got := plan.Truncate(s, plan.MaxEventMessage+1)
	if !utf8.ValidString(got) || len(got) > plan.MaxEventMessage+1+len("...") || !strings.HasSuffix(got, "...") {
		t.Errorf("Truncate: %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}
