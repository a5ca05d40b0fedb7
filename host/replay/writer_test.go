package replay

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// The in-memory API server answers the applier as kube-apiserver does: errors the applier's rules
// (host/plan) can classify, a delete's uid precondition, and the status PUT's resourceVersion.
func TestWorldWriterAnswersAsTheAPIServer(t *testing.T) {
	api := world.NewAPIServer("ns", world.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)))
	set := Obj{"metadata": Obj{"name": "web", "namespace": "ns"}, "spec": Obj{
		"replicas": jsonobj.Num(1), "serviceName": "web", "selector": Obj{"matchLabels": Obj{"app": "web"}},
		"template": Obj{"metadata": Obj{"labels": Obj{"app": "web"}}, "spec": Obj{"containers": []any{Obj{"name": "c", "image": "i"}}}}}}
	if err := api.Create(world.KindSet, set); err != nil {
		t.Fatal(err)
	}
	if err := api.Create(world.KindPod, Obj{"metadata": Obj{"name": "web-0"}, "spec": Obj{"containers": []any{Obj{"name": "c", "image": "i"}}}}); err != nil {
		t.Fatal(err)
	}
	w := &worldWriter{api: api, set: api.StatefulSet()}
	ctx := context.Background()
	act := func(verb, kind, name, object string) *abi.Action {
		return &abi.Action{Verb: verb, Kind: kind, Namespace: "ns", Name: name, Object: json.RawMessage(object)}
	}
	if _, err := w.Write(ctx, act("create", world.KindPod, "web-0", `{"metadata":{"name":"web-0"}}`), ""); !apierrors.IsAlreadyExists(err) {
		t.Errorf("create of a taken name: %v", err)
	}
	patch := act("patch", world.KindPod, "web-9", "")
	patch.Patch = json.RawMessage(`{"metadata":{"labels":{"a":"b"}}}`)
	if _, err := w.Write(ctx, patch, ""); !apierrors.IsNotFound(err) {
		t.Errorf("patch of a missing pod: %v", err)
	}
	if _, err := w.Write(ctx, act("delete", world.KindPod, "web-0", ""), "another-uid"); !apierrors.IsConflict(err) {
		t.Errorf("delete with a uid precondition that does not hold: %v", err)
	}
	if _, err := w.Write(ctx, act("updateStatus", world.KindSet, "web", `{"status":{"replicas":1}}`), ""); err != nil {
		t.Fatalf("status PUT at the snapshot's resourceVersion: %v", err)
	}
	if _, err := w.Write(ctx, act("updateStatus", world.KindSet, "web", `{"status":{"replicas":2}}`), ""); !apierrors.IsConflict(err) {
		t.Errorf("a second status PUT from the same snapshot: %v, want Conflict", err)
	}
	if err := w.CanAdopt(ctx); err != nil {
		t.Errorf("CanAdopt: %v", err)
	}
	if err := api.Delete(world.KindSet, "web", ""); err != nil {
		t.Fatal(err)
	}
	if err := w.CanAdopt(ctx); err == nil {
		t.Error("CanAdopt after the set was deleted")
	}
}
