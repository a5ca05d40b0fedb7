package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
)

// Session runs the syncs of one set (a replay, a preview, the controller's syncs of one set) so that each
// pays to parse what changed since the previous one (abi/README.md, "Unchanged objects"): it keeps to one
// instance while it can, and sends a pod, revision or claim that instance already holds — the same uid,
// resourceVersion and bytes as in its previous call — as a reference. Whatever it sends, the plan is the
// one the whole snapshot gets: an instance that another caller used meanwhile, or that was recycled, is
// sent everything; a reference the module cannot resolve (StaleReference) is answered by sending the whole
// snapshot again on the same instance. For modules whose describe lacks unchangedObjects it is Reconcile.
// Calls on one session are serialized.
type Session struct {
	mu   sync.Mutex // one call at a time: a session shared by goroutines serializes, never mixes its state
	m    *Module
	inst uint64                           // the id of the instance of the previous call; 0: none to keep to
	gen  int                              // its calls after that call: a call on it since, by anyone else, makes held void
	held map[[sha256.Size]byte]*heldEntry // what the instance holds, by the digest of the object's bytes
	// byUID is held by list and uid; complete: held is every object of the instance's previous call (each
	// had a uid and a resourceVersion, no uid twice in a list), so a delta can say what changed since
	// (abi/README.md, "Object deltas"); marks numbers the deltas (heldEntry.mark).
	byUID    map[[2]string]*heldEntry
	complete bool
	marks    uint64
	// laid is the Layout.ID of the layout held came from, when its host tracks changes (0: none)
	laid uint64
	// wire is the buffer of the last delta or snapshot with references sent, written over by the next
	// (spliceDelta, withReferences); cuts and refs are withReferences' own
	wire  []byte
	cuts  []referenceCut
	refs  []byte
	spare heldSpare // the maps of what it held before last, for holdAll to fill again
	st    SessionStats
}

// heldObject is an object an instance holds: its list in the snapshot, uid and resourceVersion.
type heldObject struct {
	list, uid, rv string
}

// heldEntry is a held object with its digest, and the delta that last found it in its snapshot.
type heldEntry struct {
	heldObject
	digest [sha256.Size]byte
	mark   uint64
}

// SessionStats counts what a Session sent.
type SessionStats struct {
	Calls      int // reconcile calls
	Objects    int // objects in the snapshots given
	References int // of which were not sent again: sent as references, or left out of a delta
	Deltas     int // calls sent as a delta
	Resent     int // calls sent again whole after a StaleReference
	Tracked    int // deltas built from the host's changes (Layout.Changed), not from every object's digest
	SentBytes  int // bytes sent to the module
	// Guest is the time spent in the module's calls (copy in, reconcile, copy out; CallStats.Guest), and
	// Whole the calls sent whole: the first, after a recycled instance or another caller, after a refusal.
	Guest time.Duration
	Whole int
}

// NewSession starts a Session on the module.
func (m *Module) NewSession() *Session { return &Session{m: m} }

// Module is the module the session runs.
func (s *Session) Module() *Module { return s.m }

// Stats returns what the session sent so far.
func (s *Session) Stats() SessionStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

// Layout says where a snapshot's listed objects are and what names them, as the host that wrote the
// snapshot knows it, so that a Session need not read the snapshot to find them (it still digests each).
type Layout struct {
	Objects []LaidObject
	// A host that tracks its changes (Tracked; Next starts each layout) numbers its layouts (ID) and says how
	// this one differs from the one before (Since): Lists are where its lists are, Changed the objects it
	// wrote since (new, or new bytes), Removed those gone. Objects not in Changed
	// must be, byte for byte, as the layout Since had them.
	ID, Since uint64
	Tracked   bool
	Lists     []LaidList
	Changed   []LaidChange
	Removed   []LaidKey
}

// idOf is the layout's ID when it tracks its changes, else 0.
func (l *Layout) idOf() uint64 {
	if l == nil || !l.Tracked {
		return 0
	}
	return l.ID
}

// LaidObject is one object of a snapshot's pods, revisions or claims: List is the list's key, the object's
// JSON is snapshot[From:To].
type LaidObject struct {
	List     string
	From, To int
	UID, RV  string
	// Digest, when not zero, is sha256 of snapshot[From:To], as the host computed it once per encoding of
	// the object (the session then need not hash every object of every snapshot).
	Digest [sha256.Size]byte
}

// LaidOut is the session's reconciler for one sync whose snapshot its host wrote and laid out (the
// controller's and the replay's builders do): given exactly those bytes, the session uses the layout and
// neither reads nor hashes the snapshot to find what changed; any other bytes (a replan's, with
// writeFailures) it reads itself.
type LaidOut struct {
	Session  *Session
	Snapshot []byte
	Layout   *Layout
}

// Reconcile is the session's Reconcile, with the layout where snapshot is the one laid out.
func (l LaidOut) Reconcile(ctx context.Context, snapshot []byte) ([]byte, error) {
	var layout *Layout
	if b := l.Snapshot; len(b) > 0 && len(snapshot) == len(b) && &snapshot[0] == &b[0] {
		layout = l.Layout
	}
	return l.Session.ReconcileLaidOut(ctx, snapshot, layout)
}

// Reconcile runs one sync of the session's set: the same answer as Module.Reconcile for snapshot.
func (s *Session) Reconcile(ctx context.Context, snapshot []byte) ([]byte, error) {
	return s.ReconcileLaidOut(ctx, snapshot, nil)
}

// ReconcileLaidOut is Reconcile with the snapshot's layout (nil: the session reads the snapshot for it).
// The layout must describe snapshot exactly: a host that writes the snapshot lays it out as it writes.
func (s *Session) ReconcileLaidOut(ctx context.Context, snapshot []byte, layout *Layout) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.m
	if !m.describe.UnchangedObjects {
		return m.Reconcile(ctx, snapshot)
	}
	st := CallStats{Path: pathDirect, InputBytes: len(snapshot)}
	ctx, done, err := m.beginDirect(ctx, len(snapshot))
	if err != nil {
		return nil, err
	}
	defer done()
	inst, err := s.instance(ctx)
	if err != nil {
		return nil, err
	}
	s.st.Calls++
	in := &sessionInput{snapshot: snapshot, layout: layout, modelled: true}
	wire, referenced, delta := s.wireFor(in)
	if !referenced {
		s.st.Whole++
	}
	out, gen, kept, err := s.call(ctx, inst, wire, &st)
	code := gjson.GetBytes(out, "error.code").Str
	if err == nil && referenced && code == abi.CodeStaleReference {
		// the instance did not hold what the session thought: once more, everything (never a wrong plan)
		s.st.Resent++
		s.st.Whole++
		delta = nil
		if inst, err = s.instance(ctx); err != nil {
			return nil, err
		}
		out, gen, kept, err = s.call(ctx, inst, snapshot, &st)
		code = gjson.GetBytes(out, "error.code").Str
	}
	s.settle(in, inst, gen, kept, err, code, delta)
	return out, err
}

// instance is the pool's instance for the session's next call, the one of its previous call if it can; what
// the session held is void on any other, or on that one if another call ran on it since.
func (s *Session) instance(ctx context.Context) (*directInstance, error) {
	inst, _, err := s.m.direct.getPreferring(ctx, func(i *directInstance) bool { return i.id == s.inst })
	if err != nil {
		s.forget()
		return nil, poolError(ctx, pathDirect, err)
	}
	if inst.id != s.inst || inst.calls != s.gen {
		s.dropHeld() // not the instance it held them on, or another call since
	}
	return inst, nil
}

// sessionInput is one call's snapshot, and its objects once a call needs every one (tracked changes need
// none): from the host's layout, or read from the snapshot (modelled false: it has lists the session cannot
// model, so it is sent whole and nothing of it is held).
type sessionInput struct {
	snapshot []byte
	layout   *Layout
	objs     []snapshotObject
	modelled bool
}

func (s *Session) objectsOf(in *sessionInput) []snapshotObject {
	if in.objs == nil {
		if in.objs = s.laidObjects(in.snapshot, in.layout); in.objs == nil {
			var lists []objectList
			lists, in.modelled = objectLists(in.snapshot)
			in.objs = s.objects(in.snapshot, lists)
		}
	}
	return in.objs
}

// wireFor is what the call sends: a delta from the host's tracked changes, else from every object's digest,
// else the snapshot with references to what the instance holds, else (nothing held) the snapshot; referenced
// when it is not the whole snapshot, delta what a delta sent changes in held once the instance took it.
func (s *Session) wireFor(in *sessionInput) (wire []byte, referenced bool, delta *sessionDelta) {
	useTracked := s.m.describe.ObjectDeltas && s.tracked(in.layout)
	if !useTracked {
		s.objectsOf(in)
	}
	if !in.modelled {
		s.dropHeld() // send it whole, and hold nothing of it after
	}
	switch {
	case len(s.held) == 0:
		return in.snapshot, false, nil
	case useTracked:
		if wire, delta = s.asTrackedDelta(in.snapshot, in.layout); delta != nil {
			s.st.Objects += len(in.layout.Objects)
			return wire, true, delta
		}
		if wire, delta = s.asDelta(in.snapshot, s.objectsOf(in)); delta != nil {
			return wire, true, delta
		}
	case s.m.describe.ObjectDeltas && s.complete:
		if wire, delta = s.asDelta(in.snapshot, in.objs); delta != nil {
			return wire, true, delta
		}
	}
	wire, referenced = s.withReferences(in.snapshot, s.objectsOf(in))
	return wire, referenced, nil
}

// settle records what the instance holds after the call: nothing after a failure, a recycled instance or a
// refused snapshot; what it held changed as the delta said; or every object of the snapshot.
func (s *Session) settle(in *sessionInput, inst *directInstance, gen int, kept bool, err error, code string, delta *sessionDelta) {
	switch {
	case err != nil || !kept:
		s.forget()
		return
	}
	s.inst, s.gen = inst.id, gen
	switch {
	case code != "" && code != abi.CodeSyncFailed:
		s.dropHeld() // a refused snapshot: the instance holds nothing now
	case !in.modelled:
		s.dropHeld()
	case delta != nil: // the instance holds what it held, changed as the delta said: so does held
		s.commit(delta)
		s.laid = in.layout.idOf()
	default:
		s.holdAll(s.objectsOf(in))
		s.laid = in.layout.idOf()
	}
}

// call runs one reconcile of wire on inst and gives inst back; gen is inst.calls after it, kept whether
// the instance went back to the pool.
func (s *Session) call(ctx context.Context, inst *directInstance, wire []byte, st *CallStats) (out []byte, gen int, kept bool, err error) {
	s.st.SentBytes += len(wire)
	gen = inst.calls + 1
	before := st.Guest
	out, err = s.m.callOn(ctx, inst, wire, st)
	s.st.Guest += st.Guest - before
	return out, gen, !st.Recycled, err
}

// forget drops the instance and what it held.
func (s *Session) forget() {
	s.inst, s.gen = 0, 0
	s.dropHeld()
}

// dropHeld: the instance holds nothing the session knows of (held, byUID and complete go together).
func (s *Session) dropHeld() { s.held, s.byUID, s.complete, s.laid = nil, nil, false, 0 }

// objectList is one of the snapshot's object lists and its elements, as gjson found them.
type objectList struct {
	name  string
	elems []gjson.Result
}

var listNames = []string{"pods", "revisions", "claims"}

// objectLists finds the snapshot's object lists and their elements (offsets into snapshot). ok is false
// for a snapshot the session cannot model as the module reads it: a list key twice (the module reads the
// last), an element gjson places wrongly (it reads without validating), or no JSON object at all.
func objectLists(snapshot []byte) (lists []objectList, ok bool) {
	root := gjson.ParseBytes(snapshot)
	if !root.IsObject() {
		return nil, false
	}
	seen := map[string]bool{}
	ok = true
	root.ForEach(func(k, v gjson.Result) bool {
		if !slices.Contains(listNames, k.Str) {
			return true
		}
		if seen[k.Str] {
			ok = false
			return false
		}
		seen[k.Str] = true
		if !v.IsArray() {
			return true
		}
		l := objectList{name: k.Str}
		v.ForEach(func(_, e gjson.Result) bool {
			if e.Index <= 0 || e.Index+len(e.Raw) > len(snapshot) || string(snapshot[e.Index:e.Index+len(e.Raw)]) != e.Raw {
				ok = false
				return false
			}
			l.elems = append(l.elems, e)
			return true
		})
		lists = append(lists, l)
		return ok
	})
	if !ok {
		return nil, false
	}
	return lists, true
}

// named reads what names an object as the module does (the last of repeated keys) by refusing objects
// that repeat metadata, uid or resourceVersion: ok is false for those and for objects without both.
func named(e gjson.Result) (uid, rv string, ok bool) {
	var md gjson.Result
	n := 0
	e.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "metadata" {
			md, n = v, n+1
		}
		return n < 2
	})
	if n != 1 {
		return "", "", false
	}
	nu, nr := 0, 0
	md.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "uid":
			nu++
			if v.Type == gjson.String {
				uid = v.Str
			}
		case "resourceVersion":
			nr++
			if v.Type == gjson.String {
				rv = v.Str
			}
		}
		return nu < 2 && nr < 2
	})
	return uid, rv, nu == 1 && nr == 1 && uid != "" && rv != ""
}

// snapshotObject is one listed object of a snapshot: where its bytes are, their digest, and what names it
// (ok: it has a uid and a resourceVersion, so a reference can name it).
type snapshotObject struct {
	from, to int
	digest   [sha256.Size]byte
	heldObject
	ok bool
}

// objects reads the snapshot's listed objects. Only an object the session has not seen with these bytes
// is read for its uid and resourceVersion.
func (s *Session) objects(snapshot []byte, lists []objectList) []snapshotObject {
	var out []snapshotObject
	for _, l := range lists {
		s.st.Objects += len(l.elems)
		for _, e := range l.elems {
			o := snapshotObject{from: e.Index, to: e.Index + len(e.Raw)}
			o.digest = sha256.Sum256(snapshot[o.from:o.to])
			if h, seen := s.held[o.digest]; seen && h.list == l.name {
				o.heldObject, o.ok = h.heldObject, true
			} else {
				uid, rv, ok := named(e)
				o.heldObject, o.ok = heldObject{list: l.name, uid: uid, rv: rv}, ok
			}
			out = append(out, o)
		}
	}
	return out
}

// laidObjects is objects for a snapshot whose layout the host gave (nil: none given, or one that does not
// fit the snapshot, which the session then reads itself).
func (s *Session) laidObjects(snapshot []byte, layout *Layout) []snapshotObject {
	if layout == nil {
		return nil
	}
	for _, l := range layout.Objects {
		if l.From < 0 || l.From > l.To || l.To > len(snapshot) {
			return nil
		}
	}
	out := make([]snapshotObject, 0, len(layout.Objects))
	s.st.Objects += len(layout.Objects)
	for _, l := range layout.Objects {
		o := snapshotObject{from: l.From, to: l.To, heldObject: heldObject{list: l.List, uid: l.UID, rv: l.RV}, digest: l.Digest}
		if o.digest == ([sha256.Size]byte{}) {
			o.digest = sha256.Sum256(snapshot[o.from:o.to])
		}
		o.ok = l.UID != "" && l.RV != ""
		out = append(out, o)
	}
	return out
}

// heldAfter is what an instance holds once it decoded a snapshot of these objects, by digest and by list
// and uid. Of a uid two objects of one list share, the module holds, by uid and resourceVersion, each whose
// resourceVersion the others have not, and byUID has none (no delta builds on such a snapshot: abi/README.md,
// "Object deltas"; a module from before holds none, and answers a reference to one with StaleReference,
// which the session answers with the whole snapshot). complete: it holds them all, each by its uid.
//
// The maps are spare's, cleared (a session's held before last: heldSpare), and an object held before with the
// same bytes keeps its entry (prev): a 300-pod sync allocated ~100 KB of maps and entries here each time.
func heldAfter(objs []snapshotObject, prev map[[sha256.Size]byte]*heldEntry, spare *heldSpare) (h map[[sha256.Size]byte]*heldEntry, byUID map[[2]string]*heldEntry, complete bool) {
	uids := spare.clearedUIDs(len(objs))
	var versions map[heldObject]int // of the uids shared, found once one is
	complete = true
	for _, o := range objs {
		if !o.ok {
			complete = false
			continue
		}
		k := [2]string{o.list, o.uid}
		if uids[k]++; uids[k] == 2 && versions == nil {
			versions = spare.clearedVersions()
		}
	}
	for i := 0; versions != nil && i < len(objs); i++ {
		if o := objs[i]; o.ok && uids[[2]string{o.list, o.uid}] > 1 {
			versions[o.heldObject]++
		}
	}
	h, byUID = spare.clearedHeld(len(objs))
	entry := func(o snapshotObject) *heldEntry {
		if e := prev[o.digest]; e != nil && e.heldObject == o.heldObject {
			return e
		}
		return &heldEntry{heldObject: o.heldObject, digest: o.digest}
	}
	for _, o := range objs {
		k := [2]string{o.list, o.uid}
		switch {
		case o.ok && uids[k] == 1:
			e := entry(o)
			h[o.digest], byUID[k] = e, e
		case o.ok && versions[o.heldObject] == 1:
			h[o.digest] = entry(o)
			complete = false
		default:
			complete = false
		}
	}
	return h, byUID, complete && len(h) == len(objs)
}

// heldSpare is what heldAfter fills again: the maps of what a session held before last, and its counts.
type heldSpare struct {
	held     map[[sha256.Size]byte]*heldEntry
	byUID    map[[2]string]*heldEntry
	uids     map[[2]string]int
	versions map[heldObject]int
}

func (sp *heldSpare) clearedHeld(n int) (map[[sha256.Size]byte]*heldEntry, map[[2]string]*heldEntry) {
	h, byUID := sp.held, sp.byUID
	sp.held, sp.byUID = nil, nil // the caller's now
	if h == nil || byUID == nil {
		return make(map[[sha256.Size]byte]*heldEntry, n), make(map[[2]string]*heldEntry, n)
	}
	clear(h)
	clear(byUID)
	return h, byUID
}

func (sp *heldSpare) clearedUIDs(n int) map[[2]string]int {
	if sp.uids == nil {
		sp.uids = make(map[[2]string]int, n)
	}
	clear(sp.uids)
	return sp.uids
}

func (sp *heldSpare) clearedVersions() map[heldObject]int {
	if sp.versions == nil {
		sp.versions = map[heldObject]int{}
	}
	clear(sp.versions)
	return sp.versions
}

// holdAll makes held what the instance holds after a call that sent every object of objs (heldAfter); the
// maps it held before are heldAfter's to fill next time.
func (s *Session) holdAll(objs []snapshotObject) {
	prevHeld, prevByUID := s.held, s.byUID
	s.held, s.byUID, s.complete = heldAfter(objs, prevHeld, &s.spare)
	s.spare.held, s.spare.byUID = prevHeld, prevByUID
}

// withReferences is snapshot with every object the instance holds byte for byte replaced by its reference
// (referenced: at least one was). The references are written into one buffer first, so the snapshot's copy
// is grown to its size at once (a guess, a quarter of the snapshot, grew or was mostly unused).
func (s *Session) withReferences(snapshot []byte, objs []snapshotObject) ([]byte, bool) {
	cuts, refs := s.cuts[:0], s.refs[:0] // buffers of the previous call's, written over
	size := len(snapshot)
	for _, o := range objs {
		if !o.ok {
			continue
		}
		if h, held := s.held[o.digest]; !held || h.heldObject != o.heldObject {
			continue
		}
		at := len(refs)
		var err error
		if refs, err = appendReference(refs, o.uid, o.rv); err != nil {
			refs = refs[:at]
			continue
		}
		cuts = append(cuts, referenceCut{o.from, o.to, [2]int{at, len(refs)}})
		size += len(refs) - at - (o.to - o.from)
		s.st.References++
	}
	s.cuts, s.refs = cuts, refs
	if len(cuts) == 0 {
		return snapshot, false
	}
	slices.SortFunc(cuts, func(a, b referenceCut) int { return a.from - b.from }) // lists in key order, not the snapshot's
	// Written over the buffer of the previous call's wire (Session.wire): it is copied into the guest's
	// memory and kept by nothing, and the snapshot with references is most of a snapshot's size each sync.
	out := slices.Grow(s.wire[:0], size)
	at := 0
	for _, c := range cuts {
		out = append(out, snapshot[at:c.from]...)
		out = append(out, refs[c.ref[0]:c.ref[1]]...)
		at = c.to
	}
	out = append(out, snapshot[at:]...)
	s.wire = out
	return out, true
}

// referenceCut is an object withReferences sends as a reference: snapshot[from:to] replaced by refs[ref[0]:ref[1]].
type referenceCut struct {
	from, to int
	ref      [2]int
}

// appendReference appends {"unchanged":{"uid":UID,"resourceVersion":RV}} as json.Marshal(abi.Unchanged)
// writes it, without reflection for the plain uids and resourceVersions an API server gives (one per object
// per sync).
func appendReference(b []byte, uid, rv string) ([]byte, error) {
	if !plainJSON(uid) || !plainJSON(rv) {
		ref, err := json.Marshal(abi.Unchanged{Unchanged: abi.ObjectRef{UID: uid, ResourceVersion: rv}})
		return append(b, ref...), err
	}
	b = append(b, `{"unchanged":{"uid":"`...)
	b = append(b, uid...)
	b = append(b, `","resourceVersion":"`...)
	b = append(b, rv...)
	return append(b, `"}}`...), nil
}

// plainJSON: s is written in JSON as it is (printable ASCII that encoding/json neither escapes nor
// HTML-escapes).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
