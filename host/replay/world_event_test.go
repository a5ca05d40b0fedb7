package replay

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
		if err := api.Create(kindClaim, c); err != nil {
			t.Fatal(err)
		}
	}
	api.takeNotes()
	api.collectGarbage()
	got := api.takeNotes()
	want := []WorldEvent{{Source: "gc", Reason: ReasonDeleted, Kind: kindClaim, Name: "data-web-3",
		Message: "deleted PersistentVolumeClaim data-web-3 (owners gone)"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %+v, want %+v", got, want)
	}
	if s := got[0].String(); s != "gc: deleted PersistentVolumeClaim data-web-3 (owners gone)" {
		t.Errorf("timeline text %q", s)
	}
	if api.Get(kindClaim, "data-web-3") != nil || api.Get(kindClaim, "data-web-0") == nil {
		t.Error("the collector removed the wrong claim")
	}
}
