package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// The snapshot of one sync, written from the world's view: each list laid out once and then relaid per
// change (an object written since is copied over its old bytes, gaps filled with blanks), and the layout
// (wasm.Layout) that tells the module's session which objects changed since its previous call.

func (e *engine) snapshot() []byte {
	e.newSyncView() // the world as it is now; the sync's scope and pod grid read the same view
	// The buffer of the previous snapshot is reused unless a segment kept it; it grows by a few
	// objects a sync at most.
	b := e.snapBuf[:0]
	if b == nil {
		b = make([]byte, 0, e.snapSize+e.snapSize/4)
	}
	// What the encoder makes of {"abi":1,"now":...,"statefulSet":...,"pods":[...],...,"eventActions":true}
	// (keys sorted), each listed object encoded once per change (encodedObjects).
	e.layout.Next()                      // and what changed since the previous snapshot's, for the session (objectsOf)
	e.layout.Objects = e.laidObjects[:0] // over the previous layout's objects (relayList)
	b = append(b, `{"abi":`...)
	b = strconv.AppendInt(b, abi.Version, 10)
	b = append(b, `,"claims":`...)
	b = e.objectsOf(b, world.KindClaim)
	b = append(b, `,"eventActions":true`...) // events are shown as the controller records them, after their writes
	var err error
	e.heads = e.heads[:0]
	if len(e.sc.Features) > 0 {
		b = append(b, `,"features":`...)
		at := len(b)
		if b, err = e.enc.append(b, e.sc.Features); err != nil {
			panic(fmt.Sprintf("replay: encoding the world: %v", err))
		}
		e.heads = append(e.heads, headSpan{"features", at, len(b), ""})
	}
	b = append(b, `,"now":`...)
	at := len(b)
	b = jsonv.AppendString(b, e.clock.Now().Format(time.RFC3339))
	e.heads = append(e.heads, headSpan{"now", at, len(b), ""})
	b = append(b, `,"pods":`...)
	b = e.objectsOf(b, world.KindPod)
	b = append(b, `,"revisions":`...)
	b = e.objectsOf(b, world.KindRevision)
	b = append(b, `,"statefulSet":`...)
	at = len(b)
	set := e.setJSON()
	b = append(b, set...)
	e.heads = append(e.heads, headSpan{"statefulSet", at, len(b), unsafe.String(unsafe.SliceData(set), len(set))})
	b = append(b, '}')
	e.snapSize, e.snapBuf, e.laidObjects = len(b), b, e.layout.Objects
	if verifyEncodedObjects && !json.Valid(b) {
		panic(fmt.Sprintf("replay: a snapshot that is not JSON: %.2000s", b))
	}
	return b
}

// setJSON is the set's encoding, made once per object the world stores for it (every write of the set is a
// new object, as its resourceVersion is new): most syncs write no status, and the set is a few KB. The
// bytes are never written to, so the scope keeps them (snapshotSet).
func (e *engine) setJSON() []byte {
	set := e.api.StatefulSet()
	if set != nil && e.setEncoded != nil && sameObj(set, e.setEncodedOf) {
		if verifyEncodedObjects && !bytes.Equal(e.setEncoded, mustJSON(set)) {
			panic("replay: the StatefulSet changed in place")
		}
		return e.setEncoded
	}
	j, err := e.enc.append(nil, set)
	if err != nil {
		panic(fmt.Sprintf("replay: encoding the world: %v", err))
	}
	e.setEncoded, e.setEncodedOf = j, set
	return j
}

// headSpan is where one of the last snapshot's members other than its lists is: snapshot[from:to] is its value.
// text, when not empty, is the same value in bytes that are never written to (the set's, setJSON): headOf
// reads it without copying the snapshot's bytes into a string, as gjson.ParseBytes does, at every sync.
type headSpan struct {
	key      string
	from, to int
	text     string
}

// head is what policies are given of snap, the last snapshot, beside the plan's objects (policy.Run.Head):
// its members other than its lists, written from where snapshot put them.
func (e *engine) head(snap []byte) []byte {
	h := []byte(`{"abi":1`)
	for _, m := range e.heads {
		h = append(append(append(h, `,"`...), m.key...), `":`...)
		h = append(h, snap[m.from:m.to]...)
	}
	return h
}

// headOf is the member key of snap, the last snapshot, other than its lists, read from where snapshot put it
// (gjson.GetBytes(snap, key) is the same value, found by scanning every pod before the set).
func (e *engine) headOf(snap []byte, key string) gjson.Result {
	for _, m := range e.heads {
		if m.key == key && m.text != "" {
			if verifyEncodedObjects && m.text != string(snap[m.from:m.to]) {
				panic("replay: the set's bytes changed after the snapshot")
			}
			return gjson.Parse(m.text)
		}
		if m.key == key {
			return gjson.ParseBytes(snap[m.from:m.to])
		}
	}
	return gjson.GetBytes(snap, key)
}

// verifyEncodedObjects makes every snapshot encode each object again and compare, and every view check that
// it holds the world (tests: an object the world changed without a new resourceVersion, or without its
// watch telling, would otherwise reach the module as it was).
var verifyEncodedObjects = false

// objectsOf appends the world's objects of a kind as a JSON list, in name order. An object is encoded once
// per resourceVersion (record): the API server, the kubelet and the garbage collector give every change of
// an object a new one, as kube-apiserver does. Not in the tick model, whose world rules change pods as the
// reference harness's do, without one.
//
// The snapshot is written over the previous one (overPrevious), and an object stays where the previous
// snapshot had it whenever it can: unchanged, or changed and no longer than its slot, the space up to the
// next object's comma (white space pads it). An object that is new takes the space before the next one (a
// pod deleted and created again takes its old slot); one that does not fit moves the objects after it, and
// those are given room to grow (slack). A sync that changes a pod in a list of 1000 thus writes that pod, not
// the pods after it (a 1000-pod preview spent more time copying unchanged pods than in anything else the
// host did). The lists' objects are separated by a comma and white space, which JSON allows: the layout says
// where each object is (lay), and segments and the final world get the snapshot without it (compact).
func (e *engine) objectsOf(b []byte, kind string) []byte {
	b = append(b, '[')
	list, first := listOf[kind], len(b)
	records := e.view(kind)
	w := e.world[kind]
	if e.inPlace(b, w, records) {
		return e.relayList(b, list, w, records)
	}
	e.unlay(list, w)
	prev := e.viewGen - 1 // the view the previous snapshot was written for
	w.open, w.objAt = first, len(e.layout.Objects)
	if !e.overPrevious(b) {
		// A list written afresh (the first snapshot of a replay is) is given its room at once, rather than
		// by the buffer doubling as its objects and their room to grow are appended.
		need := 0
		for _, r := range records {
			if !e.current(r, r.encodedFor) {
				e.encode(r)
			}
			need += len(r.json) + len(r.json)/8 + 17
		}
		b = slices.Grow(b, need+need/4) // and some for the lists after it
	}
	var last *record
	lastClean, lastEnd := false, first // the previous object's slot is as the previous snapshot left it, to lastEnd
	for i, r := range records {
		if !e.current(r, r.encodedFor) {
			e.encode(r)
		}
		at := len(b) // where r goes when it follows the previous object at once
		if i > 0 {
			at++
		}
		stays := w.placed(r, prev) && r.from >= at && e.overPrevious(b) && (!r.written || len(r.json) <= r.end-r.from)
		clean, end := false, r.end
		if stays {
			clean = !r.written
			b = e.gapTo(b, r.from, i > 0, lastClean && r.from == lastEnd+1)
			if r.written {
				b = append(b, r.json...) // over its old bytes, within its slot
			} else {
				b = b[:r.from+len(r.json)] // where the previous snapshot left it
			}
		} else {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, r.json...)
		}
		r.written = false
		if last != nil {
			last.end = len(b) - len(r.json) - 1
		}
		from := len(b) - len(r.json)
		if verifyEncodedObjects {
			if fresh, _ := e.enc.append(nil, r.o); !bytes.Equal(fresh, r.json) || !bytes.Equal(b[from:], r.json) {
				panic(fmt.Sprintf("replay: %s %s changed without a new resourceVersion or a write the watch saw (%s)", kind, r.name, r.rv))
			}
		}
		if !stays && !e.nextStays(b, records, i, w) {
			b = appendSpaces(b, len(r.json)/8+16) // room to grow, as the objects after it move anyway
		}
		r.encodedAt, r.from, r.to = e.viewGen, from, from+len(r.json)
		e.lay(list, r, len(e.layout.Objects))
		last, lastClean, lastEnd = r, clean, end
	}
	if w.closedAt == prev && w.close >= len(b) && e.overPrevious(b) { // the list ends where it did
		b = e.gapTo(b, w.close, false, lastClean && w.close == lastEnd)
	}
	if last != nil {
		last.end = len(b)
	}
	w.close, w.closedAt, w.walkedAt = len(b), e.viewGen, e.viewGen
	w.laidAt, w.laidWalk = e.layout.ID, e.layout.ID
	w.resized = false
	for _, r := range w.relay {
		r.relaying = false
	}
	w.relay = w.relay[:0]
	e.layout.Lists = append(e.layout.Lists, wasm.LaidList{List: list, From: first, To: len(b), Count: len(records)})
	return append(b, ']')
}

// inPlace reports whether the list of w can be written as the previous snapshot wrote it but for the objects
// read since (relayList): the list where it was in the buffer and in the layout, each object read since fits
// its slot, and the objects the view added fit the gaps between the objects that stay (listGaps: a dropped
// object's slot is one, and a pod deleted and created again fits its old slot). Those are encoded here.
func (e *engine) inPlace(b []byte, w *worldKind, records []*record) bool {
	prev := e.viewGen - 1
	if w.closedAt != prev || w.walkedAt == 0 || w.open != len(b) || !e.overPrevious(b) || w.close > cap(b) ||
		w.laidAt != e.layout.Since || w.objAt != len(e.layout.Objects) {
		return false
	}
	for _, r := range e.relayed(w) {
		switch {
		case r.gone && !w.placed(r, prev):
			return false // added and dropped since
		case r.gone:
		case !e.current(r, r.encodedFor):
			e.encode(r)
		}
		if !r.gone && w.placed(r, prev) && r.written && len(r.json) > r.end-r.from {
			return false
		}
	}
	if added, gone := e.resizedBy(w); w.objAt+len(records)-added+gone > cap(e.layout.Objects) {
		return false // the previous layout's objects of the list are not all there
	}
	e.gaps = e.gaps[:0]
	if w.resized {
		var ok bool
		if e.gaps, ok = e.listGaps(w, records); !ok {
			return false
		}
	}
	return true
}

// listGap is a stretch of a list written in place that the view added objects to or dropped objects from:
// the bytes from the end of records[p]'s object (the list's start when p is -1) to the start of records[s]'s
// (its end when s is len(records)), where the objects between them go (records[p+1:s], all added).
type listGap struct {
	p, s     int
	from, to int
}

// listGaps is the gaps of the list of w the view added or dropped objects in, false when an added object
// does not fit its gap (the list is then written whole).
func (e *engine) listGaps(w *worldKind, records []*record) ([]listGap, bool) {
	prev := e.viewGen - 1
	stays := func(i int) bool { return w.placed(records[i], prev) }
	gaps := e.gaps[:0]
	for _, r := range w.relay {
		if !r.gone && stays(indexOf(records, r.name)) {
			continue
		}
		p := indexOf(records, r.name) - 1 // the object before r's place, or r's own place when it is gone
		for p >= 0 && !stays(p) {
			p--
		}
		if slices.ContainsFunc(gaps, func(g listGap) bool { return g.p == p }) {
			continue
		}
		g := listGap{p: p, s: p + 1, from: w.open, to: w.close}
		for g.s < len(records) && !stays(g.s) {
			g.s++
		}
		if p >= 0 {
			g.from = records[p].from + len(records[p].json)
		}
		if g.s < len(records) {
			g.to = records[g.s].from
		}
		if g.to-g.from < gapNeeds(records, g) {
			return gaps, false
		}
		gaps = append(gaps, g)
	}
	return gaps, true
}

// gapNeeds is the bytes the objects added in g take, with the commas g holds.
func gapNeeds(records []*record, g listGap) int {
	n, objects := 0, g.s-g.p-1
	for _, r := range records[g.p+1 : g.s] {
		n += len(r.json)
	}
	if g.p >= 0 {
		objects++
	}
	if g.s < len(records) {
		objects++
	}
	return n + max(objects-1, 0)
}

// indexOf is where name is, or goes, in records (in name order).
func indexOf(records []*record, name string) int {
	i, _ := slices.BinarySearchFunc(records, name, func(r *record, name string) int {
		if r.name == name {
			return 0
		}
		if world.NaturalLess(r.name, name) {
			return -1
		}
		return 1
	})
	return i
}

// relayed is the records of w to write again: those the view read since the list was written, and in the
// delays model those without a resourceVersion (encoded at every sync, as no version tells their changes).
func (e *engine) relayed(w *worldKind) []*record {
	if e.cfg.Model == ModelTick {
		return w.relay
	}
	for _, r := range w.volatile {
		if !r.gone && r.rv == "" && !r.relaying {
			r.relaying = true
			w.relay = append(w.relay, r)
		}
	}
	return w.relay
}

// encode encodes r's object (a new version of it).
func (e *engine) encode(r *record) {
	var err error
	if e.scratch, err = e.enc.append(e.scratch[:0], r.o); err != nil {
		panic(fmt.Sprintf("replay: encoding the world: %v", err))
	}
	r.json, r.digest, r.encodedFor = bytes.Clone(e.scratch), sha256.Sum256(e.scratch), r.version
	r.written = true
}

// relayList writes the list of w in place (inPlace): the previous snapshot's list, each object read since
// written over its slot, the gaps objects were added to or dropped from written again (fillGap), and each
// laid out where the previous layout had it, the layout's entries of the objects dropped and added taken out
// and put in (relayout). A sync that changed, added or dropped a pod or two of a thousand writes and lays out
// those.
func (e *engine) relayList(b []byte, list string, w *worldKind, records []*record) []byte {
	first, prev := len(b), e.viewGen-1
	b = b[:w.close]
	l := &e.layout
	e.relayout(list, w, records)
	for _, r := range w.relay {
		if !r.gone && w.placed(r, prev) && r.written {
			copy(b[r.from:], r.json)
			r.to = r.from + len(r.json)
			for k := r.to; k < r.end; k++ {
				b[k] = ' '
			}
			r.written = false
		}
	}
	for _, g := range e.gaps {
		e.fillGap(b, records, g)
	}
	e.unlay(list, w)
	for _, r := range w.relay {
		r.relaying = false
		if r.gone {
			continue
		}
		r.encodedAt = e.viewGen
		e.lay(list, r, w.objAt+indexOf(records, r.name))
	}
	w.relay, w.resized = w.relay[:0], false
	slices.SortFunc(l.Changed, func(a, b wasm.LaidChange) int { return a.Index - b.Index })
	w.closedAt, w.laidAt = e.viewGen, l.ID
	if verifyEncodedObjects {
		e.verifyList(b, list, w, records)
	}
	l.Lists = append(l.Lists, wasm.LaidList{List: list, From: first, To: len(b), Count: len(records)})
	return append(b, ']')
}

// relayout makes the layout's objects the previous layout's (relayList) for the list of w, less the
// objects the view dropped and with room for those it added, in name order as the list has them.
func (e *engine) relayout(list string, w *worldKind, records []*record) {
	prev := e.viewGen - 1
	added, gone := e.resizedBy(w)
	l := &e.layout
	l.Objects = l.Objects[:w.objAt+len(records)-added+gone] // the previous layout's, where the list was
	if added == 0 && gone == 0 {
		return
	}
	for _, r := range w.relay {
		if r.gone {
			laid := l.Objects[w.objAt:]
			i, found := slices.BinarySearchFunc(laid, r.from, func(o wasm.LaidObject, from int) int { return o.From - from })
			if !found {
				panic(fmt.Sprintf("replay: %s %s dropped from a list the previous layout did not have it in", list, r.name))
			}
			l.Objects = slices.Delete(l.Objects, w.objAt+i, w.objAt+i+1)
		}
	}
	at := make([]int, 0, added) // where the added objects go, in order
	for _, r := range w.relay {
		if !r.gone && !w.placed(r, prev) {
			at = append(at, indexOf(records, r.name))
		}
	}
	slices.Sort(at)
	for _, i := range at {
		l.Objects = slices.Insert(l.Objects, w.objAt+i, wasm.LaidObject{}) // laid out by relayList
	}
}

// resizedBy is how many objects the view added to the list of w and dropped from it since the list was
// last written (its relay).
func (e *engine) resizedBy(w *worldKind) (added, gone int) {
	for _, r := range w.relay {
		if r.gone {
			gone++
		} else if !w.placed(r, e.viewGen-1) {
			added++
		}
	}
	return added, gone
}

// fillGap writes gap g of a list written in place (listGaps): white space, the objects added there each
// followed by its share of the room left (room to grow), and the commas between the objects on either side.
// The object before the gap keeps up to the room objectsOf gives an object.
func (e *engine) fillGap(b []byte, records []*record, g listGap) {
	for k := g.from; k < g.to; k++ {
		b[k] = ' '
	}
	added := records[g.p+1 : g.s]
	room := g.to - g.from - gapNeeds(records, g)
	at := g.from
	var last *record
	if g.p >= 0 {
		last = records[g.p]
		if len(added) > 0 {
			keep := min(room/2, len(last.json)/8+16)
			at, room = at+keep, room-keep
		}
	}
	for i, r := range added {
		if last != nil {
			b[at], last.end = ',', at
			at++
		}
		copy(b[at:], r.json)
		r.from, r.to, r.written = at, at+len(r.json), false
		at = r.to + room/len(added)
		if i == len(added)-1 {
			at = r.to + room/len(added) + room%len(added)
		}
		last = r
	}
	switch {
	case last != nil && g.s < len(records):
		b[g.to-1], last.end = ',', g.to-1
	case last != nil:
		last.end = g.to
	}
}

// verifyList checks (tests) that a list written in place holds every object where the layout says, in name
// order, and nothing else: between them only white space and the commas that separate them (the snapshot
// is checked to be JSON), so that the module decodes the list a whole snapshot written afresh has.
func (e *engine) verifyList(b []byte, list string, w *worldKind, records []*record) {
	at := w.open
	for i, r := range records {
		o := e.layout.Objects[w.objAt+i]
		want := wasm.LaidObject{List: list, From: r.from, To: r.to, UID: r.uid, RV: r.rv, Digest: r.digest}
		fresh, _ := e.enc.append(nil, r.o)
		if !w.placed(r, e.viewGen) || o != want || !bytes.Equal(b[r.from:r.to], r.json) || !bytes.Equal(fresh, r.json) ||
			r.from < at || !separates(b[at:r.from], i > 0) || r.end < r.to || i+1 < len(records) && r.end != records[i+1].from-1 {
			panic(fmt.Sprintf("replay: %s %s is not where the list written in place says", list, r.name))
		}
		at = r.to
	}
	if !separates(b[at:w.close], false) || len(records) > 0 && records[len(records)-1].end != w.close {
		panic(fmt.Sprintf("replay: the %s written in place end in more than white space", list))
	}
}

// separates reports whether gap, between two objects of a list (comma) or at its ends, is white space and
// the one comma between two objects.
func separates(gap []byte, comma bool) bool {
	commas := 0
	for _, c := range gap {
		switch c {
		case ',':
			commas++
		case ' ', '\n', '\t', '\r':
		default:
			return false
		}
	}
	want := 0
	if comma {
		want = 1
	}
	return commas == want
}

// gapTo extends b, written over the previous snapshot, to to: white space, and the comma before the object
// there when comma; nothing is written when clean (the previous snapshot has that gap already).
func (e *engine) gapTo(b []byte, to int, comma, clean bool) []byte {
	from := len(b)
	b = b[:to]
	if clean {
		return b
	}
	gap := b[from:to]
	for k := range gap {
		gap[k] = ' '
	}
	if comma {
		gap[len(gap)-1] = ','
	}
	return b
}

// nextStays reports whether what follows records[i] in its list (the next object, or the list's end) stays
// where the previous snapshot had it, b written so far (objectsOf).
func (e *engine) nextStays(b []byte, records []*record, i int, w *worldKind) bool {
	if !e.overPrevious(b) {
		return false
	}
	if i+1 < len(records) {
		n := records[i+1]
		return w.placed(n, e.viewGen-1) && n.from-1 >= len(b)
	}
	return w.closedAt == e.viewGen-1 && w.close >= len(b)
}

// appendSpaces appends n spaces.
func appendSpaces(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}

// compact is snap, the snapshot e.snapshot wrote last, without the white space between the objects of its
// lists (objectsOf): as a snapshot is written afresh. The layout says where each list and object is, so
// the objects are copied, not scanned (json.Compact of a 1000-pod world was most of what a preview's
// segments and final world cost). Everything else the encoder wrote compact.
func (e *engine) compact(snap []byte) json.RawMessage {
	out := make([]byte, 0, len(snap))
	at, objs := 0, e.layout.Objects
	for _, l := range e.layout.Lists {
		out = append(out, snap[at:l.From]...)
		for i, o := range objs[:l.Count] {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, snap[o.From:o.To]...)
		}
		objs, at = objs[l.Count:], l.To
	}
	out = append(out, snap[at:]...)
	if verifyEncodedObjects {
		var want bytes.Buffer
		if err := json.Compact(&want, snap); err != nil || !bytes.Equal(out, want.Bytes()) {
			panic(fmt.Sprintf("replay: the compact snapshot is not json.Compact's (%v)", err))
		}
	}
	return out
}

// lay puts r, at snapshot[r.from:r.to], in the snapshot's layout as its objects' index i (appended, or over the
// previous layout's entry there), and in its changes when the previous snapshot did not carry these bytes
// (wasm.Layout): an object new since, written since, or of another uid.
func (e *engine) lay(list string, r *record, i int) {
	l := &e.layout
	laid := r.w.laid(r, l.Since) // the previous snapshot carried it
	if laid && r.laidUID != r.uid {
		l.Removed = append(l.Removed, wasm.LaidKey{List: list, UID: r.laidUID})
	}
	if !laid || r.laidDigest != r.digest || r.laidUID != r.uid {
		l.Changed = append(l.Changed, wasm.LaidChange{Index: i, Replaces: laid && r.laidUID == r.uid})
	}
	r.laidIn, r.laidDigest, r.laidUID = l.ID, r.digest, r.uid
	o := wasm.LaidObject{List: list, From: r.from, To: r.to, UID: r.uid, RV: r.rv, Digest: r.digest}
	if i < len(l.Objects) {
		l.Objects[i] = o
	} else {
		l.Objects = append(l.Objects, o)
	}
}

// unlay adds to the snapshot's changes the objects of list the previous snapshot carried and the world
// removed since (the view's records of w it dropped).
func (e *engine) unlay(list string, w *worldKind) {
	for _, r := range w.unlaid {
		if w.laid(r, e.layout.Since) {
			e.layout.Removed = append(e.layout.Removed, wasm.LaidKey{List: list, UID: r.laidUID})
		}
	}
	w.unlaid = w.unlaid[:0]
}

// overPrevious reports whether b is being written over the previous snapshot's buffer (it is reused unless a
// segment kept it, and b has not outgrown it): an object unchanged since, at the offset it had there, is
// there already and is not copied again. A snapshot of 1000 pods is 1.5 MB, of which a sync changes a few
// objects: what comes before the first of them stays where it was.
func (e *engine) overPrevious(b []byte) bool {
	return cap(b) > 0 && cap(e.snapBuf) > 0 && &b[:1][0] == &e.snapBuf[:1][0]
}

// listOf is the snapshot key of each kind's list.
var listOf = map[string]string{world.KindPod: "pods", world.KindRevision: "revisions", world.KindClaim: "claims"}
