package statefulset

import (
	"strings"

	"github.com/ordinal-dev/ordinal/guest/jsonv"
)

// Unchanged objects (abi/README.md, "Unchanged objects"): a host may send, in place of a pod, revision or
// claim that the same module instance was given in the previous call with the same uid and
// resourceVersion, the reference {"unchanged":{"uid":"...","resourceVersion":"..."}}. The module keeps
// what it decoded of the previous snapshot's objects and reads the reference as that object, so a sync
// pays to parse what changed, not the whole set. A reference it cannot resolve is a StaleReference plan:
// the host sends the whole snapshot again.

// ObjectCache is what one module instance decoded of its previous snapshot's objects. The exports keep one
// per instance (guest/main.go); the logic reads the one it is given and leaves the snapshot's objects in it.
type ObjectCache struct {
	pods      map[string]cachedPod
	revisions map[string]cachedRevision
	claims    map[string]cachedClaim
}

// An entry whose rv is ambiguous stands for a uid two objects of one snapshot had: a reference to it
// cannot say which, so it resolves to nothing (an API server never shows two; a hand-made snapshot can).
const ambiguous = "\x00ambiguous"

type cachedPod struct {
	rv string
	v  pod // as decoded, before the sync (a sync works on copies: lazy trees are changed in place)
}

type cachedRevision struct {
	rv string
	v  revision
}

type cachedClaim struct {
	rv string
	v  claim
}

func newObjectCache(pods, revisions, claims int) *ObjectCache {
	return &ObjectCache{pods: make(map[string]cachedPod, pods), revisions: make(map[string]cachedRevision, revisions),
		claims: make(map[string]cachedClaim, claims)}
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
	t.Members(func(string, jsonv.Text) { n++ })
	m := members(t, "unchanged")
	ref := d.objectText(m[0], d.join(path, "unchanged"))
	if n != 1 {
		d.fail(path, "a reference to an unchanged object has no other member than \"unchanged\"")
	}
	f := members(ref, "uid", "resourceVersion")
	uid = d.strT(f[0], path, "unchanged.uid")
	rv = d.strT(f[1], path, "unchanged.resourceVersion")
	if d.err == nil && (uid == "" || rv == "") {
		d.fail(d.join(path, "unchanged"), "a reference names the object's uid and resourceVersion")
	}
	return uid, rv, true
}

// stale fails the decode: the instance does not hold the object a reference names.
func (d *decoder) stale(path, kind, uid, rv string) {
	if d.err == nil {
		d.err = &PlanError{Code: CodeStaleReference, Path: path, Message: "this module instance holds no " + kind + " with uid " +
			uid + " at resourceVersion " + rv + " from the previous snapshot: send the whole snapshot"}
	}
}

// podAt decodes pods[i]: sent whole, or named by a reference to the previous snapshot's.
func (d *decoder) podAt(t jsonv.Text, path string) *pod {
	if uid, rv, ok := d.reference(t, path); ok {
		if d.err != nil {
			return nil
		}
		c, found := d.prev.pods[uid]
		if !found || c.rv != rv {
			d.stale(path, "pod", uid, rv)
			return nil
		}
		p := c.v
		p.lazyObject = c.v.lazyObject.fresh()
		if _, dup := d.next.pods[uid]; dup {
			c = cachedPod{rv: ambiguous}
		}
		d.next.pods[uid] = c
		return &p
	}
	p := d.pod(t, path)
	if d.err == nil && d.next != nil && p.Meta.UID != "" && p.Meta.ResourceVersion != "" {
		c := cachedPod{rv: p.Meta.ResourceVersion, v: *p}
		if _, dup := d.next.pods[p.Meta.UID]; dup {
			c = cachedPod{rv: ambiguous}
		}
		d.next.pods[p.Meta.UID] = c
	}
	return p
}

// revisionAt decodes revisions[i], sent whole or by reference.
func (d *decoder) revisionAt(t jsonv.Text, path string) *revision {
	if uid, rv, ok := d.reference(t, path); ok {
		if d.err != nil {
			return nil
		}
		c, found := d.prev.revisions[uid]
		if !found || c.rv != rv {
			d.stale(path, "revision", uid, rv)
			return nil
		}
		r := c.v
		r.lazyObject = c.v.lazyObject.fresh()
		if _, dup := d.next.revisions[uid]; dup {
			c = cachedRevision{rv: ambiguous}
		}
		d.next.revisions[uid] = c
		return &r
	}
	r := d.revision(t, path)
	if d.err == nil && d.next != nil && r.Meta.UID != "" && r.Meta.ResourceVersion != "" {
		c := cachedRevision{rv: r.Meta.ResourceVersion, v: *r}
		if _, dup := d.next.revisions[r.Meta.UID]; dup {
			c = cachedRevision{rv: ambiguous}
		}
		d.next.revisions[r.Meta.UID] = c
	}
	return r
}

// claimAt decodes claims[i], sent whole or by reference.
func (d *decoder) claimAt(t jsonv.Text, path string) *claim {
	if uid, rv, ok := d.reference(t, path); ok {
		if d.err != nil {
			return nil
		}
		c, found := d.prev.claims[uid]
		if !found || c.rv != rv {
			d.stale(path, "claim", uid, rv)
			return nil
		}
		cl := c.v
		cl.lazyObject = c.v.lazyObject.fresh()
		if _, dup := d.next.claims[uid]; dup {
			c = cachedClaim{rv: ambiguous}
		}
		d.next.claims[uid] = c
		return &cl
	}
	t = d.objectText(t, path)
	cl := &claim{lazyObject: lazyObject{src: t}}
	var m [1]jsonv.Text
	t.MembersInto(podKeys[:1], m[:])
	cl.Meta = d.metaT(m[0], d.join(path, "metadata"), false)
	if d.err == nil && d.next != nil && cl.Meta.UID != "" && cl.Meta.ResourceVersion != "" {
		c := cachedClaim{rv: cl.Meta.ResourceVersion, v: *cl}
		if _, dup := d.next.claims[cl.Meta.UID]; dup {
			c = cachedClaim{rv: ambiguous}
		}
		d.next.claims[cl.Meta.UID] = c
	}
	return cl
}
