package wasm

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/ordinal-dev/ordinal/abi"
)

// sessionDelta is what one delta changes in what the instance holds: the entries it removed or replaced,
// and the objects it sent (new, or replacing one of the same uid).
type sessionDelta struct {
	dropped []*heldEntry
	sent    []snapshotObject
}

// asDelta is snapshot as a delta on what the instance holds (abi/README.md, "Object deltas"): its lists keep
// only the objects the instance does not hold byte for byte, and a "delta" member names the held objects
// that are gone and counts each list. It costs one lookup of each object's digest and a look at each held
// entry (no map is built of the whole snapshot), plus what changed. nil when the snapshot cannot be sent so:
// an object without a uid or resourceVersion, a uid twice in a list, or lists not laid out as plain arrays
// of their objects.
func (s *Session) asDelta(snapshot []byte, objs []snapshotObject) ([]byte, *sessionDelta) {
	s.marks++
	mark := s.marks
	var d abi.Delta
	change := &sessionDelta{}
	var added map[[2]string]bool // uids of objects the instance does not hold, to find one sent twice
	// Each list's elements are replaced, in the snapshot, by those the instance does not hold: a list is the
	// region from its first element to its last, its elements in order and separated by commas (as every
	// host writes them; anything else is sent some other way).
	var regions []*deltaRegion
	omitted := 0
	for _, o := range objs {
		if !o.ok {
			return nil, nil
		}
		var r *deltaRegion
		for _, c := range regions {
			if c.list == o.list {
				r = c
			}
		}
		switch {
		case r == nil:
			r = &deltaRegion{list: o.list, from: o.from}
			regions = append(regions, r)
		case o.from < r.to || !separatedByComma(snapshot[r.to:o.from]):
			return nil, nil
		}
		r.to = o.to
		*listOf(&d.Counts, o.list)++
		if h := s.held[o.digest]; h != nil && h.heldObject == o.heldObject {
			if h.mark == mark { // the same object twice
				return nil, nil
			}
			h.mark = mark
			omitted++
			continue
		}
		k := [2]string{o.list, o.uid}
		if old := s.byUID[k]; old != nil {
			if old.mark == mark { // its uid twice
				return nil, nil
			}
			old.mark = mark
			change.dropped = append(change.dropped, old)
		} else {
			if added[k] {
				return nil, nil
			}
			if added == nil {
				added = map[[2]string]bool{}
			}
			added[k] = true
		}
		change.sent = append(change.sent, o)
		r.keep = append(r.keep, o)
	}
	for _, h := range s.held {
		if h.mark != mark {
			l := listOf(&d.Removed, h.list)
			*l = append(*l, h.uid)
			change.dropped = append(change.dropped, h)
		}
	}
	for _, l := range []*[]string{&d.Removed.Pods, &d.Removed.Revisions, &d.Removed.Claims} {
		if *l == nil {
			*l = []string{}
		}
		sort.Strings(*l) // the held map's order is random; the wire need not be
	}
	// Lists cannot interleave: only a comma separates one list's consecutive elements.
	out := s.splice(snapshot, regions, d)
	if out == nil {
		return nil, nil
	}
	s.st.Deltas++
	s.st.References += omitted
	return out, change
}

// commit makes held what the instance holds after it took the delta: what the delta dropped goes, what it
// sent comes (a cost in what changed).
func (s *Session) commit(c *sessionDelta) {
	for _, h := range c.dropped {
		if s.held[h.digest] == h {
			delete(s.held, h.digest)
		}
		if k := [2]string{h.list, h.uid}; s.byUID[k] == h {
			delete(s.byUID, k)
		}
	}
	for _, o := range c.sent {
		e := &heldEntry{heldObject: o.heldObject, digest: o.digest, mark: s.marks}
		s.held[o.digest], s.byUID[[2]string{o.list, o.uid}] = e, e
	}
}

// listOf is the member of v for a snapshot's list.
func listOf[T any](v *abi.ObjectLists[T], list string) *T {
	switch list {
	case "pods":
		return &v.Pods
	case "revisions":
		return &v.Revisions
	default:
		return &v.Claims
	}
}

// separatedByComma: b, between two elements of an array, is one comma and white space.
func separatedByComma(b []byte) bool {
	if len(b) == 1 { // as the hosts write them
		return b[0] == ','
	}
	b = bytes.TrimSpace(b)
	return len(b) == 1 && b[0] == ','
}

// deltaRegion is a list of the snapshot, from its first element to its last, and the elements of it the
// delta sends (those the instance does not hold), in order.
type deltaRegion struct {
	list     string
	from, to int
	keep     []snapshotObject
}

// splice is spliceDelta over the buffer of the session's previous delta, kept for the next (nil: as
// spliceDelta's, and the buffer kept as it was).
func (s *Session) splice(snapshot []byte, regions []*deltaRegion, d abi.Delta) []byte {
	out := spliceDelta(s.wire, snapshot, regions, d)
	if out != nil {
		s.wire = out
	}
	return out
}

// spliceDelta is the snapshot sent as a delta, written over buf: each region's elements replaced by those it
// keeps, separated by commas, and the delta member d before the snapshot's closing brace. nil: regions that
// overlap or pass the snapshot's end, or a d that does not encode (the caller sends the whole snapshot).
// The session passes the buffer of its previous delta (Session.wire): the wire is copied into the guest's
// memory and kept by nothing, and a new buffer per sync, grown from 1 KiB, was most of the splice's cost.
func spliceDelta(buf, snapshot []byte, regions []*deltaRegion, d abi.Delta) []byte {
	sort.Slice(regions, func(i, j int) bool { return regions[i].from < regions[j].from })
	end := bytes.LastIndexByte(snapshot, '}')
	if end < 0 || (len(regions) > 0 && regions[len(regions)-1].to > end) {
		return nil
	}
	member, err := json.Marshal(d)
	if err != nil {
		return nil
	}
	out := buf[:0]
	at := 0
	for _, r := range regions {
		if r.from < at {
			return nil
		}
		out = append(out, snapshot[at:r.from]...)
		for i, o := range r.keep {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, snapshot[o.from:o.to]...)
		}
		at = r.to
	}
	out = append(out, snapshot[at:end]...)
	out = append(out, `,"delta":`...)
	out = append(out, member...)
	return append(out, snapshot[end:]...)
}
