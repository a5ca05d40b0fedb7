package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// A snapshot is written over the previous one, and an object that changed is written in its slot: the
// objects after it stay where they were, the others are not visited, and the snapshot is the same JSON as one
// written afresh.
func TestSnapshotKeepsObjectsInTheirSlots(t *testing.T) {
	e, sc := laidOutWorld(t)
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
	if !json.Valid(snap) || !bytes.Equal(jsonCompact(snap), jsonCompact(want)) {
		t.Fatalf("the snapshot written over the last is not the one written afresh:\n%s\n%s", jsonCompact(snap), jsonCompact(want))
	}
	for _, n := range names {
		r := e.recordOf(world.KindPod, n)
		if !bytes.Equal(snap[r.from:r.to], r.json) {
			t.Errorf("pod %s is not where the layout says", n)
		}
	}
}

// A list that gains or loses objects is written in place too: a dropped object's slot becomes white space
// (and its comma goes), an added object takes the gap it goes in when it fits (a pod deleted and created
// again, its old slot), and the objects around them stay where they were, not looked at. The snapshot is
// the JSON a snapshot written afresh is, its list in the same order; an object too big for its gap makes
// the list be written whole, to the same JSON.
func TestSnapshotListGainsAndLosesObjectsInPlace(t *testing.T) {
	e, sc := laidOutWorld(t)
	names := e.api.Names(world.KindClaim)
	if len(names) < 8 {
		t.Fatalf("%d claims, want 8 or more", len(names))
	}
	dropped := []string{names[0], names[1], names[5], names[len(names)-1]} // the first two, one inside, the last
	objs := map[string]Obj{}
	for _, n := range dropped {
		objs[n] = e.api.Get(world.KindClaim, n)
		if err := e.api.Delete(world.KindClaim, n, ""); err != nil {
			t.Fatal(err)
		}
	}
	stay := func(changed ...string) {
		t.Helper()
		at, written := map[string]int{}, map[string]int{}
		for _, n := range e.api.Names(world.KindClaim) {
			if r := e.recordOf(world.KindClaim, n); r != nil && !slices.Contains(changed, n) {
				at[n], written[n] = r.from, r.encodedAt
			}
		}
		snap := e.snapshot()
		for n := range at {
			if r := e.recordOf(world.KindClaim, n); r.from != at[n] || r.encodedAt != written[n] || !e.inSnapshot(r) {
				t.Errorf("claim %s: at %d (was %d), written again for view %d (was %d)", n, r.from, at[n], r.encodedAt, written[n])
			}
		}
		sameAsFresh(t, e, sc, snap)
	}
	stay()
	if got := len(e.layout.Removed); got != len(dropped) {
		t.Errorf("the layout says %d claims removed, want %d", got, len(dropped))
	}
	again := []string{names[0], names[5], names[len(names)-1]}
	for _, n := range again {
		o := jsonobj.CloneObj(objs[n])
		delete(o["metadata"].(Obj), "uid")
		delete(o["metadata"].(Obj), "resourceVersion")
		if err := e.api.Create(world.KindClaim, o); err != nil {
			t.Fatal(err)
		}
	}
	stay(again...)
	if got := len(e.layout.Changed); got != len(again) {
		t.Errorf("the layout says %d claims changed, want %d", got, len(again))
	}
	for _, n := range again {
		if r := e.recordOf(world.KindClaim, n); r.encodedAt != e.viewGen || !e.inSnapshot(r) {
			t.Errorf("claim %s created again is not in the snapshot", n)
		}
	}
	// one that does not fit the gap it goes in (names[1]'s, between names[0] and names[2]): the list is
	// written whole
	big := jsonobj.CloneObj(objs[names[1]])
	delete(big["metadata"].(Obj), "uid")
	delete(big["metadata"].(Obj), "resourceVersion")
	big["metadata"].(Obj)["annotations"] = Obj{"big": strings.Repeat("x", 4000)}
	if err := e.api.Create(world.KindClaim, big); err != nil {
		t.Fatal(err)
	}
	sameAsFresh(t, e, sc, e.snapshot())
	if r := e.recordOf(world.KindClaim, names[2]); r.encodedAt != e.viewGen {
		t.Errorf("the list was not written whole for an object too big for its gap")
	}
}

// sameAsFresh checks that snap, the snapshot e wrote last, is the JSON a snapshot of e's world written
// afresh is, and carries every object where the layout says.
func sameAsFresh(t *testing.T, e *engine, sc *Scenario, snap []byte) {
	t.Helper()
	fresh := initialWorld(t, sc)
	fresh.api, fresh.world, fresh.clock = e.api, nil, e.clock
	want := fresh.snapshot()
	if !json.Valid(snap) || !bytes.Equal(jsonCompact(snap), jsonCompact(want)) {
		t.Fatalf("the snapshot written over the last is not the one written afresh:\n%s\n%s", jsonCompact(snap), jsonCompact(want))
	}
	for _, o := range e.layout.Objects {
		if d := sha256.Sum256(snap[o.From:o.To]); d != o.Digest {
			t.Errorf("%s %s is not where the layout says", o.List, o.UID)
		}
	}
}

// laidOutWorld is the world of a conformance case's 10-pod Parallel set with two claim templates, its first
// snapshot written, and its scenario.
func laidOutWorld(t *testing.T) (*engine, *Scenario) {
	t.Helper()
	sc := snapshotScenario(t, "../../internal/conformance/cases/large/parallel-10-vct2-delete-delete-to-4.snapshot.json")
	e := initialWorld(t, sc)
	e.snapshot()
	return e, sc
}

// jsonCompact is json.Compact of a snapshot.
func jsonCompact(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		panic(err)
	}
	return out.Bytes()
}
