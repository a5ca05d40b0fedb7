package world

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// Under any creates, replacements, deletions and removals, each look of the collector (which reads only
// what its graph says may have lost its owners) collects what a look at every object of the world would:
// the claims and revisions whose owners are all gone at that moment, and the pods' deletionTimestamps, in
// the same order.
func TestOwnerGraphCollectsWhatALookAtEverythingWould(t *testing.T) {
	api := NewAPIServer("default", NewClock(time.Unix(0, 0)))
	api.set = Obj{"metadata": Obj{"name": "web", "uid": "set-0"}}
	r := rand.New(rand.NewSource(7))
	uidOf := func(kind, name string) string { return jsonobj.GetStr(api.Get(kind, name), "metadata.uid") }
	// an owner for a new object: the set, a pod, a claim, a uid nothing has, or none
	owners := func() []any {
		kind, name := KindSet, "web"
		switch r.Intn(5) {
		case 0:
		case 1:
			kind, name = KindPod, fmt.Sprintf("web-%d", r.Intn(8))
		case 2:
			kind, name = KindClaim, fmt.Sprintf("data-%d", r.Intn(8))
		case 3:
			return []any{Obj{"kind": KindPod, "name": "web-9", "uid": "no-such-uid"}}
		default:
			return nil
		}
		uid := uidOf(kind, name)
		if uid == "" {
			return nil
		}
		return []any{Obj{"kind": kind, "name": name, "uid": uid}}
	}
	looks, collected := 0, 0
	for i := 0; i < 4000; i++ {
		pod, claim, rev := fmt.Sprintf("web-%d", r.Intn(8)), fmt.Sprintf("data-%d", r.Intn(8)), fmt.Sprintf("web-rev-%d", r.Intn(3))
		switch r.Intn(10) {
		case 0:
			_ = api.Create(KindPod, Obj{"metadata": Obj{"name": pod, "ownerReferences": owners()}, "spec": Obj{"containers": []any{Obj{"name": "c", "image": "x"}}}})
		case 1, 2:
			_ = api.Create(KindClaim, Obj{"metadata": Obj{"name": claim, "ownerReferences": owners()}})
		case 3:
			_ = api.Create(KindRevision, Obj{"metadata": Obj{"name": rev, "ownerReferences": owners()}})
		case 4:
			if c := api.Get(KindClaim, claim); c != nil {
				c = jsonobj.CloneObj(c)
				jsonobj.Ensure(c, "metadata")["ownerReferences"] = owners()
				if err := api.Update(KindClaim, c); err != nil {
					t.Fatal(err)
				}
			}
		case 5:
			_ = api.Delete(KindClaim, claim, "")
		case 6:
			_ = api.Delete(KindPod, pod, "")
		case 7:
			if api.Get(KindPod, pod) != nil {
				api.removePod(pod)
			}
		case 8:
			if r.Intn(10) == 0 { // the set deleted with --cascade=orphan and created again
				api.OrphanSet()
				api.set = Obj{"metadata": Obj{"name": "web", "uid": fmt.Sprintf("set-%d", i)}}
			}
		default:
			want, wantPods := everythingLook(api)
			api.TakeNotes()
			api.CollectGarbage()
			looks++
			collected += len(want)
			if got := api.TakeNotes(); !reflect.DeepEqual(got, want) {
				t.Fatalf("write %d: the collector did\n %+v\nwant\n %+v", i, got, want)
			}
			for _, n := range wantPods {
				if jsonobj.Get(api.Get(KindPod, n), "metadata.deletionTimestamp") == nil {
					t.Fatalf("write %d: pod %s not marked", i, n)
				}
			}
		}
	}
	if looks < 100 || collected < 100 {
		t.Fatalf("only %d looks, %d objects collected", looks, collected)
	}
	t.Logf("%d looks, %d objects collected, %d pods %d claims %d revisions left", looks, collected, len(api.objs[KindPod]), len(api.objs[KindClaim]), len(api.objs[KindRevision]))
}

// everythingLook is what a look at every object of the world collects now: its notes, and the pods it
// marks.
func everythingLook(api *APIServer) ([]WorldEvent, []string) {
	live := api.liveUIDs()
	var notes []WorldEvent
	var pods []string
	for _, kind := range collectedKinds {
		for _, n := range api.Names(kind) {
			o := api.objs[kind][n]
			if !orphaned(o, live) {
				continue
			}
			switch {
			case kind != KindPod:
				notes = append(notes, WorldEvent{Source: "gc", Reason: ReasonDeleted, Kind: kind, Name: n, Message: fmt.Sprintf("deleted %s %s (owners gone)", kind, n)})
			case jsonobj.Get(o, "metadata.deletionTimestamp") == nil:
				pods = append(pods, n)
				notes = append(notes, WorldEvent{Source: "gc", Reason: ReasonDeleting, Kind: KindPod, Name: n, Message: fmt.Sprintf("deleting Pod %s (owners gone)", n)})
			}
		}
	}
	return notes, pods
}
