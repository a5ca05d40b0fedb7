package replay

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/ordinal-dev/ordinal/host/replay/world"
)

// A snapshot is written over the previous one, and an object that changed is written in its slot: the
// objects after it stay where they were, the others are not visited, and the snapshot is the same JSON as one
// written afresh.
func TestSnapshotKeepsObjectsInTheirSlots(t *testing.T) {
	b, err := os.ReadFile("../../internal/conformance/cases/large/parallel-10-vct2-delete-delete-to-4.snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ScenarioFromSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	e := initialWorld(t, sc)
	e.snapshot()
	names := e.api.Names(world.KindPod)
	if len(names) < 4 {
		t.Fatalf("%d pods, want 4 or more", len(names))
	}
	at, written := map[string]int{}, map[string]int{}
	for _, n := range names {
		at[n], written[n] = e.recordOf(world.KindPod, n).from, e.recordOf(world.KindPod, n).encodedAt
	}
	// the second pod deleted: it gets a deletionTimestamp, and grows
	victim := names[1]
	before := len(e.recordOf(world.KindPod, victim).json)
	pod := e.api.Get(world.KindPod, victim)
	if err := e.api.Delete(world.KindPod, victim, pod["metadata"].(Obj)["uid"].(string)); err != nil {
		t.Fatal(err)
	}
	snap := e.snapshot()
	if r := e.recordOf(world.KindPod, victim); r == nil || len(r.json) <= before {
		t.Fatalf("the deleted pod did not grow")
	}
	for _, n := range names {
		r := e.recordOf(world.KindPod, n)
		if r.from != at[n] {
			t.Errorf("pod %s moved from %d to %d", n, at[n], r.from)
		}
		// the others are where they were, and not even looked at (relayList)
		if n != victim && (r.encodedAt != written[n] || !e.inSnapshot(r)) {
			t.Errorf("pod %s: written again for view %d (was %d), in the snapshot: %v", n, r.encodedAt, written[n], e.inSnapshot(r))
		}
	}
	fresh := initialWorld(t, sc)
	fresh.api = e.api
	fresh.world = nil
	want := fresh.snapshot()
	if !json.Valid(snap) || !bytes.Equal(compact(snap), compact(want)) {
		t.Fatalf("the snapshot written over the last is not the one written afresh:\n%s\n%s", compact(snap), compact(want))
	}
	for _, n := range names {
		r := e.recordOf(world.KindPod, n)
		if !bytes.Equal(snap[r.from:r.to], r.json) {
			t.Errorf("pod %s is not where the layout says", n)
		}
	}
}
