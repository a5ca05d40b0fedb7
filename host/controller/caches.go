package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
)

// Which cache group holds a namespace's objects (docs/scale.md, "Informers per shard"). Unsharded, or
// sharded over an API server that cannot filter by shard, one group caches every namespace the controller
// is given. Sharded over one that can (KEP-5866, kube-apiserver's ShardedListAndWatch gate), each shard this
// replica holds has a group of its own whose informers list and watch only that shard's namespaces
// (ShardSelector): started when the shard's Lease is acquired, stopped (its objects dropped) when it is
// released. Every lookup of a sync, a handler, the consistency store and the handover goes through of.
type caches struct {
	// shards is the number of shards (perShard: one group per held shard)
	shards   int
	perShard bool
	// newGroup builds a group over the given shard selector with every controller's handlers on it.
	newGroup func(shardSelector string) (*cacheGroup, error)
	// setKinds are the set resources every group caches (cached reports them when no group runs)
	setKinds []schema.GroupResource

	mu      sync.RWMutex
	all     *cacheGroup         // !perShard: the one group
	byShard map[int]*cacheGroup // perShard: the held shards' groups
}

// noSets is the lister of a namespace whose shard this replica does not cache: it holds nothing.
var noSets = appslisters.NewStatefulSetLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc,
	cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}))

// of returns the group caching namespace ns, nil when none does (a shard not held, per shard).
func (c *caches) of(ns string) *cacheGroup {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.perShard {
		return c.all
	}
	return c.byShard[ShardOf(ns, c.shards)]
}

// ofShard returns the group caching shard i's namespaces (the one group unless per shard).
func (c *caches) ofShard(i int) *cacheGroup {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.perShard {
		return c.all
	}
	return c.byShard[i]
}

// groups returns every group running.
func (c *caches) groups() []*cacheGroup {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.perShard {
		if c.all == nil {
			return nil
		}
		return []*cacheGroup{c.all}
	}
	out := make([]*cacheGroup, 0, len(c.byShard))
	for _, g := range c.byShard {
		out = append(out, g)
	}
	return out
}

// acquire starts shard i's group (per shard; a no-op otherwise, or when it runs already) and waits until it
// has synced. held is the shard Lease's context: once it is done, no group is started, so a release that
// ran before cannot be undone by an acquire still in flight.
func (c *caches) acquire(held context.Context, i int) (*cacheGroup, error) {
	if !c.perShard {
		return c.all, nil
	}
	c.mu.Lock()
	g := c.byShard[i]
	if g == nil {
		if err := held.Err(); err != nil {
			c.mu.Unlock()
			return nil, err
		}
		var err error
		if g, err = c.newGroup(ShardSelector(i, c.shards)); err != nil {
			c.mu.Unlock()
			return nil, fmt.Errorf("shard %d: informers: %w", i, err)
		}
		// The group outlives the call: it runs until release, not until held ends.
		g.start(context.WithoutCancel(held))
		c.byShard[i] = g
	}
	c.mu.Unlock()
	if !g.waitSynced(held) {
		return nil, held.Err()
	}
	return g, nil
}

// release stops shard i's group and forgets it (per shard; a no-op otherwise).
func (c *caches) release(i int) {
	if !c.perShard {
		return
	}
	c.mu.Lock()
	g := c.byShard[i]
	delete(c.byShard, i)
	c.mu.Unlock()
	if g != nil {
		g.stop()
	}
}

// stopAll stops every group (shutdown).
func (c *caches) stopAll() {
	for _, g := range c.groups() {
		g.stop()
	}
	c.mu.Lock()
	c.byShard = map[int]*cacheGroup{}
	c.mu.Unlock()
}

// cached is the number of objects of each resource the running groups hold (a metric): every resource a
// group caches, 0 when no group runs (a sharded replica holding no shard), so a dashboard reads 0, not no data.
func (c *caches) cached() map[string]int {
	out := map[string]int{podResource.Resource: 0, revisionResource.Resource: 0, claimResource.Resource: 0}
	for _, gr := range c.setKinds {
		out[gr.String()] = 0
	}
	for _, g := range c.groups() {
		out[podResource.Resource] += len(g.pods.GetStore().ListKeys())
		out[revisionResource.Resource] += len(g.revs.GetStore().ListKeys())
		out[claimResource.Resource] += len(g.pvcs.GetStore().ListKeys())
		for gr, inf := range g.sets {
			out[gr.String()] += len(inf.GetStore().ListKeys())
		}
	}
	return out
}

// serverFiltersShards asks the API server whether it filters a list by a shard selector (KEP-5866): a list
// it filtered says so in its shardInfo; a server without the feature (or with its gate off) ignores the
// selector and returns a list without it. One page of one pod, in the namespace the controller watches.
func serverFiltersShards(ctx context.Context, client kubernetes.Interface, namespace string, shards int) (bool, error) {
	l, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{ShardSelector: ShardSelector(0, shards), Limit: 1})
	if err != nil {
		return false, err
	}
	return l.ShardInfo != nil, nil
}

// detectShardFiltering asks serverFiltersShards, retrying a failed request for up to a minute (a replica
// starting with the API server); still failing, it answers false with the last error: the full cache is
// always correct, only larger.
func detectShardFiltering(ctx context.Context, client kubernetes.Interface, namespace string, shards int) (filtered bool, err error) {
	var last error
	perr := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		filtered, last = serverFiltersShards(ctx, client, namespace, shards)
		return last == nil, nil
	})
	if last != nil {
		return false, last
	}
	return filtered, perr
}
