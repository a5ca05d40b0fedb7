package wasm

import (
	"crypto/sha256"
	"fmt"
	"testing"
)

// What a session holds after a call that sent everything is rebuilt at every such call (a world whose uids
// repeat, as the tick model's do after it restarts its counters, never gets a delta): the maps of the call
// before last are filled again and an object held with the same bytes keeps its entry, so a steady set
// costs no allocation there (a 300-pod sync allocated ~100 KB).
func TestHoldAllReusesWhatItHeld(t *testing.T) {
	objs := make([]snapshotObject, 300)
	for i := range objs {
		uid := fmt.Sprintf("uid-%d", i)
		objs[i] = snapshotObject{heldObject: heldObject{list: "pods", uid: uid, rv: "1"}, ok: true,
			digest: sha256.Sum256([]byte(uid))}
	}
	s := &Session{}
	s.holdAll(objs)
	first := s.held[objs[7].digest]
	s.holdAll(objs)
	if !s.complete || len(s.held) != len(objs) || len(s.byUID) != len(objs) {
		t.Fatalf("held %d by digest, %d by uid, complete %v; want %d and true", len(s.held), len(s.byUID), s.complete, len(objs))
	}
	if s.held[objs[7].digest] != first || s.byUID[[2]string{"pods", "uid-7"}] != first {
		t.Error("an object held again with the same bytes got a new entry")
	}
	if n := testing.AllocsPerRun(20, func() { s.holdAll(objs) }); n != 0 {
		t.Errorf("holdAll of the same objects allocated %.0f times a call, want none", n)
	}
	// a changed object gets an entry of its own; the rest keep theirs
	objs[7].rv, objs[7].digest = "2", sha256.Sum256([]byte("uid-7 v2"))
	s.holdAll(objs)
	if e := s.held[objs[7].digest]; e == first || e == nil || e.rv != "2" || s.byUID[[2]string{"pods", "uid-7"}] != e {
		t.Errorf("the changed object's entry %+v (the old one %+v)", e, first)
	}
	// two objects of one uid: held by digest only, and no delta can build on it
	objs[8].uid, objs[8].rv = "uid-9", "3" // a version of uid-9 of its own
	s.holdAll(objs)
	if s.complete || s.byUID[[2]string{"pods", "uid-9"}] != nil || s.held[objs[8].digest] == nil {
		t.Errorf("a uid twice: complete %v, by uid %v", s.complete, s.byUID[[2]string{"pods", "uid-9"}])
	}
}
