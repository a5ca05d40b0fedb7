package replay

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// scope is the firewall's view of the world the module was just given, read from the world's own
// objects rather than by decoding the snapshot bytes again (which would cost as much as the sync).
// Claims carry their bytes as the snapshot does: the same encoder writes both. (What the firewall reads
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
	for _, kind := range []string{kindPod, kindRevision, kindClaim} {
		for _, n := range e.api.Names(kind) {
			o := e.api.objs[kind][n]
			md := jsonobj.GetObj(o, "metadata")
			var labels map[string]string
			if l := jsonobj.GetObj(md, "labels"); l != nil {
				labels = make(map[string]string, len(l))
				for k, v := range l {
					labels[k], _ = v.(string)
				}
			}
			var refs []metav1.OwnerReference
			for _, r := range jsonobj.GetArr(md, "ownerReferences") {
				ref := metav1.OwnerReference{APIVersion: jsonobj.GetStr(r, "apiVersion"), Kind: jsonobj.GetStr(r, "kind"),
					Name: jsonobj.GetStr(r, "name"), UID: types.UID(jsonobj.GetStr(r, "uid"))}
				if c, ok := jsonobj.Get(r, "controller").(bool); ok {
					ref.Controller = &c
				}
				if b, ok := jsonobj.Get(r, "blockOwnerDeletion").(bool); ok {
					ref.BlockOwnerDeletion = &b
				}
				refs = append(refs, ref)
			}
			var raw json.RawMessage
			if kind == kindClaim {
				if raw, err = e.enc.append(nil, o); err != nil {
					return nil, err
				}
			}
			if err := s.Add(kind, n, jsonobj.GetStr(md, "namespace"), types.UID(jsonobj.GetStr(md, "uid")), labels, refs, raw); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}
