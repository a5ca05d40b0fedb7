package controller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// The handover rule (docs/scale.md): a replica that takes a shard syncs its sets only once its caches have
// the previous owner's last writes. After acquiring the Lease the replica starts the shard's informers where
// the API server filters by shard (caches.go; elsewhere the informers of every namespace run throughout) and
// waits until they have synced; then it makes consistent reads
// (resourceVersion unset: served at the API server's current revision R, after every write it acknowledged)
// and waits until each informer either has processed an event at R or later, or holds for the shard's
// namespaces exactly the objects, at the same resourceVersions, that the read returned.
//
// Why that is sound: the previous owner's writes all happened before it released the Lease (it drains its
// syncs first) or before its Lease expired (it stopped at its renew deadline), so before this replica
// acquired it and before the reads: they are in the reads. An informer that processed an event at R or later
// has every event up to it, those writes included (a watch delivers in resourceVersion order). An informer
// holding exactly what the read returned for a namespace has that namespace's state at R, whatever its own
// last event. The second condition is what lets a take finish when a kind is quiet (no event after R until
// the next watch bookmark, up to a minute); the first, when the namespace keeps changing.
//
// The namespaces checked are those that have a set at R (a set list, consistent, of each kind): the previous
// owner wrote only for sets that existed before its last write. The rule holds whatever the informers' own
// initial list was (from the watch cache or not): it reads the API server itself.

// cacheCheck is one informer and the namespaces whose objects it must have at a consistent read.
type cacheCheck struct {
	what  string
	store cache.Indexer
	// list reads the objects of one namespace at the API server's current revision.
	list func(ctx context.Context, ns string) (runtime.Object, error)
}

// caughtUp waits until the caches of shard i have every write made to it before the call (see above). ctx is
// the shard Lease's: it ends when the Lease is lost or given up.
func (m *Manager) caughtUp(ctx context.Context, i int) error {
	logger := m.shards.logger
	start := time.Now()
	g, err := m.caches.acquire(ctx, i)
	if err != nil {
		return err
	}
	namespaces := map[string]bool{}
	var checks []pending
	for _, c := range m.controllers {
		ck := c.setCheck(g)
		l, err := ck.listAll(ctx)
		if err != nil {
			return fmt.Errorf("shard %d: consistent read of %s: %w", i, ck.what, err)
		}
		items, _ := meta.ExtractList(l)
		mine := map[string]bool{}
		for _, o := range items {
			if om := metaOf(o); om != nil && ShardOf(om.GetNamespace(), m.shards.cfg.Shards) == i {
				mine[om.GetNamespace()] = true
			}
		}
		for ns := range mine {
			namespaces[ns] = true
			checks = append(checks, newPending(ck.cacheCheck, ns, l))
		}
	}
	for ns := range namespaces {
		for _, ck := range m.ownedChecks(g) {
			l, err := ck.list(ctx, ns)
			if err != nil {
				return fmt.Errorf("shard %d: consistent read of %s in %s: %w", i, ck.what, ns, err)
			}
			checks = append(checks, newPending(ck, ns, l))
		}
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		left := checks[:0]
		for _, p := range checks {
			if !p.done() {
				left = append(left, p)
			}
		}
		checks = left
		return len(checks) == 0, nil
	})
	if err == nil {
		logger.Info("Caches have the shard's writes", "shard", i, "namespaces", len(namespaces), "waited", time.Since(start).String())
	}
	return err
}

// pending is one namespace of one informer, waited for.
type pending struct {
	cacheCheck
	ns       string
	rv       string            // the read's resourceVersion (R)
	versions map[string]string // name -> resourceVersion at R, in ns
}

func newPending(ck cacheCheck, ns string, list runtime.Object) pending {
	p := pending{cacheCheck: ck, ns: ns, versions: map[string]string{}}
	if lm, err := meta.ListAccessor(list); err == nil {
		p.rv = lm.GetResourceVersion()
	}
	items, _ := meta.ExtractList(list)
	for _, o := range items {
		if om := metaOf(o); om != nil && om.GetNamespace() == ns {
			p.versions[om.GetName()] = om.GetResourceVersion()
		}
	}
	return p
}

// done: the informer has processed an event at the read's revision or later, or holds exactly the read's
// objects of ns.
func (p pending) done() bool {
	if _, seen, known := processed(p.store, p.rv); known && seen {
		return true
	}
	objs, err := p.store.ByIndex(cache.NamespaceIndex, p.ns)
	if err != nil || len(objs) != len(p.versions) {
		return false
	}
	for _, o := range objs {
		om := metaOf(o)
		if om == nil || p.versions[om.GetName()] != om.GetResourceVersion() {
			return false
		}
	}
	return true
}

// setsCheck is the check of a target's set informer, which also lists every namespace at once.
type setsCheck struct {
	cacheCheck
	listAll func(ctx context.Context) (runtime.Object, error)
}

func (c *Controller) setCheck(g *cacheGroup) setsCheck {
	list := func(ctx context.Context, ns, shardSelector string) (runtime.Object, error) {
		o := metav1.ListOptions{ShardSelector: shardSelector}
		c.cfg.selectorTweak(&o)
		if !c.target.Custom {
			return c.client.AppsV1().StatefulSets(ns).List(ctx, o)
		}
		return snapshot.ListCustomSets(ctx, c.rest[c.target.GroupVersion], c.target, ns, o)
	}
	return setsCheck{
		cacheCheck: cacheCheck{what: c.target.String(), store: g.sets[c.target.GroupResource()].GetIndexer(),
			list: func(ctx context.Context, ns string) (runtime.Object, error) { return list(ctx, ns, "") }},
		// Every namespace's sets at once; where the API server filters by shard, the shard's alone (the
		// group's selector: "" when it does not; caughtUp keeps the shard's namespaces either way).
		listAll: func(ctx context.Context) (runtime.Object, error) { return list(ctx, c.cfg.Namespace, g.shardSelector) },
	}
}

// ownedChecks are the checks of group g's informers of what the sets own: pods, revisions, claims.
func (m *Manager) ownedChecks(g *cacheGroup) []cacheCheck {
	opts := func() metav1.ListOptions {
		o := metav1.ListOptions{}
		m.cfg.selectorTweak(&o)
		return o
	}
	return []cacheCheck{
		{what: "pods", store: g.pods.GetIndexer(), list: func(ctx context.Context, ns string) (runtime.Object, error) {
			return m.client.CoreV1().Pods(ns).List(ctx, opts())
		}},
		{what: "controllerrevisions", store: g.revs.GetIndexer(), list: func(ctx context.Context, ns string) (runtime.Object, error) {
			return m.client.AppsV1().ControllerRevisions(ns).List(ctx, opts())
		}},
		{what: "persistentvolumeclaims", store: g.pvcs.GetIndexer(), list: func(ctx context.Context, ns string) (runtime.Object, error) {
			return m.client.CoreV1().PersistentVolumeClaims(ns).List(ctx, opts())
		}},
	}
}
