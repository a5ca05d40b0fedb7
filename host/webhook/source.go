package webhook

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// InformerSource serves a namespace's pods, ControllerRevisions and PVCs from shared informer caches, as
// the controller's snapshot builder reads them.
type InformerSource struct {
	factory informers.SharedInformerFactory
	pods    corelisters.PodLister
	revs    appslisters.ControllerRevisionLister
	claims  corelisters.PersistentVolumeClaimLister
	synced  []cache.InformerSynced
	all     []cache.SharedIndexInformer
}

// NewInformerSource watches one namespace ("" = all) of the cluster.
func NewInformerSource(client kubernetes.Interface, namespace string, resync time.Duration) *InformerSource {
	f := informers.NewSharedInformerFactoryWithOptions(client, resync, informers.WithNamespace(namespace))
	s := &InformerSource{factory: f}
	pi, ri, ci := f.Core().V1().Pods(), f.Apps().V1().ControllerRevisions(), f.Core().V1().PersistentVolumeClaims()
	s.pods, s.revs, s.claims = pi.Lister(), ri.Lister(), ci.Lister()
	s.all = []cache.SharedIndexInformer{pi.Informer(), ri.Informer(), ci.Informer()}
	for _, inf := range s.all {
		s.synced = append(s.synced, inf.HasSynced)
	}
	return s
}

// OnChange calls f after every add, update and delete the informers see (kubectl ordinal status --watch
// redraws on it); call it before Start.
func (s *InformerSource) OnChange(f func()) error {
	h := cache.ResourceEventHandlerFuncs{AddFunc: func(any) { f() }, UpdateFunc: func(any, any) { f() }, DeleteFunc: func(any) { f() }}
	for _, inf := range s.all {
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
	}
	return nil
}

// OnWatchError calls f when an informer's list or watch fails (it retries on its own); call it before Start.
func (s *InformerSource) OnWatchError(f cache.WatchErrorHandler) error {
	for _, inf := range s.all {
		if err := inf.SetWatchErrorHandler(f); err != nil {
			return err
		}
	}
	return nil
}

// Start starts the informers; they stop with ctx.
func (s *InformerSource) Start(ctx context.Context) { s.factory.Start(ctx.Done()) }

// WaitForSync waits for the initial lists (false if ctx ends first).
func (s *InformerSource) WaitForSync(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), s.synced...)
}

// HasSynced reports whether every informer has synced.
func (s *InformerSource) HasSynced() bool {
	for _, f := range s.synced {
		if !f() {
			return false
		}
	}
	return true
}

// Namespace lists the namespace's objects from the caches.
func (s *InformerSource) Namespace(ns string) ([]*corev1.Pod, []*appsv1.ControllerRevision, []*corev1.PersistentVolumeClaim, error) {
	pods, err := s.pods.Pods(ns).List(labels.Everything())
	if err != nil {
		return nil, nil, nil, err
	}
	revs, err := s.revs.ControllerRevisions(ns).List(labels.Everything())
	if err != nil {
		return nil, nil, nil, err
	}
	claims, err := s.claims.PersistentVolumeClaims(ns).List(labels.Everything())
	if err != nil {
		return nil, nil, nil, err
	}
	return pods, revs, claims, nil
}

// StaticSource is a fixed set of objects (tests, and `kubectl ordinal preview` over live lists).
type StaticSource struct {
	Pods      []*corev1.Pod
	Revisions []*appsv1.ControllerRevision
	Claims    []*corev1.PersistentVolumeClaim
	NotSynced bool
}

// HasSynced is true unless NotSynced.
func (s *StaticSource) HasSynced() bool { return !s.NotSynced }

// Namespace returns the objects of namespace ns.
func (s *StaticSource) Namespace(ns string) ([]*corev1.Pod, []*appsv1.ControllerRevision, []*corev1.PersistentVolumeClaim, error) {
	var p []*corev1.Pod
	var r []*appsv1.ControllerRevision
	var c []*corev1.PersistentVolumeClaim
	for _, o := range s.Pods {
		if o.Namespace == ns {
			p = append(p, o)
		}
	}
	for _, o := range s.Revisions {
		if o.Namespace == ns {
			r = append(r, o)
		}
	}
	for _, o := range s.Claims {
		if o.Namespace == ns {
			c = append(c, o)
		}
	}
	return p, r, c, nil
}
