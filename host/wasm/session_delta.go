package wasm

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/ordinal-dev/ordinal/abi"
)

// asDelta is snapshot as a delta on what the instance holds (abi/README.md, "Object deltas"): its lists keep
// only the objects the instance does not hold byte for byte, and a "delta" member names the held objects
// that are gone and counts each list. ok is false when the snapshot cannot be sent so: an object without a
// uid or resourceVersion, a uid twice in a list, or lists not laid out as plain arrays of their objects.
func (s *Session) asDelta(snapshot []byte, objs []snapshotObject) (wire []byte, ok bool) {
	now := make(map[[2]string]bool, len(objs))
	lists := map[string][]snapshotObject{}
	var d abi.Delta
	for _, o := range objs {
		k := [2]string{o.list, o.uid}
		if !o.ok || now[k] {
			return nil, false
		}
		now[k] = true
		lists[o.list] = append(lists[o.list], o)
		*listOf(&d.Counts, o.list)++
	}
	for _, h := range s.held {
		if !now[[2]string{h.list, h.uid}] {
			l := listOf(&d.Removed, h.list)
			*l = append(*l, h.uid)
		}
	}
	for _, l := range []*[]string{&d.Removed.Pods, &d.Removed.Revisions, &d.Removed.Claims} {
		if *l == nil {
			*l = []string{}
		}
		sort.Strings(*l) // the held map's order is random; the wire need not be
	}
	// Each list's elements, in the snapshot's order, are replaced by those the instance does not hold.
	type region struct {
		from, to int
		keep     []snapshotObject
	}
	var regions []region
	omitted := 0
	for _, l := range lists {
		sort.Slice(l, func(i, j int) bool { return l[i].from < l[j].from })
		r := region{from: l[0].from, to: l[len(l)-1].to}
		for i, o := range l {
			if i > 0 && !separatedByComma(snapshot[l[i-1].to:o.from]) {
				return nil, false
			}
			if h, held := s.held[o.digest]; held && h == o.heldObject {
				omitted++
				continue
			}
			r.keep = append(r.keep, o)
		}
		regions = append(regions, r)
	}
	sort.Slice(regions, func(i, j int) bool { return regions[i].from < regions[j].from })
	end := bytes.LastIndexByte(snapshot, '}')
	if end < 0 || (len(regions) > 0 && regions[len(regions)-1].to > end) {
		return nil, false
	}
	member, err := json.Marshal(d)
	if err != nil {
		return nil, false
	}
	out := make([]byte, 0, 1024)
	at := 0
	for _, r := range regions {
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
	out = append(out, snapshot[end:]...)
	s.st.Deltas++
	s.st.References += omitted
	return out, true
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
	b = bytes.TrimSpace(b)
	return len(b) == 1 && b[0] == ','
}
