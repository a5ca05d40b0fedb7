package statefulset

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// Object deltas (abi/README.md, "Object deltas"): a snapshot with a "delta" member carries, in pods,
// revisions and claims, only the objects that are new or changed since the instance's previous call, and in
// delta.removed the uids of those gone; every other object of the previous call is in the world unchanged.
// A sync then decodes what changed, not the whole set: the instance keeps the previous call's objects in
// their order, drops what the delta removes or replaces, and appends what it adds. The plan is the plan of
// the whole snapshot (plans do not depend on the order of the lists; the differential tests hold it so).
// delta.counts is the host's count of each list after the delta: the module refuses a delta that does not
// leave that many, so a host and an instance that disagree about what is held get StaleReference, never a
// plan of another world.

// objectDelta is what one delta snapshot changes in the held objects, applied (commit) once the call is done.
type objectDelta struct {
	pods      kindDelta[pod]
	revisions kindDelta[revision]
	claims    kindDelta[claim]
}

// kindDelta is one kind's change: the entries removed or replaced, the entries sent, and the new order.
type kindDelta[T any] struct {
	dropped, sent, order []*cachedObject[T]
}

// changes reports whether the delta changes the kind at all.
func (k *kindDelta[T]) changes() bool { return len(k.dropped) > 0 || len(k.sent) > 0 }

// objectPtr is what the delta reads of a pod, revision or claim.
type objectPtr[T any] interface {
	*T
	meta() *objectMeta
}

func (p *pod) meta() *objectMeta      { return &p.Meta }
func (r *revision) meta() *objectMeta { return &r.Meta }
func (c *claim) meta() *objectMeta    { return &c.Meta }

var deltaKeys = [2]string{"removed", "counts"}
var listKeys = [3]string{"pods", "revisions", "claims"}

// delta decodes a delta snapshot's objects into snap, and, when the decode keeps its objects (d.next), the
// change to commit (snap.delta).
func (d *decoder) delta(deltaT, podsT, revsT, claimsT jsonv.Text, ns string, snap *snapshot, seen *objectKeys) {
	var dm [2]jsonv.Text
	d.objectText(deltaT, "delta").MembersInto(deltaKeys[:], dm[:])
	var removed, counts [3]jsonv.Text
	d.objectText(dm[0], "delta.removed").MembersInto(listKeys[:], removed[:])
	d.objectText(dm[1], "delta.counts").MembersInto(listKeys[:], counts[:])
	var n [3]int
	for i, c := range counts {
		v := textValue(c)
		if v.K == jsonv.Null {
			d.fail(d.join("delta.counts", listKeys[i]), "a delta says how many "+listKeys[i]+" the world has after it")
			continue
		}
		k, _ := d.integer(v, "delta.counts", listKeys[i], 32)
		n[i] = int(k)
	}
	if d.err != nil {
		return
	}
	prev := d.prev
	switch {
	case !prev.complete:
		d.staleDelta("this module instance holds no complete previous snapshot to apply a delta to: send the whole snapshot")
		return
	case prev.namespace != ns:
		d.staleDelta("the previous snapshot's set was in namespace " + strconv.Quote(prev.namespace) + ", this one's in " + strconv.Quote(ns) + ": send the whole snapshot")
		return
	}
	out := &objectDelta{}
	next := d.next
	if next == nil { // a decode that keeps nothing: its orders in storage of their own
		next = &objectMaps{}
	}
	ns = prev.namespace // the same, in memory of its own: held objects without a namespace are given it
	snap.Pods = applyDelta(d, "pods", "pod", ns, podsT, removed[0], n[0], &prev.pods, &prev.names, seen, d.pod, &next.pods, &out.pods)
	snap.Revisions = applyDelta(d, "revisions", "revision", ns, revsT, removed[1], n[1], &prev.revisions, &prev.names, seen, d.revision, &next.revisions, &out.revisions)
	snap.Claims = applyDelta(d, "claims", "claim", ns, claimsT, removed[2], n[2], &prev.claims, &prev.names, seen, d.claim, &next.claims, &out.claims)
	if d.err == nil && d.next != nil {
		snap.delta = out
	}
}

// staleDelta fails the decode with StaleReference: the host sends the whole snapshot.
func (d *decoder) staleDelta(msg string) {
	if d.err == nil {
		d.err = &PlanError{Code: CodeStaleReference, Path: "delta", Message: msg}
	}
}

// nameKey is how the API server names an object of a delta: its namespace, or the set's when it has none.
func nameKey(kind string, m *objectMeta, ns string) objectKey {
	return objectKey{kind, cmp.Or(m.Namespace, ns), m.Name}
}

// uidKey is the key of seen under which a delta's objects are found by uid (no namespace holds a NUL).
func uidKey(kind, uid string) objectKey { return objectKey{kind, "\x00uid", uid} }

// applyDelta is one list of a delta snapshot: held's objects less those removed or sent again, in their
// order (an object sent again in its place), then the new ones. storage holds the new order and the list.
func applyDelta[T any, PT objectPtr[T]](d *decoder, list, kind, ns string, sentT, removedT jsonv.Text, count int,
	held *heldKind[T], names, seen *objectKeys,
	decode func(jsonv.Text, string) PT, storage *heldKind[T], out *kindDelta[T]) []*T {
	if d.err != nil {
		return nil
	}
	mark := d.decodes
	rp := d.join("delta.removed", list)
	d.arrayText(removedT, rp, func(i int, t jsonv.Text) {
		if d.err != nil {
			return
		}
		p := d.index(rp, i)
		if textKind(t) != jsonv.String {
			d.fail(p, typeErr("string (a uid)", kindOf(t)))
			return
		}
		uid := t.Str()
		c, ok := held.byUID[uid]
		switch {
		case !ok:
			d.staleDelta("this module instance holds no " + kind + " with uid " + uid + " to remove: send the whole snapshot")
		case c.dropped == mark:
			d.fail(p, "the delta removes the "+kind+" with uid "+uid+" twice")
		default:
			c.dropped, c.next = mark, nil
			out.dropped = append(out.dropped, c)
		}
	})
	var added []*cachedObject[T]
	d.arrayText(sentT, list, func(i int, t jsonv.Text) {
		if d.err != nil {
			return
		}
		p := d.index(list, i)
		if _, _, ref := d.reference(t, p); ref {
			d.fail(p, "a delta snapshot carries its objects whole, not as references")
			return
		}
		v := decode(d.keep(t), p)
		if d.err != nil {
			return
		}
		m := v.meta()
		if m.UID == "" || m.ResourceVersion == "" {
			d.fail(d.join(p, "metadata"), "an object of a delta snapshot has a uid and a resourceVersion")
			return
		}
		key, uk := nameKey(kind, m, ns), uidKey(kind, m.UID)
		if at, dup := seen.get(key); dup {
			d.fail(d.join(p, "metadata.name"), "duplicate "+kind+" "+key.namespace+"/"+key.name+" (also at "+at+")")
			return
		}
		if at, dup := seen.get(uk); dup {
			d.fail(d.join(p, "metadata.uid"), "the delta sends the "+kind+" with uid "+m.UID+" twice (also at "+at+")")
			return
		}
		seen.set(key, p)
		seen.set(uk, p)
		c := &cachedObject[T]{uid: m.UID, rv: m.ResourceVersion, v: *v}
		if old, ok := held.byUID[m.UID]; ok {
			if old.dropped == mark {
				d.fail(d.join(p, "metadata.uid"), "the delta removes and sends the "+kind+" with uid "+m.UID)
				return
			}
			old.dropped, old.next = mark, c
			out.dropped = append(out.dropped, old)
		} else {
			added = append(added, c)
		}
		out.sent = append(out.sent, c)
	})
	if d.err != nil {
		return nil
	}
	// A name sent may be one a held object had that this delta removes or replaces; one a held object keeps
	// is a duplicate.
	for i, c := range out.sent {
		key := nameKey(kind, PT(&c.v).meta(), ns)
		if other, taken := names.get(key); taken && other != c.uid {
			if o := held.byUID[other]; o != nil && o.dropped != mark {
				d.fail(d.join(d.index(list, i), "metadata.name"), "duplicate "+kind+" "+key.namespace+"/"+key.name+" (also held from the previous snapshot, uid "+other+")")
				return nil
			}
		}
	}
	order, objs := deltaOrder[T, PT](held, storage, out, added, mark, ns)
	if len(order) != count {
		d.staleDelta("the delta leaves " + strconv.Itoa(len(order)) + " " + list + ", the host counted " + strconv.Itoa(count) + ": send the whole snapshot")
		return nil
	}
	out.order = order
	for _, c := range out.sent {
		heldNamespace[T, PT](c, ns)
	}
	return objs
}

// maxPatched is the most objects a delta drops for which deltaOrder patches a copy of the held order; above
// it, the order is made again from every held object.
const maxPatched = 16

// deltaOrder is held's order after the delta (in storage's), and the list of its objects: a copy of held's,
// each object replaced in its place and each removed one's place given to the last object (plans do not
// depend on the order of the lists), then the new ones. A copy costs a memmove; visiting every held object
// to ask whether the delta dropped it (a pointer to follow per object, per kind, per sync) was the largest
// part of a held 1000-pod sync's decode under TinyGo. The sync reads the held objects themselves, not copies:
// no write of a sync changes an object of the snapshot (those it changes, it copies first: copyPod,
// withTypeMeta), and a lazy tree it builds stays built for the next.
func deltaOrder[T any, PT objectPtr[T]](held, storage *heldKind[T], out *kindDelta[T], added []*cachedObject[T], mark uint64, ns string) (order []*cachedObject[T], objs []*T) {
	if len(out.dropped) > maxPatched {
		order = storage.order[:0]
		for _, c := range held.order {
			switch {
			case c.dropped != mark:
				order = append(order, c)
			case c.next != nil:
				order = append(order, c.next)
			}
		}
		order = append(order, added...)
		objs = storage.view[:0]
		for _, c := range order {
			heldNamespace[T, PT](c, ns)
			objs = append(objs, &c.v)
		}
		storage.view = objs
		return order, objs
	}
	order = append(storage.order[:0], held.order...)
	objs = append(storage.view[:0], objectsOf[T, PT](held, ns)...)
	for _, c := range out.dropped {
		i := slices.Index(order, c) // a held object: in the order (a complete snapshot holds each uid once)
		if c.next != nil {
			order[i], objs[i] = c.next, &c.next.v
			continue
		}
		last := len(order) - 1
		order[i], objs[i] = order[last], objs[last]
		order, objs = order[:last], objs[:last]
	}
	for _, c := range added {
		order, objs = append(order, c), append(objs, &c.v)
	}
	storage.view = objs
	return order, objs
}

// objectsOf is the list of h's objects in its order: made once for the objects of a whole snapshot (given the
// set's namespace where they have none, as a whole snapshot's decode gives its own copies), then kept by each
// delta's commit.
func objectsOf[T any, PT objectPtr[T]](h *heldKind[T], ns string) []*T {
	if !h.viewed || len(h.view) != len(h.order) {
		h.view = h.view[:0]
		for _, c := range h.order {
			heldNamespace[T, PT](c, ns)
			h.view = append(h.view, &c.v)
		}
		h.viewed = true
	}
	return h.view
}

// heldNamespace gives a held object the set's namespace when it has none.
func heldNamespace[T any, PT objectPtr[T]](c *cachedObject[T], ns string) {
	if m := PT(&c.v).meta(); m.Namespace == "" {
		m.Namespace = ns
	}
}

// commit makes a delta's change to the held objects: held's maps changed in place, the new order (in
// spare's storage) swapped with held's.
func (o *objectDelta) commit(held, spare *objectMaps) {
	commitKind(&o.pods, "pod", held.namespace, &held.pods, &spare.pods, &held.names)
	commitKind(&o.revisions, "revision", held.namespace, &held.revisions, &spare.revisions, &held.names)
	commitKind(&o.claims, "claim", held.namespace, &held.claims, &spare.claims, &held.names)
}

func commitKind[T any, PT objectPtr[T]](k *kindDelta[T], kind, ns string, held, spare *heldKind[T], names *objectKeys) {
	for _, c := range k.dropped {
		delete(held.byUID, c.uid)
		if key := nameKey(kind, PT(&c.v).meta(), ns); names.has(key, c.uid) {
			names.delete(key)
		}
	}
	for _, c := range k.sent {
		held.byUID[c.uid] = c
		names.set(nameKey(kind, PT(&c.v).meta(), ns), c.uid)
	}
	held.order, spare.order = k.order, held.order
	held.view, spare.view = spare.view, held.view // the list of the new order (deltaOrder), and storage
	held.viewed, spare.viewed = true, false
}
