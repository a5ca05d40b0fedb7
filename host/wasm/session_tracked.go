package wasm

import (
	"fmt"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/ordinal-dev/ordinal/abi"
)

// A host that writes its snapshots from a world it keeps (the replay) knows which objects it wrote since
// its previous snapshot: it can tell the session, which then builds the delta from those alone, without
// looking up every object's digest (abi/README.md, "Object deltas"). The session takes a host's changes
// only on top of the very layout its instance's objects came from (Layout.Since), and anything it cannot
// apply sends the snapshot as it would without them; the module still checks each list's count after a delta
// and answers StaleReference to anything it cannot apply.

// LaidList is one of a snapshot's object lists as its host wrote it: its elements are
// snapshot[From:To], Count of them, separated by single commas.
type LaidList struct {
	List     string
	From, To int
	Count    int
}

// LaidChange is an object of a layout its host wrote since the layout before: Objects[Index], and Replaces
// when it is a new version of an object that layout had with the same uid (else it is new).
type LaidChange struct {
	Index    int
	Replaces bool
}

// LaidKey names an object of a layout's list.
type LaidKey struct {
	List, UID string
}

// layoutIDs numbers layouts across the process, so that a session never takes one host's changes on top of
// another's layout.
var layoutIDs atomic.Uint64

// Next starts the layout of a host's next snapshot, which follows this one: Since is the one it follows,
// and the host then fills Objects and Lists and says in Changed and Removed what differs from it.
func (l *Layout) Next() {
	l.Since, l.ID = l.ID, layoutIDs.Add(1)
	l.Objects, l.Lists, l.Changed, l.Removed = l.Objects[:0], l.Lists[:0], l.Changed[:0], l.Removed[:0]
	l.Tracked = true
}

// VerifyTrackedChanges makes every delta built from a host's changes be built from the digests too, and
// panic when the two differ (tests: a host that missed a write would otherwise send the module an object
// as it was).
var VerifyTrackedChanges = false

// trackedObjects reports whether layout says, for the objects the session holds, what changed: it follows
// the layout the held objects came from and its lists are laid out.
func (s *Session) tracked(layout *Layout) bool {
	return layout != nil && layout.Tracked && layout.Since != 0 && layout.Since == s.laid && s.complete &&
		len(layout.Lists) > 0
}

// asTrackedDelta is asDelta from the host's changes: the objects Changed names are sent, those Removed
// names dropped, and every other object of the layout is the one the instance holds. nil when the changes do
// not fit what the session holds (the caller then sends the snapshot as without them).
func (s *Session) asTrackedDelta(snapshot []byte, layout *Layout) ([]byte, *sessionDelta) {
	s.marks++
	mark := s.marks
	var d abi.Delta
	change := &sessionDelta{}
	for _, l := range layout.Lists {
		if l.From < 0 || l.From > l.To || l.To > len(snapshot) {
			return nil, nil
		}
		*listOf(&d.Counts, l.List) += l.Count
	}
	for _, k := range layout.Removed {
		h := s.byUID[[2]string{k.List, k.UID}]
		if h == nil || h.mark == mark {
			return nil, nil
		}
		h.mark = mark
		l := listOf(&d.Removed, k.List)
		*l = append(*l, k.UID)
		change.dropped = append(change.dropped, h)
	}
	for _, c := range layout.Changed {
		if c.Index < 0 || c.Index >= len(layout.Objects) {
			return nil, nil
		}
		lo := layout.Objects[c.Index]
		if lo.From < 0 || lo.From > lo.To || lo.To > len(snapshot) || lo.UID == "" || lo.RV == "" || lo.Digest == ([32]byte{}) {
			return nil, nil
		}
		o := snapshotObject{from: lo.From, to: lo.To, digest: lo.Digest, heldObject: heldObject{list: lo.List, uid: lo.UID, rv: lo.RV}, ok: true}
		old := s.byUID[[2]string{o.list, o.uid}]
		switch {
		case (old != nil) != c.Replaces: // a uid another object has, or a new version of nothing held
			return nil, nil
		case old != nil && old.mark == mark: // its uid twice, or removed and changed
			return nil, nil
		case old != nil:
			old.mark = mark
			change.dropped = append(change.dropped, old)
		}
		change.sent = append(change.sent, o)
	}
	for _, l := range []*[]string{&d.Removed.Pods, &d.Removed.Revisions, &d.Removed.Claims} {
		if *l == nil {
			*l = []string{}
		}
		sort.Strings(*l)
	}
	sent := slices.Clone(change.sent)
	slices.SortFunc(sent, func(a, b snapshotObject) int { return a.from - b.from })
	regions := make([]*deltaRegion, 0, len(layout.Lists))
	for _, l := range layout.Lists {
		r := &deltaRegion{list: l.List, from: l.From, to: l.To}
		for _, o := range sent {
			if o.list != l.List {
				continue
			}
			if o.from < l.From || o.to > l.To {
				return nil, nil
			}
			r.keep = append(r.keep, o)
		}
		regions = append(regions, r)
	}
	out := s.splice(snapshot, regions, d)
	if out == nil {
		return nil, nil
	}
	if VerifyTrackedChanges {
		s.verifyTracked(snapshot, layout, change)
	}
	s.st.Deltas++
	s.st.Tracked++
	s.st.References += len(layout.Objects) - len(change.sent)
	return out, change
}

// verifyTracked panics unless the host's changes are what the digests say changed (tests).
func (s *Session) verifyTracked(snapshot []byte, layout *Layout, tracked *sessionDelta) {
	objs := s.laidObjects(snapshot, layout)
	s.st.Objects -= len(objs)
	var want []snapshotObject
	for _, o := range objs {
		if h := s.held[o.digest]; h == nil || h.heldObject != o.heldObject {
			want = append(want, o)
		}
	}
	key := func(o snapshotObject) string { return fmt.Sprintf("%s/%s/%s/%x", o.list, o.uid, o.rv, o.digest) }
	var got, exp []string
	for _, o := range tracked.sent {
		got = append(got, key(o))
	}
	for _, o := range want {
		exp = append(exp, key(o))
	}
	slices.Sort(got)
	slices.Sort(exp)
	if !slices.Equal(got, exp) {
		panic(fmt.Sprintf("wasm: the host's changes send %v, the digests say %v changed", got, exp))
	}
	if held := len(s.held) - len(tracked.dropped) + len(tracked.sent); held != len(objs) {
		var dropped []string
		for _, h := range tracked.dropped {
			dropped = append(dropped, h.list+"/"+h.uid+"/"+h.rv)
		}
		var lo, he []string
		for _, o := range objs {
			lo = append(lo, key(o))
		}
		for _, h := range s.held {
			he = append(he, fmt.Sprintf("%s/%s/%s/%x", h.list, h.uid, h.rv, h.digest))
		}
		panic(fmt.Sprintf("wasm: the host's changes leave %d objects held, the layout has %d (dropped %v, sent %v, removed %v, layout %v, held %v)", held, len(objs), dropped, got, layout.Removed, lo, he))
	}
}
