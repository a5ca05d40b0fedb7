package controller

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/host/embedded"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// The controller's snapshots ask for events[].action, and the embedded module answers with it: the
// events of a plan's writes are tied to them.
func TestControllerSnapshotGetsEventActions(t *testing.T) {
	raw, err := os.ReadFile("../../internal/conformance/cases/ownership/ordered-orphan-pods-template-changed.snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		StatefulSet *appsv1.StatefulSet          `json:"statefulSet"`
		Pods        []*corev1.Pod                `json:"pods"`
		Revisions   []*appsv1.ControllerRevision `json:"revisions"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Build(snapshot.Objects{Set: in.StatefulSet, Pods: in.Pods, Revisions: in.Revisions}, snapshot.StatefulSetTarget, time.Unix(1_800_000_000, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := wasm.Load(context.Background(), embedded.Module(), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	out, err := m.Reconcile(context.Background(), snap.JSON)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := hostplan.Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Events) == 0 {
		t.Fatal("no events")
	}
	for _, ev := range plan.Events {
		if ev.Action == nil {
			t.Fatalf("event %q is not tied to its write", ev.Message)
		}
		if a := plan.Actions[*ev.Action]; !strings.Contains(ev.Message, " "+a.Name+" ") {
			t.Errorf("event %q tied to %s %s %s", ev.Message, a.Verb, a.Kind, a.Name)
		}
	}
}
