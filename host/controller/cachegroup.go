package controller

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// cacheGroup is one set of the informers a sync reads: pods, ControllerRevisions, claims and each target's
// sets, with the controller's transform and indexes. Unsharded (or where the API server cannot filter by
// shard) one group caches everything the controller is given; sharded over a server that filters, each held
// shard has its own (caches.go).
type cacheGroup struct {
	// shardSelector is what the group's informers ask the API server for ("": everything).
	shardSelector string
	factory       informers.SharedInformerFactory
	pods          cache.SharedIndexInformer
	revs          cache.SharedIndexInformer
	pvcs          cache.SharedIndexInformer
	sets          map[schema.GroupResource]cache.SharedIndexInformer
	setListers    map[schema.GroupResource]appslisters.StatefulSetLister
	// custom: the set informers of custom kinds (not the factory's), run by start
	custom []cache.SharedIndexInformer

	stopOnce sync.Once
	cancel   context.CancelFunc
	running  sync.WaitGroup
}

// newCacheGroup builds a group's informers (not started) over the API server objects shardSelector selects
// ("": all), as --namespace and --selector allow: the one place a cache group is made.
func (sh *shared) newCacheGroup(shardSelector string) (*cacheGroup, error) {
	cfg := sh.cfg
	tweak := func(o *metav1.ListOptions) {
		cfg.selectorTweak(o)
		o.ShardSelector = shardSelector
	}
	// As kube-controller-manager's informers: managedFields are dropped on arrival. The controller never
	// reads them, and upstream's StatefulSet controller neither sees nor sends them. Pods no snapshot can
	// carry are kept as stubs, and the strings pods repeat are shared (informerTransform).
	opts := []informers.SharedInformerOption{informers.WithTransform(informerTransform(cfg.Targets))}
	if cfg.Namespace != "" {
		opts = append(opts, informers.WithNamespace(cfg.Namespace))
	}
	if cfg.Selector != "" || shardSelector != "" {
		opts = append(opts, informers.WithTweakListOptions(tweak))
	}
	g := &cacheGroup{shardSelector: shardSelector,
		factory:    informers.NewSharedInformerFactoryWithOptions(sh.client, cfg.Resync, opts...),
		sets:       map[schema.GroupResource]cache.SharedIndexInformer{},
		setListers: map[schema.GroupResource]appslisters.StatefulSetLister{}}
	g.pods = g.factory.Core().V1().Pods().Informer()
	g.revs = g.factory.Apps().V1().ControllerRevisions().Informer()
	g.pvcs = g.factory.Core().V1().PersistentVolumeClaims().Informer()
	for _, inf := range []cache.SharedIndexInformer{g.pods, g.revs} {
		if err := inf.AddIndexers(cache.Indexers{indexControllerUID: controllerUIDIndex, indexParent: parentIndex}); err != nil {
			return nil, err
		}
	}
	if err := g.pvcs.AddIndexers(cache.Indexers{indexParent: parentIndex, indexOwnerUID: ownerUIDIndex}); err != nil {
		return nil, err
	}
	for _, t := range cfg.Targets {
		var inf cache.SharedIndexInformer
		if !t.Custom {
			inf = g.factory.Apps().V1().StatefulSets().Informer()
		} else {
			inf = snapshot.CustomSetInformer(sh.rest[t.GroupVersion], t, cfg.Namespace, cfg.Resync, tweak)
			g.custom = append(g.custom, inf)
		}
		g.sets[t.GroupResource()] = inf
		g.setListers[t.GroupResource()] = appslisters.NewStatefulSetLister(inf.GetIndexer())
	}
	return g, nil
}

// start runs the group's informers until stop.
func (g *cacheGroup) start(ctx context.Context) {
	ctx, g.cancel = context.WithCancel(ctx)
	g.factory.Start(ctx.Done())
	for _, inf := range g.custom {
		g.running.Go(func() { inf.RunWithContext(ctx) })
	}
}

// stop ends the group's informers and waits for them: nothing holds its objects afterwards.
func (g *cacheGroup) stop() {
	g.stopOnce.Do(func() {
		if g.cancel != nil {
			g.cancel()
		}
		g.factory.Shutdown()
		g.running.Wait()
	})
}

// synced is every informer's HasSynced, to wait on.
func (g *cacheGroup) synced() []cache.InformerSynced {
	out := []cache.InformerSynced{g.pods.HasSynced, g.revs.HasSynced, g.pvcs.HasSynced}
	for _, inf := range g.sets {
		out = append(out, inf.HasSynced)
	}
	return out
}

// waitSynced waits until every informer of the group has synced (false: ctx ended first).
func (g *cacheGroup) waitSynced(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), g.synced()...)
}

// store is the store of resource gr's informer (nil: the group has none).
func (g *cacheGroup) store(gr schema.GroupResource) cache.Indexer {
	switch gr {
	case podResource:
		return g.pods.GetIndexer()
	case revisionResource:
		return g.revs.GetIndexer()
	case claimResource:
		return g.pvcs.GetIndexer()
	}
	if inf := g.sets[gr]; inf != nil {
		return inf.GetIndexer()
	}
	return nil
}

// watch registers every controller's event handlers on the group's informers (before start).
func (g *cacheGroup) watch(logger klog.Logger, controllers []*Controller) {
	for _, c := range controllers {
		c.registerHandlers(logger, g)
	}
}
