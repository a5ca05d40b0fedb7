package controller

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// The informers' indexes (controller uid, owner uid, parent set) and the candidates a sync's snapshot is
// chosen from through them.

func controllerUIDIndex(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	uid := ""
	if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
		uid = string(ref.UID)
	}
	return []string{m.GetNamespace() + "/" + uid}, nil
}

func ownerUIDIndex(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, r := range m.GetOwnerReferences() {
		keys = append(keys, m.GetNamespace()+"/"+string(r.UID))
	}
	return keys, nil
}

// parentIndex keys an object by its name without the last "-suffix":
// web-3 -> web, web-6d4f9c -> web, data-web-0 -> data-web.
func parentIndex(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	i := strings.LastIndexByte(m.GetName(), '-')
	if i <= 0 {
		return nil, nil
	}
	return []string{m.GetNamespace() + "/" + m.GetName()[:i]}, nil
}

// candidates collects, from the informer indexes, a superset of what
// SelectObjects keeps for set (so the result equals SelectObjects over the
// whole namespace, without listing it).
func (c *Controller) candidates(set *appsv1.StatefulSet) (snapshot.Objects, error) {
	ns := set.Namespace
	o := snapshot.Objects{Set: set}
	g := c.caches.of(ns)
	if g == nil {
		return o, fmt.Errorf("no informers cache namespace %s (its shard is not held)", ns)
	}
	seen := map[string]bool{}
	collect := func(inf cache.SharedIndexInformer, index string, keys ...string) error {
		for _, k := range keys {
			items, err := inf.GetIndexer().ByIndex(index, k)
			if err != nil {
				return err
			}
			for _, it := range items {
				m := it.(metav1.Object)
				id := fmt.Sprintf("%T/%s", it, m.GetName())
				if seen[id] {
					continue
				}
				seen[id] = true
				switch x := it.(type) {
				case *corev1.Pod:
					o.Pods = append(o.Pods, x)
				case *appsv1.ControllerRevision:
					o.Revisions = append(o.Revisions, x)
				case *corev1.PersistentVolumeClaim:
					o.Claims = append(o.Claims, x)
				}
			}
		}
		return nil
	}
	own, orphan, parent := ns+"/"+string(set.UID), ns+"/", ns+"/"+set.Name
	if err := collect(g.pods, indexControllerUID, own, orphan); err != nil {
		return o, err
	}
	if err := collect(g.pods, indexParent, parent); err != nil {
		return o, err
	}
	if err := collect(g.revs, indexControllerUID, own, orphan); err != nil {
		return o, err
	}
	if err := collect(g.revs, indexParent, parent); err != nil {
		return o, err
	}
	claimKeys := []string{}
	for _, t := range set.Spec.VolumeClaimTemplates {
		claimKeys = append(claimKeys, ns+"/"+t.Name+"-"+set.Name)
	}
	if err := collect(g.pvcs, indexParent, claimKeys...); err != nil {
		return o, err
	}
	if err := collect(g.pvcs, indexOwnerUID, own); err != nil {
		return o, err
	}
	return o, nil
}
