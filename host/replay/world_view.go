package replay

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/ordinal-dev/ordinal/host/replay/world"
)

// record is one object of the world as the engine last read it, and what each sync's readers made of it:
// the snapshot's encoding (objectsOf), the firewall's object (scope) and the pod grid's state (podStates).
// The view keeps the records in name order from sync to sync and reads again only the objects the API
// server's watch names (written since the last sync), so that a sync's host work is in what changed and a
// look along a list, not in a lookup per object (a 1000-pod preview spent more host time finding out that
// nothing had changed than in anything else). Each part is made again when the object's uid or
// resourceVersion changed: the world gives every change one, as kube-apiserver does. In the tick model, whose
// world rules change objects as the reference harness's do (its counters start again with every segment, so
// a uid and resourceVersion can come back; its collector writes none), every write the watch names is a new
// version.
type record struct {
	name    string
	o, md   Obj
	uid, rv string
	// version counts the changes of uid or resourceVersion the view saw; a part made for an older one is made
	// again.
	version int

	// the snapshot's: the object's JSON, its digest for the session (wasm.LaidObject.Digest), where the last
	// snapshot carries it, and the view it was written for (encodedAt: the scope takes a claim's bytes from it)
	json       []byte
	digest     [sha256.Size]byte
	encodedFor int
	encodedAt  int
	from, to   int
	// end is where its slot in the last snapshot ends (the next object's comma, or the list's end), and written
	// that json was encoded since that snapshot (objectsOf)
	end     int
	written bool

	// the snapshot's layout (objectsOf): the layout that last carried the object, its digest and uid there
	laidIn     uint64
	laidDigest [sha256.Size]byte
	laidUID    string

	// the firewall's (firewall.go)
	scoped    scopedObject
	scopedFor int

	// the pod grid's (timeline.go): member of the set under podsOfMembers' rule, and its state
	member  bool
	state   PodState
	gridFor int
	// regridding: the record waits in its kind's regrid; gone: the view dropped it
	regridding, gone bool
	gridSync         int // the view whose grid last read it (podStates)
}

// worldKind is the view of one kind: its records in name order, the watch that says which to read again,
// and the names removed since the scope last looked (its objects are kept by name).
type worldKind struct {
	records []*record
	watch   *world.Watch
	at      int // the view (viewGen) the records were brought up to date for
	gone    []string
	unlaid  []*record // the records dropped since the snapshot's layout last looked (objectsOf)
	// close is where the last snapshot's list of the kind ends (its ']'), written for the view closedAt
	close, closedAt int
	// regrid are the records read, added or dropped since the pod grid last looked (podStates), volatile
	// those read without a resourceVersion (no version tells their changes: the grid reads them every sync)
	regrid, volatile []*record
}

// current reports whether a part made for version v of r can be used as it is.
func (e *engine) current(r *record, v int) bool {
	return v == r.version && (r.rv != "" || e.cfg.Model == ModelTick)
}

// view is the world's objects of kind in name order as this sync reads them: snapshot starts a new view, and
// the sync's scope and pod grid read the same (the world does not change before the module's call).
func (e *engine) view(kind string) []*record {
	if e.world == nil {
		e.world = map[string]*worldKind{}
	}
	w := e.world[kind]
	if w == nil {
		w = &worldKind{watch: e.api.Watch(kind)}
		e.world[kind] = w
	} else if w.at == e.viewGen {
		return w.records
	}
	w.at = e.viewGen
	for _, n := range w.watch.Take() { // in name order, so each is found or inserted past the last
		i := sort.Search(len(w.records), func(i int) bool { return !world.NaturalLess(w.records[i].name, n) })
		o := e.api.Get(kind, n)
		found := i < len(w.records) && w.records[i].name == n
		switch {
		case o == nil && found:
			w.records[i].gone = true
			w.touch(w.records[i])
			w.unlaid = append(w.unlaid, w.records[i])
			w.records = slices.Delete(w.records, i, i+1)
			w.gone = append(w.gone, n)
		case o == nil:
		case found:
			w.records[i].read(o, e.cfg.Model == ModelTick)
			w.touch(w.records[i])
		default:
			r := &record{name: n}
			r.read(o, false)
			w.records = slices.Insert(w.records, i, r)
			w.touch(r)
		}
	}
	if verifyEncodedObjects {
		e.verifyView(kind, w.records)
	}
	return w.records
}

// touch notes that the view read r again, added or dropped it, for the pod grid (podStates).
func (w *worldKind) touch(r *record) {
	if !r.regridding {
		r.regridding = true
		w.regrid = append(w.regrid, r)
	}
	if r.rv == "" && !r.gone && !slices.Contains(w.volatile, r) {
		w.volatile = append(w.volatile, r)
	}
}

// read takes the object as the world holds it now; a new uid or resourceVersion is a new version, and so is
// any write when written says so (the tick model).
func (r *record) read(o Obj, written bool) {
	md, _ := o["metadata"].(Obj)
	uid, _ := md["uid"].(string)
	rv, _ := md["resourceVersion"].(string)
	if r.version == 0 || written || uid != r.uid || rv != r.rv {
		r.version++
	}
	r.o, r.md, r.uid, r.rv = o, md, uid, rv
}

// newSyncView starts the next sync's view: the world may have changed since.
func (e *engine) newSyncView() { e.viewGen++ }

// inSnapshot reports whether the last snapshot (this sync's) carries r as r.json, between r.from and r.to.
func (e *engine) inSnapshot(r *record) bool { return e.viewGen > 0 && r.encodedAt == e.viewGen }

// recordOf is the view's record of kind named name, nil when there is none.
func (e *engine) recordOf(kind, name string) *record {
	w := e.world[kind]
	if w == nil {
		return nil
	}
	i := sort.Search(len(w.records), func(i int) bool { return !world.NaturalLess(w.records[i].name, name) })
	if i < len(w.records) && w.records[i].name == name {
		return w.records[i]
	}
	return nil
}

// verifyView checks (tests) that the view holds the world: every object, in the API server's order, as
// stored, at the uid and resourceVersion it has, so that no write escaped the watches.
func (e *engine) verifyView(kind string, records []*record) {
	names := e.api.NameIndex(kind)
	if len(names) != len(records) {
		panic(fmt.Sprintf("replay: the view holds %d %ss, the world %d", len(records), kind, len(names)))
	}
	for i, r := range records {
		o := e.api.Get(kind, r.name)
		md, _ := o["metadata"].(Obj)
		uid, _ := md["uid"].(string)
		rv, _ := md["resourceVersion"].(string)
		if names[i] != r.name || !sameObj(o, r.o) || !sameObj(md, r.md) || uid != r.uid || rv != r.rv {
			panic(fmt.Sprintf("replay: %s %s changed without the API server's watch telling", kind, r.name))
		}
	}
}

// sameObj reports whether a and b are one object (not two equal ones).
func sameObj(a, b Obj) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
