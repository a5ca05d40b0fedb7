package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// policyCaches are the informers of what a set's policies read beyond its snapshot — the
// PodDisruptionBudgets of its namespace and the nodes of its pods — started when the first sync needs
// them, so that a controller whose sets name no such policy watches neither. A sync reads them from the
// cache rather than listing them from the API server (two lists per sync cost a policy's set more than
// twice the CPU of the sync itself, make bench-cluster). A budget read from a cache that lags cannot be
// overspent: a delete's spend is written under the budget's resourceVersion (abi/POLICY.md 4.1), and a
// budget's change that can let a held delete go syncs again the sets of its namespace that name policies,
// so a budget that allows a disruption again is seen at once rather than at the hold's retry.
type policyCaches struct {
	client   kubernetes.Interface
	ns       string                  // the controller's namespace ("": all)
	changed  func(ns string)         // a budget of ns changed ("": a node's labels did): sync the sets naming policies
	mu       sync.Mutex              // guards the start of each informer
	informer map[string]*policyCache // abi.ContextPodDisruptionBudgets, abi.ContextNodes: started (synced or not)
	stop     chan struct{}
}

func newPolicyCaches(client kubernetes.Interface, ns string, changed func(string)) *policyCaches {
	return &policyCaches{client: client, ns: ns, changed: changed, informer: map[string]*policyCache{}, stop: make(chan struct{})}
}

// Stop stops the informers started.
func (p *policyCaches) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
}

// policyCache is one informer of policyCaches, and the last error of its reflector's lists and watches.
type policyCache struct {
	inf cache.SharedIndexInformer
	mu  sync.Mutex
	err error
}

func (c *policyCache) lastErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// get is the synced informer of what, started on first use. An error is a cache not synced: its list failed
// (RBAC, the API server), or ctx ended first. The sync then fails and is retried with backoff, as when the
// budgets were listed at each sync: a sync's context has no deadline, and a worker waiting for a cache that
// cannot list would wait for ever, and with it, once every worker did, every set.
func (p *policyCaches) get(ctx context.Context, what string) (cache.SharedIndexInformer, error) {
	p.mu.Lock()
	c := p.informer[what]
	if c == nil {
		inf, err := p.start(what)
		if err != nil {
			p.mu.Unlock()
			return nil, err
		}
		c = &policyCache{inf: inf}
		_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			cache.DefaultWatchErrorHandler(ctx, r, err)
		})
		go inf.Run(p.stop)
		// Kept started, synced or not: a sync that gave up waiting leaves it to the next (one informer
		// per failed sync would each keep listing until the manager stops).
		p.informer[what] = c
	}
	p.mu.Unlock()
	if c.inf.HasSynced() {
		return c.inf, nil
	}
	var listErr error
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		if c.inf.HasSynced() {
			return true, nil
		}
		listErr = c.lastErr()
		return listErr != nil, nil
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("the %s a policy of the set reads: the cache did not sync: %w", what, context.Cause(ctx))
	case !c.inf.HasSynced():
		return nil, fmt.Errorf("the %s a policy of the set reads: the cache cannot sync: %w", what, listErr)
	}
	return c.inf, nil
}

// start builds the informer of what, its handlers registered (p.mu held); get runs it.
func (p *policyCaches) start(what string) (cache.SharedIndexInformer, error) {
	var inf cache.SharedIndexInformer
	switch what {
	case abi.ContextPodDisruptionBudgets:
		opts := []informers.SharedInformerOption{informers.WithTransform(snapshot.TrimManagedFields)}
		if p.ns != "" {
			opts = append(opts, informers.WithNamespace(p.ns))
		}
		inf = informers.NewSharedInformerFactoryWithOptions(p.client, 0, opts...).Policy().V1().PodDisruptionBudgets().Informer()
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { p.changed(metaOf(obj).GetNamespace()) },
			UpdateFunc: func(old, obj any) {
				if o, n := old.(*policyv1.PodDisruptionBudget), obj.(*policyv1.PodDisruptionBudget); allowsMore(o, n) {
					p.changed(n.Namespace)
				}
			},
			DeleteFunc: func(obj any) {
				if m := metaOf(obj); m != nil {
					p.changed(m.GetNamespace())
				}
			},
		})
	case abi.ContextNodes:
		// A node as policies see it: its name and labels (status and spec, most of a node, never read).
		keep := informers.WithTransform(func(obj any) (any, error) {
			if n, ok := obj.(*corev1.Node); ok {
				return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, ResourceVersion: n.ResourceVersion}}, nil
			}
			return obj, nil
		})
		inf = informers.NewSharedInformerFactoryWithOptions(p.client, 0, keep).Core().V1().Nodes().Informer()
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(old, obj any) {
				if o, n := metaOf(old), metaOf(obj); o != nil && n != nil && !maps.Equal(o.GetLabels(), n.GetLabels()) {
					p.changed("")
				}
			},
		})
	default:
		return nil, fmt.Errorf("no cache of %q", what)
	}
	return inf, nil
}

// context is what the policies ask for of the set's namespace and pods, from the caches.
func (p *policyCaches) context(ctx context.Context, ns string, pods []*corev1.Pod, policies []policy.Module) (budgets, nodes []json.RawMessage, err error) {
	if policy.Wants(policies, abi.ContextPodDisruptionBudgets) {
		inf, err := p.get(ctx, abi.ContextPodDisruptionBudgets)
		if err != nil {
			return nil, nil, err
		}
		objs, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
		if err != nil {
			return nil, nil, err
		}
		list := make([]*policyv1.PodDisruptionBudget, 0, len(objs))
		for _, o := range objs {
			list = append(list, o.(*policyv1.PodDisruptionBudget))
		}
		if budgets, err = policy.BudgetsOf(list, pods); err != nil {
			return nil, nil, err
		}
	}
	if policy.Wants(policies, abi.ContextNodes) {
		inf, err := p.get(ctx, abi.ContextNodes)
		if err != nil {
			return nil, nil, err
		}
		var list []*corev1.Node
		for _, o := range inf.GetStore().List() {
			list = append(list, o.(*corev1.Node))
		}
		if nodes, err = policy.NodesOf(list, pods); err != nil {
			return nil, nil, err
		}
	}
	return budgets, nodes, nil
}

// allowsMore reports whether a budget's change can let a held delete go: more disruptions allowed, its
// status caught up with its spec, or its spec (its selector, its minimum) changed. Its controller rewrites
// the status at every change of the pods it selects — most of them counts that allow no more than before
// (a pod went down, a spend was recorded) — and a set synced for each would sync about twice as often
// (make bench-cluster).
func allowsMore(old, cur *policyv1.PodDisruptionBudget) bool {
	return cur.Status.DisruptionsAllowed > old.Status.DisruptionsAllowed ||
		cur.Generation != old.Generation ||
		cur.Status.ObservedGeneration != old.Status.ObservedGeneration
}
