package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// scope is the firewall's view of the world the module was just given, read from the world's own
// objects rather than by decoding the snapshot bytes again (which would cost as much as the sync).
// Claims carry the bytes the snapshot sent (objectsOf wrote them just before). (What the firewall reads
// of a pod or revision is its metadata: name, namespace, uid, labels, owner references.)
func (e *engine) scope() (*firewall.Scope, error) {
	var set appsv1.StatefulSet
	setJSON := mustJSON(e.api.set)
	if err := json.Unmarshal(setJSON, &set); err != nil {
		return nil, fmt.Errorf("firewall: statefulSet: %w", err)
	}
	s, err := firewall.NewScope(&set, setJSON)
	if err != nil {
		return nil, err
	}
	if e.scoped == nil {
		e.scoped = map[string]map[string]scopedObject{}
	}
	for _, kind := range []string{kindPod, kindRevision, kindClaim} {
		prev, next := e.scoped[kind], make(map[string]scopedObject, len(e.scoped[kind]))
		for _, n := range e.api.Names(kind) {
			o := e.api.objs[kind][n]
			md := jsonobj.GetObj(o, "metadata")
			uid, rv := jsonobj.GetStr(md, "uid"), jsonobj.GetStr(md, "resourceVersion")
			// what the firewall reads of an object, once per change (as objectsOf encodes it)
			so, ok := prev[n]
			if !ok || rv == "" || so.uid != uid || so.rv != rv || e.cfg.Model == ModelTick {
				if so, err = e.scopedObject(kind, o, md); err != nil {
					return nil, err
				}
				so.uid, so.rv = uid, rv
			}
			if verifyEncodedObjects && ok && so.rv == rv {
				fresh, err := e.scopedObject(kind, o, md)
				if err != nil || !reflect.DeepEqual(fresh.labels, so.labels) || !reflect.DeepEqual(fresh.refs, so.refs) || !bytes.Equal(fresh.raw, so.raw) {
					panic(fmt.Sprintf("replay: %s %s changed without a new resourceVersion (%s)", kind, n, rv))
				}
			}
			if rv != "" {
				next[n] = so
			}
			if err := s.Add(kind, n, jsonobj.GetStr(md, "namespace"), types.UID(uid), so.labels, so.refs, so.raw); err != nil {
				return nil, err
			}
		}
		e.scoped[kind] = next
	}
	return s, nil
}

// scopedObject is what the firewall reads of one object of the world at a resourceVersion.
type scopedObject struct {
	uid, rv string
	labels  map[string]string
	refs    []metav1.OwnerReference
	raw     json.RawMessage
}

func (e *engine) scopedObject(kind string, o, md Obj) (scopedObject, error) {
	var so scopedObject
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
	if kind == kindClaim {
		// the bytes the snapshot just sent (objectsOf), not encoded again
		if c, ok := e.encoded[kind][jsonobj.GetStr(md, "name")]; ok && c.uid == jsonobj.GetStr(md, "uid") && c.rv == jsonobj.GetStr(md, "resourceVersion") {
			so.raw = c.json
		} else {
			raw, err := e.enc.append(nil, o)
			if err != nil {
				return so, err
			}
			so.raw = raw
		}
	}
	return so, nil
}
