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
	rescoping        bool // it waits in its kind's rescope
	relaying         bool // it waits in its kind's relay
	w                *worldKind
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
	// rescope are the records read, added or dropped since the firewall's scope last looked (scope)
	rescope []*record
	// relay are the records read since the snapshot last wrote the list, and resized whether the view added or
	// dropped any since (objectsOf: a list the same but for a few objects is written, and laid out, in place)
	relay   []*record
	resized bool
	// where the last snapshot's list starts (after its '['), and its first object in the layout's objects;
	// walkedAt the view the last snapshot that wrote the whole list was written for, and laidAt and laidWalk
	// the layouts of the last snapshot that carried the list and of the last that wrote it whole: every object
	// the list holds since stays where that one put it (placed, laid)
	open, objAt      int
	walkedAt         int
	laidAt, laidWalk uint64
}

// placed reports whether the snapshot written for the view gen carries r where r.from and r.to say: r was
// written for it, or the list was and r stayed where the last whole list put it.
func (w *worldKind) placed(r *record, gen int) bool {
	return gen > 0 && (r.encodedAt == gen || w.closedAt == gen && w.walkedAt > 0 && r.encodedAt >= w.walkedAt)
}

// laid reports whether the layout id carried r (with r.laidDigest and r.laidUID), as placed does.
func (w *worldKind) laid(r *record, id uint64) bool {
	return r.laidIn != 0 && id != 0 && (r.laidIn == id || w.laidAt == id && w.laidWalk != 0 && r.laidIn >= w.laidWalk)
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
			w.resized = true
			w.touch(w.records[i])
			w.unlaid = append(w.unlaid, w.records[i])
			w.records = slices.Delete(w.records, i, i+1)
			w.gone = append(w.gone, n)
		case o == nil:
		case found:
			w.records[i].read(o, e.cfg.Model == ModelTick)
			w.touch(w.records[i])
		default:
			r := &record{name: n, w: w}
			r.read(o, false)
			w.resized = true
			w.records = slices.Insert(w.records, i, r)
			w.touch(r)
		}
	}
	if verifyEncodedObjects {
		e.verifyView(kind, w.records)
	}
	return w.records
}

// touch notes that the view read r again, added or dropped it, for the pod grid (podStates) and the scope.
func (w *worldKind) touch(r *record) {
	if !r.regridding {
		r.regridding = true
		w.regrid = append(w.regrid, r)
	}
	if !r.rescoping {
		r.rescoping = true
		w.rescope = append(w.rescope, r)
	}
	if !r.relaying {
		r.relaying = true
		w.relay = append(w.relay, r)
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
func (e *engine) inSnapshot(r *record) bool { return r.w.placed(r, e.viewGen) }

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
