package controller

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
)

func TestMatchEvents(t *testing.T) {
	plan := &abi.Plan{
		Actions: []abi.Action{
			{Verb: "create", Kind: "ControllerRevision", Name: "web-abc"},
			{Verb: "create", Kind: "PersistentVolumeClaim", Name: "data-web-0"},
			{Verb: "create", Kind: "Pod", Name: "web-0"},
			{Verb: "delete", Kind: "Pod", Name: "web-3"},
			{Verb: "updateStatus", Kind: "StatefulSet", Name: "web"},
		},
		Events: []abi.Event{
			{Type: "Normal", Reason: "SuccessfulCreate", Message: "Create Claim data-web-0 Pod web-0 in StatefulSet web success"},
			{Type: "Normal", Reason: "SuccessfulCreate", Message: "Create Pod web-0 in StatefulSet web successful"},
			{Type: "Normal", Reason: "SuccessfulDelete", Message: "Delete Pod web-3 in StatefulSet web successful"},
			{Type: "Warning", Reason: "ConflictingController", Message: "ConflictingController: ... claim data-web-9 ..."},
		},
	}
	pe := matchEvents(plan)
	want := map[int][]string{1: {"Create Claim data-web-0 Pod web-0 in StatefulSet web success"},
		2: {"Create Pod web-0 in StatefulSet web successful"}, 3: {"Delete Pod web-3 in StatefulSet web successful"}}
	got := map[int][]string{}
	for i, evs := range pe.byAction {
		for _, e := range evs {
			got[i] = append(got[i], e.Message)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("byAction = %v, want %v", got, want)
	}
	if len(pe.rest) != 1 || pe.rest[0].Reason != "ConflictingController" {
		t.Errorf("rest = %v", pe.rest)
	}
}

func TestFailureEvent(t *testing.T) {
	err := errors.New("boom")
	ev, ok := failureEvent("web", abi.Action{Verb: "create", Kind: "Pod", Name: "web-1"}, err)
	if !ok || ev.Reason != "FailedCreate" || ev.Type != "Warning" || ev.Message != "Create Pod web-1 in StatefulSet web failed error: boom" {
		t.Errorf("pod: %+v", ev)
	}
	ev, ok = failureEvent("web", abi.Action{Verb: "create", Kind: "PersistentVolumeClaim", Name: "data-web-1"}, err)
	if !ok || ev.Message != "Create Claim data-web-1 for Pod web-1 in StatefulSet web failed error: boom" {
		t.Errorf("claim: %+v", ev)
	}
	if _, ok := failureEvent("web", abi.Action{Verb: "updateStatus", Kind: "StatefulSet", Name: "web"}, err); ok {
		t.Error("no event for a status write")
	}
}
