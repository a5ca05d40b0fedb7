package snapshot

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// NewSetInformer is an informer on the sets of kind t in namespace ns, its list options tweaked (a field
// selector on one name, for `kubectl ordinal status --watch`).
func NewSetInformer(cfg *rest.Config, client kubernetes.Interface, t Target, ns string, tweak func(*metav1.ListOptions)) (cache.SharedIndexInformer, appslisters.StatefulSetLister, error) {
	t = t.OrApps()
	if !t.Custom {
		f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns), informers.WithTweakListOptions(tweak))
		sets := f.Apps().V1().StatefulSets()
		return sets.Informer(), sets.Lister(), nil
	}
	s, err := t.Scheme()
	if err != nil {
		return nil, nil, err
	}
	rc, err := JSONClient(cfg, t.GroupVersion, s)
	if err != nil {
		return nil, nil, err
	}
	inf := CustomSetInformer(rc, t, ns, 0, tweak)
	return inf, appslisters.NewStatefulSetLister(inf.GetIndexer()), nil
}

// CustomSetInformer lists and watches a custom target's sets in namespace ns through client, its JSON REST
// client (JSON, decoded by the target's scheme into *appsv1.StatefulSet), the list options tweaked (the
// controller's --selector), managedFields trimmed as on every informer (TrimManagedFields). The informer
// factory cannot make it: it keys informers by Go type, and apps/v1's has that type.
func CustomSetInformer(client rest.Interface, t Target, ns string, resync time.Duration, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer {
	if tweak == nil {
		tweak = func(*metav1.ListOptions) {}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			tweak(&o)
			return ListCustomSets(ctx, client, t, ns, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			tweak(&o)
			o.Watch = true
			return client.Get().Namespace(ns).Resource(t.Resource).
				VersionedParams(&o, metav1.ParameterCodec).Watch(ctx)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &appsv1.StatefulSet{}, resync,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = inf.SetTransform(TrimManagedFields) // fails only once started
	return inf
}

// ListCustomSets lists a custom target's sets in namespace ns ("": every namespace) through client, its JSON
// REST client (JSONClient), with options o: the one list of custom sets a controller makes (its informers'
// and the handover's consistent reads).
func ListCustomSets(ctx context.Context, client rest.Interface, t Target, ns string, o metav1.ListOptions) (*appsv1.StatefulSetList, error) {
	list := &appsv1.StatefulSetList{}
	err := client.Get().Namespace(ns).Resource(t.Resource).VersionedParams(&o, metav1.ParameterCodec).Do(ctx).Into(list)
	return list, err
}
