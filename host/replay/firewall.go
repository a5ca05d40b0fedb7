package replay

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/tidwall/gjson"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// scope is the firewall's view of the world the module was just given, read from the world's own
// objects rather than by decoding the snapshot bytes again (which would cost as much as the sync).
// Claims carry the bytes the snapshot sent (objectsOf wrote them just before). (What the firewall reads
// of a pod or revision is its metadata: name, namespace, uid, labels, owner references.)
func (e *engine) scope() (*firewall.Scope, error) {
	d := &e.scopeSet
	if d.of == nil || !sameObj(d.of, e.api.StatefulSet()) {
		if err := d.read(e.api.StatefulSet(), e.setJSON()); err != nil { // the bytes the snapshot just wrote
			return nil, err
		}
	} else if verifyEncodedObjects && !bytes.Equal(mustJSON(e.api.StatefulSet()), d.json) {
		panic("replay: the StatefulSet changed in place")
	}
	set := d.set // the firewall reads it; a copy all the same
	s, err := firewall.NewScope(&set, d.json)
	if err != nil {
		return nil, err
	}
	if e.scopeObjects == nil {
		e.scopeObjects = map[string]map[string]*firewall.Object{}
	}
	// The scope's objects are kept from sync to sync (the world is one namespace, the set's) and an object is
	// read again only when it changed (world_view.go): a sync pays for what changed.
	for _, kind := range []string{world.KindPod, world.KindRevision, world.KindClaim} {
		objs := e.scopeObjects[kind]
		if objs == nil {
			objs = map[string]*firewall.Object{}
			e.scopeObjects[kind] = objs
		}
		records := e.view(kind)
		w := e.world[kind]
		for _, n := range w.gone {
			delete(objs, n)
		}
		w.gone = w.gone[:0]
		changed := w.rescope
		if e.cfg.Model != ModelTick {
			changed = append(changed, w.volatile...) // objects without a resourceVersion: read every sync, as no version tells
		}
		for _, r := range changed {
			r.rescoping = false
			if r.gone {
				continue
			}
			if e.current(r, r.scopedFor) {
				if verifyEncodedObjects {
					fresh, err := e.scopedObject(kind, r)
					so := r.scoped
					if err != nil || !reflect.DeepEqual(fresh.labels, so.labels) || !reflect.DeepEqual(fresh.refs, so.refs) || !bytes.Equal(fresh.raw, so.raw) {
						panic(fmt.Sprintf("replay: %s %s changed without a new resourceVersion (%s)", kind, r.name, r.rv))
					}
				}
				continue
			}
			so, err := e.scopedObject(kind, r)
			if err != nil {
				return nil, err
			}
			r.scoped, r.scopedFor = so, r.version
			ns := cmp.Or(jsonobj.GetStr(r.md, "namespace"), s.Namespace)
			if ns != s.Namespace { // as Add: nothing outside the set's namespace may be written
				delete(objs, r.name)
				continue
			}
			o := firewall.NewObject(kind, r.name, ns, types.UID(r.uid), so.labels, so.refs, so.raw)
			o.Images, o.PodOf = so.images, so.pod
			objs[r.name] = o
		}
		w.rescope = w.rescope[:0]
		if verifyEncodedObjects {
			verifyScoped(kind, records, objs, s.Namespace)
		}
		if err := s.Use(kind, objs); err != nil {
			return nil, err
		}
	}
	// the revisions' data, which the firewall reads only for a status's update revision or a rollback
	s.SetRevisionData(func(name string) []byte {
		if r := e.api.Get(world.KindRevision, name); r != nil {
			return mustJSON(r["data"])
		}
		return nil
	})
	return s, nil
}

// verifyScoped checks (tests) that the scope's objects, kept from sync to sync and changed where the view
// read again, are the view's records in the set's namespace, each at its uid.
func verifyScoped(kind string, records []*record, objs map[string]*firewall.Object, ns string) {
	n := 0
	for _, r := range records {
		if cmp.Or(jsonobj.GetStr(r.md, "namespace"), ns) != ns {
			continue
		}
		n++
		if o := objs[r.name]; o == nil || string(o.UID) != r.uid {
			panic(fmt.Sprintf("replay: the scope's %s %s is not the world's", kind, r.name))
		}
	}
	if n != len(objs) {
		panic(fmt.Sprintf("replay: the scope holds %d %ss, the world %d", len(objs), kind, n))
	}
}

// decodedSet is the set the last scope was made from, decoded: the API server stores every write of the set
// as a new object, and a sync's host work decoding a set that had not changed was most of the scope's.
type decodedSet struct {
	of   Obj
	set  appsv1.StatefulSet
	json []byte
	// where json's metadata.resourceVersion and status are (statusOnly)
	rv, status gjson.Result
}

// read decodes the set o, whose JSON is j. A set whose JSON differs from the last one's only in its
// resourceVersion and status (the status the controller writes at every sync) has its status alone decoded:
// the rest is as decoded.
func (d *decodedSet) read(o Obj, j []byte) error {
	if verifyEncodedObjects && !bytes.Equal(j, mustJSON(o)) {
		panic("replay: the set's JSON is not the set's")
	}
	rv, status := gjson.GetBytes(j, "metadata.resourceVersion"), gjson.GetBytes(j, "status")
	if d.of != nil && d.statusOnly(j, rv, status) {
		var st appsv1.StatefulSetStatus
		if err := json.Unmarshal([]byte(status.Raw), &st); err != nil {
			return fmt.Errorf("firewall: statefulSet: %w", err)
		}
		d.set.Status, d.set.ResourceVersion = st, rv.String()
		if verifyEncodedObjects {
			var whole appsv1.StatefulSet
			if err := json.Unmarshal(j, &whole); err != nil || !reflect.DeepEqual(whole, d.set) {
				panic(fmt.Sprintf("replay: the set decoded by its status is not the set decoded whole (%v)", err))
			}
		}
	} else {
		d.of, d.set = nil, appsv1.StatefulSet{}
		if err := json.Unmarshal(j, &d.set); err != nil {
			return fmt.Errorf("firewall: statefulSet: %w", err)
		}
	}
	d.of, d.json, d.rv, d.status = o, j, rv, status
	return nil
}

// statusOnly reports whether the set j differs from the last one only in the value of its resourceVersion
// (rv) and its status: the bytes before, between and after them are the same.
func (d *decodedSet) statusOnly(j []byte, rv, status gjson.Result) bool {
	ok := func(r gjson.Result) bool {
		return r.Exists() && r.Index > 0 && r.Type == gjson.String || r.Type == gjson.JSON
	}
	if !ok(rv) || !ok(status) || !ok(d.rv) || !ok(d.status) || rv.Type != gjson.String || status.Index < rv.Index {
		return false
	}
	p := d.json
	rvEnd, pRVEnd := rv.Index+len(rv.Raw), d.rv.Index+len(d.rv.Raw)
	stEnd, pStEnd := status.Index+len(status.Raw), d.status.Index+len(d.status.Raw)
	return bytes.Equal(j[:rv.Index], p[:d.rv.Index]) && bytes.Equal(j[rvEnd:status.Index], p[pRVEnd:d.status.Index]) &&
		bytes.Equal(j[stEnd:], p[pStEnd:])
}

// scopedObject is what the firewall reads of one object of the world at a resourceVersion.
type scopedObject struct {
	labels map[string]string
	refs   []metav1.OwnerReference
	raw    json.RawMessage
	images map[string]string // a pod's (firewall.PodImages)
	// pod: the pod decoded, which the firewall asks for only for a pod the plan updates
	pod func() (*corev1.Pod, error)
}

func (e *engine) scopedObject(kind string, r *record) (scopedObject, error) {
	var so scopedObject
	md := r.md
	if l := jsonobj.GetObj(md, "labels"); l != nil {
		so.labels = make(map[string]string, len(l))
		for k, v := range l {
			so.labels[k], _ = v.(string)
		}
	}
	for _, r := range jsonobj.GetArr(md, "ownerReferences") {
		ref := metav1.OwnerReference{APIVersion: jsonobj.GetStr(r, "apiVersion"), Kind: jsonobj.GetStr(r, "kind"),
			Name: jsonobj.GetStr(r, "name"), UID: types.UID(jsonobj.GetStr(r, "uid"))}
		if c, ok := jsonobj.Get(r, "controller").(bool); ok {
			ref.Controller = &c
		}
		if b, ok := jsonobj.Get(r, "blockOwnerDeletion").(bool); ok {
			ref.BlockOwnerDeletion = &b
		}
		so.refs = append(so.refs, ref)
	}
	if kind == world.KindPod {
		so.images = map[string]string{}
		for _, list := range []string{"initContainers", "containers"} {
			for _, c := range jsonobj.GetArr(jsonobj.GetObj(r.o, "spec"), list) {
				so.images[list+"/"+jsonobj.GetStr(c, "name")] = jsonobj.GetStr(c, "image")
			}
		}
		o := r.o // the object at this resourceVersion: a write of the world replaces it
		so.pod = func() (*corev1.Pod, error) {
			var p corev1.Pod
			if err := json.Unmarshal(mustJSON(o), &p); err != nil {
				return nil, err
			}
			return &p, nil
		}
	}
	if kind == world.KindClaim {
		// the bytes the snapshot just sent (objectsOf), not encoded again
		if e.inSnapshot(r) {
			so.raw = r.json
		} else {
			raw, err := e.enc.append(nil, r.o)
			if err != nil {
				return so, err
			}
			so.raw = raw
		}
	}
	return so, nil
}
