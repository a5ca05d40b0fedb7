package statefulset

import (
	"strings"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// Unchanged objects (abi/README.md, "Unchanged objects"): a host may send, in place of a pod, revision or
// claim that the same module instance was given in the previous call with the same uid and
// resourceVersion, the reference {"unchanged":{"uid":"...","resourceVersion":"..."}}. The module keeps
// what it decoded of the previous snapshot's objects and reads the reference as that object, so a sync
// pays to parse what changed, not the whole set. A reference it cannot resolve is a StaleReference plan:
// the host sends the whole snapshot again.

// ObjectCache is what one module instance decoded of its previous snapshot's objects. The exports keep one
// per instance (guest/main.go); the logic reads the one it is given and leaves the snapshot's objects in it.
// A sync allocates for what changed: the maps of the call before last are emptied and filled again (an
// instance's memory only grows under TinyGo's leaking collector, and a host recycles a grown instance,
// which costs it a whole snapshot), and an unchanged object is the same entry in both.
//
// Its parts are pointers, made once per instance (nil: none yet): held by value, each call's copies of them
// escaped to the heap, about 1 KiB a sync.
type ObjectCache struct {
	held, spare *objectMaps
	seen        *objectKeys // unique's scratch, emptied and reused by each sync
	slab        *objectSlab // the sync's copies of referenced objects, reused by the next sync
	maps        *syncMaps   // the sync's lookup maps, emptied by the next sync
	set         *setMemo    // the set of the last sync, by its text (snapshot.go)
	// input: the held objects point into the input of the last call (a whole snapshot's: decoder.keep)
	input bool
}

// KeepsInput reports whether what the cache holds points into the input of the call that filled it: that
// buffer must then not be written over, and the exports give the next call another (guest/main.go).
func (c *ObjectCache) KeepsInput() bool { return c.input }

// objectSlab holds one sync's copies of the objects its snapshot named by reference. A copy per object per
// sync was most of what a referenced sync allocated (1000 pods: ~0.65 of 1.09 MB), and under TinyGo's
// leaking collector what a call allocates is what makes the host recycle the instance and send everything
// again; the next sync of the instance writes its copies over them (nothing keeps a sync's objects past
// its plan).
type objectSlab struct {
	pods      []pod
	revisions []revision
	claims    []claim
}

// reset makes the slab's storage ready for the next sync's copies.
func (s *objectSlab) reset() {
	s.pods, s.revisions, s.claims = s.pods[:0], s.revisions[:0], s.claims[:0]
}

// slabCopy stores v in the slab s (nil slab: a new allocation) and returns where. A full slab starts a new
// array instead of growing: the copies taken before stay where they are.
func slabCopy[T any](s *[]T, v T) *T {
	if s == nil {
		p := new(T) // not &v: v would then be moved to the heap on every path
		*p = v
		return p
	}
	if len(*s) == cap(*s) {
		*s = make([]T, 0, max(2*cap(*s), 64))
	}
	*s = append(*s, v)
	return &(*s)[len(*s)-1]
}

// objectMaps holds one snapshot's pods, revisions and claims by uid and in the snapshot's order, with what
// a delta snapshot (object_delta.go) is checked against.
type objectMaps struct {
	pods      heldKind[pod]
	revisions heldKind[revision]
	claims    heldKind[claim]
	names     objectKeys // the uid of each object by kind ("pod", "revision", "claim"), namespace, name
	namespace string     // the set's: objects without one are in it
	// complete: every object of the snapshot is held (each has a uid and a resourceVersion, no uid twice in a
	// list), so the snapshot is exactly what is held and a delta may build on it.
	complete bool
	decodes  uint64 // decodes against these objects so far: each marks what its delta drops with its number
}

// heldKind is one kind's objects of a snapshot: by uid, and in the snapshot's order.
type heldKind[T any] struct {
	byUID map[string]*cachedObject[T]
	// shared holds, by uid and resourceVersion, the objects whose uid another object of the snapshot had
	// (byUID has an ambiguous entry for it): a reference names both, so it still finds one, unless the two
	// had the same resourceVersion too. A world whose ids start again (the reference harness's, which the
	// replay's tick model follows) has a rollout's new pods share uids with the old ones for most of it.
	shared map[[2]string]*cachedObject[T]
	order  []*cachedObject[T]
	view   []*T // the objects of order (viewed: view mirrors order), kept and patched by delta syncs (object_delta.go)
	// viewed: view is order's objects
	viewed bool
}

// An entry whose rv is ambiguous stands for a uid two objects of one snapshot had (an API server never shows
// two; a hand-made snapshot, or a world whose ids start again, can): a reference then finds its object by
// uid and resourceVersion (heldKind.shared), and an ambiguous entry there, for both shared, is found by none.
const ambiguous = "\x00ambiguous"

// cachedObject is an object as decoded, at its resourceVersion. No sync changes it (a delta sync reads it in
// place and may build its lazy tree; other syncs read copies), so two snapshots share the entry; dropped and
// next are a delta's marks (object_delta.go).
type cachedObject[T any] struct {
	uid, rv string // uid: the key it is held under, in memory of its own (the input buffer is reused)
	v       T
	dropped uint64           // the decode (ObjectCache.decodes) whose delta removed or replaced it
	next    *cachedObject[T] // what replaced it in that delta (nil: removed)
}

// emptied makes the maps ready to collect a snapshot's objects: the same maps emptied, or new ones sized
// like the previous snapshot's.
func (m *objectMaps) emptied(like *objectMaps) {
	m.pods.emptied(len(like.pods.byUID))
	m.revisions.emptied(len(like.revisions.byUID))
	m.claims.emptied(len(like.claims.byUID))
	m.names.clear()
	m.namespace, m.complete = "", true
}

func (h *heldKind[T]) emptied(like int) {
	if h.byUID == nil {
		h.byUID = make(map[string]*cachedObject[T], like)
	}
	clear(h.byUID)
	clear(h.shared)
	clear(h.order) // no pointers kept alive from the storage
	h.order = h.order[:0]
	h.viewed = false
}

// lookup resolves a reference in one kind's objects of the previous snapshot and holds it for the next
// (ok false: stale, and the decode fails).
func lookup[T any](d *decoder, prev, next *heldKind[T], path, kind, uid, rv string) (v T, ok bool) {
	c, found := prev.byUID[uid]
	if found && c.rv == ambiguous {
		c, found = prev.shared[[2]string{uid, rv}]
	}
	if !found || c.rv != rv {
		d.stale(path, kind, uid, rv)
		return v, false
	}
	hold(d, next, c)
	return c.v, true
}

// hold keeps an object for the next call (next nil: nothing is kept); a uid held twice is ambiguous, and an
// object without a uid or resourceVersion is not held (and the snapshot is then not complete).
func hold[T any](d *decoder, next *heldKind[T], c *cachedObject[T]) {
	if next == nil {
		return
	}
	if c.uid == "" || c.rv == "" {
		d.next.complete = false
		return
	}
	if first, dup := next.byUID[c.uid]; dup {
		d.next.complete = false
		if first.rv != ambiguous {
			next.byUID[c.uid] = &cachedObject[T]{uid: c.uid, rv: ambiguous}
			next.holdShared(first)
		}
		next.holdShared(c)
		return
	}
	next.byUID[c.uid] = c
	next.order = append(next.order, c)
}

// holdShared keeps an object whose uid another object of the snapshot has, by uid and resourceVersion; two
// that share both are ambiguous.
func (h *heldKind[T]) holdShared(c *cachedObject[T]) {
	if h.shared == nil {
		h.shared = map[[2]string]*cachedObject[T]{}
	}
	k := [2]string{c.uid, c.rv}
	if _, dup := h.shared[k]; dup {
		h.shared[k] = &cachedObject[T]{uid: c.uid, rv: ambiguous}
		return
	}
	h.shared[k] = c
}

// keep is the text of an object a delta sends, in memory of its own when the instance keeps it for its next
// call: what is decoded from it (names, uids, the lazy tree's source) points into the text, and the
// exports write the next call's input over this one's (guest/main.go), so nothing kept may point there.
// A whole snapshot's objects stay in its input, which the exports then keep (podAt, KeepsInput).
func (d *decoder) keep(t jsonv.Text) jsonv.Text {
	if d.next == nil {
		return t
	}
	return jsonv.Text(strings.Clone(string(t)))
}

// fresh copies a decoded object for one sync: its lazy tree unbuilt, so that a sync that changes the tree
// in place changes only its copy.
func (o lazyObject) fresh() lazyObject { return lazyObject{src: o.src} }

// unchangedPrefix is how a reference starts: an object whose only member is "unchanged".
const unchangedPrefix = `"unchanged"`

// reference reads an array element that names an unchanged object; ok is false for an object sent whole.
func (d *decoder) reference(t jsonv.Text, path string) (uid, rv string, ok bool) {
	s := strings.TrimLeft(string(t), " \t\r\n")
	if !strings.HasPrefix(s, "{") || !strings.HasPrefix(strings.TrimLeft(s[1:], " \t\r\n"), unchangedPrefix) {
		return "", "", false
	}
	n := 0
	var unchanged jsonv.Text
	t.Members(func(k string, v jsonv.Text) {
		n++
		if k == "unchanged" {
			unchanged = v
		}
	})
	ref := d.objectText(unchanged, d.join(path, "unchanged"))
	if n != 1 {
		d.fail(path, "a reference to an unchanged object has no other member than \"unchanged\"")
	}
	var f [2]jsonv.Text
	ref.MembersInto(referenceKeys[:], f[:])
	uid = d.strT(f[0], path, "unchanged.uid")
	rv = d.strT(f[1], path, "unchanged.resourceVersion")
	if d.err == nil && (uid == "" || rv == "") {
		d.fail(d.join(path, "unchanged"), "a reference names the object's uid and resourceVersion")
	}
	return uid, rv, true
}

var referenceKeys = [2]string{"uid", "resourceVersion"}

// stale fails the decode: the instance does not hold the object a reference names.
func (d *decoder) stale(path, kind, uid, rv string) {
	if d.err == nil {
		d.err = &PlanError{Code: CodeStaleReference, Path: path, Message: "this module instance holds no " + kind + " with uid " +
			uid + " at resourceVersion " + rv + " from the previous snapshot: send the whole snapshot"}
	}
}

// podAt decodes pods[i], which rest starts with (the rest of the list after it too: the pod's decode finds
// where it ends, returned as size, and the list is not scanned for it first): sent whole, or named by a
// reference to the previous snapshot's. A pod sent whole is decoded where it is, in the input (the exports
// keep a whole snapshot's input: ObjectCache.KeepsInput), into the entry that holds it: the sync reads the
// held pod itself, as a delta sync does (no write of a sync changes a pod of the snapshot; object_delta.go).
// A copy of each pod's text and another of what was decoded from it were most of what a whole snapshot's
// decode allocated.
func (d *decoder) podAt(rest jsonv.Text, path string) (p *pod, size int) {
	if uid, rv, ok := d.reference(rest, path); ok {
		if d.err != nil {
			return nil, 0
		}
		p, ok := lookup(d, &d.prev.pods, d.next.podKind(), path, "pod", uid, rv)
		if !ok {
			return nil, 0
		}
		p.lazyObject = p.lazyObject.fresh()
		return slabCopy(d.slabPods(), p), rest.ValueEnd()
	}
	if d.next == nil {
		p = new(pod)
		return p, d.podInto(p, rest, path)
	}
	c := new(cachedObject[pod])
	if size = d.podInto(&c.v, rest, path); d.err == nil {
		c.uid, c.rv = c.v.Meta.UID, c.v.Meta.ResourceVersion
		hold(d, &d.next.pods, c)
	}
	return &c.v, size
}

// revisionAt decodes revisions[i], sent whole or by reference.
func (d *decoder) revisionAt(t jsonv.Text, path string) *revision {
	if uid, rv, ok := d.reference(t, path); ok {
		if d.err != nil {
			return nil
		}
		r, ok := lookup(d, &d.prev.revisions, d.next.revisionKind(), path, "revision", uid, rv)
		if !ok {
			return nil
		}
		r.lazyObject = r.lazyObject.fresh()
		return slabCopy(d.slabRevisions(), r)
	}
	r := d.revision(t, path) // in place, as podAt's
	if d.err == nil {
		hold(d, d.next.revisionKind(), &cachedObject[revision]{uid: r.Meta.UID, rv: r.Meta.ResourceVersion, v: *r})
	}
	return r
}

// claimAt decodes claims[i], which rest starts with, sent whole or by reference, as podAt does.
func (d *decoder) claimAt(rest jsonv.Text, path string) (c *claim, size int) {
	if uid, rv, ok := d.reference(rest, path); ok {
		if d.err != nil {
			return nil, 0
		}
		c, ok := lookup(d, &d.prev.claims, d.next.claimKind(), path, "claim", uid, rv)
		if !ok {
			return nil, 0
		}
		c.lazyObject = c.lazyObject.fresh()
		return slabCopy(d.slabClaims(), c), rest.ValueEnd()
	}
	if d.next == nil {
		c = new(claim)
		return c, d.claimInto(c, rest, path)
	}
	h := new(cachedObject[claim])
	if size = d.claimInto(&h.v, rest, path); d.err == nil {
		h.uid, h.rv = h.v.Meta.UID, h.v.Meta.ResourceVersion
		hold(d, &d.next.claims, h)
	}
	return &h.v, size
}

// claim decodes a claim sent whole.
func (d *decoder) claim(t jsonv.Text, path string) *claim {
	c := new(claim)
	d.claimInto(c, t, path)
	return c
}

// claimInto decodes the claim rest starts with into *c and returns where it ends in rest.
func (d *decoder) claimInto(c *claim, rest jsonv.Text, path string) int {
	t := d.objectText(rest, path)
	var m [1]jsonv.Text
	end := t.MembersInto(podKeys[:1], m[:])
	if textKind(rest) != jsonv.Object {
		end = rest.ValueEnd() // not an object (an error): read as {}
	}
	t = rest[:end]
	*c = claim{lazyObject: lazyObject{src: t}, Meta: d.metaT(m[0], d.join(path, "metadata"), false)}
	return end
}

// The slab's arrays, nil without a slab (a decode that keeps nothing allocates its copies).
func (d *decoder) slabPods() *[]pod {
	if d.slab == nil {
		return nil
	}
	return &d.slab.pods
}

func (d *decoder) slabRevisions() *[]revision {
	if d.slab == nil {
		return nil
	}
	return &d.slab.revisions
}

func (d *decoder) slabClaims() *[]claim {
	if d.slab == nil {
		return nil
	}
	return &d.slab.claims
}

// The kinds of a set of maps that may be nil (a decode that keeps nothing).
func (c *objectMaps) podKind() *heldKind[pod] {
	if c == nil {
		return nil
	}
	return &c.pods
}

func (c *objectMaps) revisionKind() *heldKind[revision] {
	if c == nil {
		return nil
	}
	return &c.revisions
}

func (c *objectMaps) claimKind() *heldKind[claim] {
	if c == nil {
		return nil
	}
	return &c.claims
}
