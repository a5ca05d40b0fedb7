package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// NewSetInformer is an informer on the sets of kind t in namespace ns, its list options tweaked (a field
// selector on one name, for `kubectl ordinal status --watch`).
func NewSetInformer(cfg *rest.Config, client kubernetes.Interface, t snapshot.Target, ns string, tweak func(*metav1.ListOptions)) (cache.SharedIndexInformer, appslisters.StatefulSetLister, error) {
	t = t.OrApps()
	if !t.Custom {
		f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns), informers.WithTweakListOptions(tweak))
		sets := f.Apps().V1().StatefulSets()
		return sets.Informer(), sets.Lister(), nil
	}
	rc, err := newRESTClients(cfg, t)
	if err != nil {
		return nil, nil, err
	}
	inf := customSetInformer(rc[t.GroupVersion], t, Config{Namespace: ns}, tweak)
	return inf, appslisters.NewStatefulSetLister(inf.GetIndexer()), nil
}
