package replay

import "github.com/ordinal-dev/ordinal/internal/jsonobj"

// viewed is one object of the world as a sync reads it: its name, the object, its metadata, uid and
// resourceVersion. The snapshot builder, the firewall's scope and the pod grid each look at every object of
// the world at the start of a sync, to find what changed since the last (each keeps what it made of an
// object by uid and resourceVersion); reading names and metadata once for all three was a third of a 1000-pod
// preview's host time spent thrice.
type viewed struct {
	name    string
	o, md   Obj
	uid, rv string
}

// view is the world's objects of kind in name order, read once per sync: snapshot starts a new view, and the
// sync's scope and pod grid read the same (the world does not change before the module's call).
func (e *engine) view(kind string) []viewed {
	if v, ok := e.syncView[kind]; ok {
		return v
	}
	names := e.api.Names(kind)
	v := e.viewBufs[kind][:0]
	for _, n := range names {
		o := e.api.objs[kind][n]
		md := jsonobj.GetObj(o, "metadata")
		uid, _ := md["uid"].(string)
		rv, _ := md["resourceVersion"].(string)
		v = append(v, viewed{name: n, o: o, md: md, uid: uid, rv: rv})
	}
	if e.syncView == nil {
		e.syncView, e.viewBufs = map[string][]viewed{}, map[string][]viewed{}
	}
	e.syncView[kind], e.viewBufs[kind] = v, v
	return v
}

// newSyncView forgets the last sync's view: the world has changed since.
func (e *engine) newSyncView() { clear(e.syncView) }
