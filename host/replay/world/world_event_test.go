package world

import (
	"reflect"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// The collector's deletions reach programs as typed events (the webhook counts deleted claims by them)
// and people as the timeline's text.
func TestGarbageCollectionIsATypedWorldEvent(t *testing.T) {
	api := NewAPIServer("default", NewClock(time.Unix(0, 0)))
	owned := func(uid string) Obj {
		return Obj{"metadata": Obj{"ownerReferences": []any{Obj{"uid": uid, "kind": "Pod", "name": "web-3"}}}}
	}
	claim := owned("gone")
	jsonobj.Set(claim, "metadata.name", "data-web-3")
	kept := Obj{"metadata": Obj{"name": "data-web-0"}}
	for _, c := range []Obj{claim, kept} {
		if err := api.Create(KindClaim, c); err != nil {
			t.Fatal(err)
		}
	}
	api.TakeNotes()
	api.CollectGarbage()
	got := api.TakeNotes()
	want := []WorldEvent{{Source: "gc", Reason: ReasonDeleted, Kind: KindClaim, Name: "data-web-3",
		Message: "deleted PersistentVolumeClaim data-web-3 (owners gone)"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %+v, want %+v", got, want)
	}
	if s := got[0].String(); s != "gc: deleted PersistentVolumeClaim data-web-3 (owners gone)" {
		t.Errorf("timeline text %q", s)
	}
	if api.Get(KindClaim, "data-web-3") != nil || api.Get(KindClaim, "data-web-0") == nil {
		t.Error("the collector removed the wrong claim")
	}
}

// Between two looks, the collector checks only what was written unless something was removed: a claim whose
// owner is there stays, one whose owner reference names no object is collected, one whose reference names
// its owner by another kind is judged by uid as before, and removing an owner collects its dependents.
func TestGarbageCollectorLooksAtWhatChanged(t *testing.T) {
	api := NewAPIServer("default", NewClock(time.Unix(0, 0)))
	if err := api.Create(KindPod, Obj{"metadata": Obj{"name": "web-0"}, "spec": Obj{"containers": []any{Obj{"name": "c", "image": "x"}}}}); err != nil {
		t.Fatal(err)
	}
	api.CollectGarbage()
	pod := api.Get(KindPod, "web-0")
	uid := jsonobj.GetStr(pod, "metadata.uid")
	claim := func(name, kind, owner, ownerUID string) {
		t.Helper()
		if err := api.Create(KindClaim, Obj{"metadata": Obj{"name": name, "ownerReferences": []any{Obj{"kind": kind, "name": owner, "uid": ownerUID}}}}); err != nil {
			t.Fatal(err)
		}
	}
	claim("owned", KindPod, "web-0", uid)
	claim("other-kind", "Widget", "web-0", uid)
	claim("gone", KindPod, "web-9", "no-such-uid")
	api.CollectGarbage()
	for name, want := range map[string]bool{"owned": true, "other-kind": true, "gone": false} {
		if got := api.Get(KindClaim, name) != nil; got != want {
			t.Errorf("claim %s there: %v, want %v", name, got, want)
		}
	}
	api.removePod("web-0")
	api.CollectGarbage()
	if api.Get(KindClaim, "owned") != nil || api.Get(KindClaim, "other-kind") != nil {
		t.Error("the claims of a removed pod were not collected")
	}
}

// The collector's delete of a pod whose owner is gone is a write: outside the tick model it gives the pod a
// new resourceVersion, which is what the encode-once cache and a session's digests go by (without it, the
// next sync sent the pod as it was, not terminating). The tick model keeps the reference harness's rule.
func TestCollectedPodGetsANewResourceVersion(t *testing.T) {
	for _, harness := range []bool{false, true} {
		api := NewAPIServer("default", NewClock(time.Unix(0, 0)))
		api.HarnessCollector = harness
		if err := api.Create(KindPod, Obj{"metadata": Obj{"name": "web-0", "ownerReferences": []any{Obj{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "gone", "uid": "no-such-uid", "controller": true}}},
			"spec": Obj{"containers": []any{Obj{"name": "c", "image": "x"}}}}); err != nil {
			t.Fatal(err)
		}
		before := jsonobj.GetStr(api.Get(KindPod, "web-0"), "metadata.resourceVersion")
		api.CollectGarbage()
		p := api.Get(KindPod, "web-0")
		if jsonobj.Get(p, "metadata.deletionTimestamp") == nil {
			t.Fatalf("harness %v: the orphan pod was not marked for deletion", harness)
		}
		if after := jsonobj.GetStr(p, "metadata.resourceVersion"); (after != before) == harness {
			t.Errorf("harness %v: resourceVersion %s -> %s", harness, before, after)
		}
	}
}
