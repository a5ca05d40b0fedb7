// Package controller is Ordinal's cluster controller: it runs the upstream
// StatefulSet controller's sync shell (informers, work queue, adoption
// re-check, consistency store, events) around a reconcile module, building one
// ABI v1 snapshot per sync from its informer caches and carrying out the plan
// with client-go.
package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// Config configures a Manager.
type Config struct {
	// RESTConfig reaches the API server. Its rate limiter is shared by all clients.
	RESTConfig *rest.Config
	// Module is the active reconcile module: every set's unless it names another (Modules).
	Module *module.Ref
	// Modules are the modules a set may choose by name with the annotation ordinal.dev/module (e.g. the
	// embedded "faithful" and "extended" modules), loaded on first use. A set naming a module not there is
	// left alone, with an event.
	Modules *module.Registry
	// Policies are the policy modules a set may name with ordinal.dev/policies (abi/POLICY.md), loaded on
	// first use; the sets naming policies are synced again when the supplied ones change. A set naming a
	// policy this does not have (or whose gate refused it) is left alone, with an UnknownPolicy event. Nil:
	// a set naming any policy is left alone.
	Policies *policy.Registry
	// Signals are what the host supplies the sets' policies (nil: none; --signals-configmap).
	Signals *policy.Signals
	// Targets are the kinds reconciled, one Controller each (default: CRDTarget alone). Each target's
	// module must accept it: a custom target needs describe's customSetKinds (module.SwapConfig.CustomSetKind).
	Targets []snapshot.Target
	// Namespace limits the informers to one namespace ("" = all).
	Namespace string
	// Selector is a label selector applied to every informer ("" = everything).
	Selector string
	// Workers is the number of concurrent syncs of each target (default 2). A set is never synced by two
	// workers at once.
	Workers int
	// Resync is the informers' resync period (0 = none).
	Resync time.Duration
	// Features are feature-gate overrides passed in every snapshot.
	Features map[string]bool
	// Force acts on sets even when another controller acts on them too (by default such a set is left
	// alone, with an event: see otherController).
	Force bool
	// StaleTimeout bounds how long a set waits for the informers to catch up with
	// the controller's own writes before it is synced anyway (default 30s).
	StaleTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Metrics (default: a fresh registry).
	Metrics *Metrics
	// SetCacheIdle is how long a set's encoding cache and module session outlive its last sync (set_cache.go):
	// a set at rest then costs its informer objects alone. 0: kept while the set exists.
	SetCacheIdle time.Duration
	// Sharding, with Shards above 1, splits the sets with other replicas by namespace (sharding.go); nil or
	// one shard: this replica syncs every set (run it under RunLeaderElected for a standby).
	Sharding *Sharding
}

// selectorTweak applies --selector to an informer's list and watch options (every informer's).
func (cfg Config) selectorTweak(o *metav1.ListOptions) {
	if cfg.Selector != "" {
		o.LabelSelector = cfg.Selector
	}
}

// shared is what the controllers of every target share, as the controllers of controller-runtime's
// manager share its cache: clients, the cache groups (one pod, ControllerRevision and claim informer each
// per group: a pod is watched and decoded once however many kinds are reconciled), metrics and the event
// broadcaster.
type shared struct {
	cfg Config
	// started is when Run began: writes by others before it are the set's history, not a fight.
	started time.Time
	client  kubernetes.Interface
	rest    restClients
	metrics *Metrics
	now     func() time.Time

	// caches: which informers hold a namespace's objects (caches.go)
	caches      *caches
	logger      klog.Logger // Run's, for the handlers of a group started later
	broadcaster record.EventBroadcaster
	// policyCaches: the budgets and nodes the sets' policies read, watched once a sync needs them
	policyCaches *policyCaches
	// shards: which sets this replica may sync (nil: all)
	shards *shards
}

// Manager runs one Controller per target over the shared informers. Create it with New, start it
// with Run.
type Manager struct {
	*shared
	controllers []*Controller
	synced      atomic.Bool
}

// Controller reconciles the sets of one target (upstream's StatefulSetController): its set informer,
// work queue, consistency store and event recorder.
type Controller struct {
	*shared
	target snapshot.Target
	// leftAlone holds, per set key, why the controller last left the set alone (leaveAlone: an event per
	// new reason), until it acts on it again.
	leftAlone sync.Map
	// annotationsWarned holds, per set key, what warnAnnotations last said of its annotations (an event per
	// new generation, module or finding), until they ask nothing the module will not do.
	annotationsWarned sync.Map

	queue workqueue.TypedRateLimitingInterface[string]
	// staleRetry spaces the retries of a set skipped because the informers are behind its own writes.
	// It is not the queue's error backoff: a skip is no failure, and counting skips as failures made a
	// set that waited out a broken watch wait minutes more for its next try (found by make chaos).
	staleRetry  workqueue.TypedRateLimiter[string]
	consistency *consistencyStore
	// setCaches holds each busy set's *setCache (by namespace/name): its objects' JSON and module session,
	// dropped when the set is gone or idle (set_cache.go).
	setCaches sync.Map
	// held holds each set's *policy.Memory: what its policies have been holding, since when (by key).
	held sync.Map
	// predecessors holds each set's *predecessorWait: whether its first sync may go ahead (by key).
	predecessors sync.Map
	recorder     record.EventRecorder
}

// Index names on the informers (see candidates).
const (
	indexControllerUID = "ordinal/controller-uid" // namespace/controller UID ("" for orphans)
	indexParent        = "ordinal/parent"         // namespace/name without its last -suffix
	indexOwnerUID      = "ordinal/owner-uid"      // namespace/uid of any ownerReference
)

// New builds a manager and its controllers: clients, informers (not started), queues, recorders.
func New(cfg Config) (*Manager, error) {
	if cfg.RESTConfig == nil || cfg.Module == nil {
		return nil, fmt.Errorf("controller: RESTConfig and Module are required")
	}
	// One rate limiter for every client of this controller.
	cfg.RESTConfig = rest.CopyConfig(cfg.RESTConfig)
	if cfg.RESTConfig.RateLimiter == nil {
		qps, burst := cfg.RESTConfig.QPS, cfg.RESTConfig.Burst
		if qps <= 0 {
			qps, burst = rest.DefaultQPS, rest.DefaultBurst
		}
		cfg.RESTConfig.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(qps, burst)
	}
	// Informers, events and leases read protobuf, as kube-controller-manager's clients do
	// (--kube-api-content-type): decoding every watched pod from JSON was a large share of the
	// controller's CPU. The typed objects are the same; writes stay the module's JSON (newRESTClients).
	// A CRD serves JSON only: its informer lists and watches through its JSON REST client.
	pb := rest.CopyConfig(cfg.RESTConfig)
	pb.ContentType = "application/vnd.kubernetes.protobuf"
	pb.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	client, err := kubernetes.NewForConfig(pb)
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	rc, err := newRESTClients(cfg.RESTConfig, targetsOf(cfg)...)
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	return newManager(cfg, client, rc)
}

func targetsOf(cfg Config) []snapshot.Target {
	if len(cfg.Targets) == 0 {
		return []snapshot.Target{snapshot.CRDTarget}
	}
	return cfg.Targets
}

// newManager builds the manager over the given clients (tests give fakes).
func newManager(cfg Config, client kubernetes.Interface, rc restClients) (*Manager, error) {
	cfg.Targets = targetsOf(cfg)
	seen := map[schema.GroupResource]bool{}
	for _, t := range cfg.Targets {
		if seen[t.GroupResource()] {
			return nil, fmt.Errorf("controller: %s is a target twice", t)
		}
		seen[t.GroupResource()] = true
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.StaleTimeout == 0 {
		cfg.StaleTimeout = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Selector != "" {
		if _, err := labels.Parse(cfg.Selector); err != nil {
			return nil, fmt.Errorf("controller: --selector: %w", err)
		}
	}
	m := &Manager{shared: &shared{cfg: cfg, client: client, rest: rc, now: cfg.Now}}
	useClientGoMetrics() // before the queues: each takes its metrics provider when made
	m.metrics = cfg.Metrics
	if m.metrics == nil {
		m.metrics = NewMetrics(func() float64 {
			n := 0
			for _, c := range m.controllers {
				n += c.queue.Len()
			}
			return float64(n)
		})
	}
	_, info := cfg.Module.Load()
	m.metrics.SetModule(info)

	// One group caching everything the controller is given; sharded, Run replaces it with a group per held
	// shard where the API server filters by shard (caches.go).
	all, err := m.newCacheGroup("")
	if err != nil {
		return nil, err
	}
	m.caches = &caches{all: all, byShard: map[int]*cacheGroup{},
		newGroup: func(shardSelector string) (*cacheGroup, error) {
			g, err := m.newCacheGroup(shardSelector)
			if err != nil {
				return nil, err
			}
			g.watch(m.logger, m.controllers)
			return g, nil
		}}
	for _, t := range cfg.Targets {
		m.caches.setKinds = append(m.caches.setKinds, t.GroupResource())
	}
	m.metrics.setCached(m.caches.cached)
	if sh := cfg.Sharding; sh != nil && sh.Shards > 1 {
		if err := sh.validate(); err != nil {
			return nil, fmt.Errorf("controller: %w", err)
		}
		m.shards = newShards(*sh, client, m.metrics)
		m.shards.caughtUp = m.caughtUp
		m.shards.released = func(i int) {
			m.caches.release(i)
			for _, c := range m.controllers {
				c.forgetShard(i)
			}
		}
		m.caches.shards = sh.Shards
		m.shards.enqueue = m.enqueueShard
	}
	m.broadcaster = record.NewBroadcaster()
	// A set left alone for naming a module not supplied yet (or refused) is synced again once the supplied
	// modules change: nothing else about it changed.
	cfg.Modules.OnSupply(func() {
		for _, c := range m.controllers {
			c.enqueueNaming(abi.AnnotationModule, "")
		}
	})
	if cfg.Policies != nil { // the same for a policy
		cfg.Policies.OnSupply(func() {
			for _, c := range m.controllers {
				c.enqueueNaming(abi.AnnotationPolicies, "")
			}
		})
	}
	for _, t := range cfg.Targets {
		c, err := newController(m.shared, t)
		if err != nil {
			return nil, err
		}
		m.controllers = append(m.controllers, c)
	}
	m.policyCaches = newPolicyCaches(client, cfg.Namespace, func(ns string) {
		for _, c := range m.controllers {
			c.enqueueNaming(abi.AnnotationPolicies, ns) // a budget or a node changed
		}
	})
	return m, nil
}

// newController builds the controller of one target over the shared informers.
func newController(sh *shared, t snapshot.Target) (*Controller, error) {
	c := &Controller{shared: sh, target: t}
	name := "ordinal-statefulset" // apps/v1 keeps the queue's first name (dashboards use it)
	if t != snapshot.StatefulSetTarget {
		name = "ordinal-" + strings.ToLower(t.String())
	}
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
	c.staleRetry = workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, staleRetryMax)
	// The consistency store compares a set's writes with the informers caching its namespace.
	c.consistency = newConsistencyStore(func(gr schema.GroupResource, ns string) rvGetter {
		if g := sh.caches.of(ns); g != nil {
			if s := g.store(gr); s != nil {
				return s
			}
		}
		return nil
	}, sh.cfg.StaleTimeout)
	c.consistency.now = sh.cfg.Now
	s, err := t.Scheme()
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	source := corev1.EventSource{Component: EventComponent}
	if sh.shards != nil { // which replica wrote: with several writing, the events say (source.host)
		source.Host = sh.shards.cfg.Identity
	}
	c.recorder = sh.broadcaster.NewRecorder(s, source)
	return c, nil
}

// Metrics returns the controllers' metrics.
func (m *Manager) Metrics() *Metrics { return m.metrics }

// HasSynced reports whether the informer caches have synced (readiness).
func (m *Manager) HasSynced() bool { return m.synced.Load() }

// Run checks that every target's kind is served, starts the informers, waits for their caches, runs
// each target's workers and blocks until ctx is done; then it stops taking work and waits for the
// syncs in flight to finish.
func (m *Manager) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	defer utilruntime.HandleCrashWithContext(ctx)
	// Sharded, losing the member Lease stops this replica as shutdown does, with the loss as its error:
	// everything below runs on this ctx (the informers too, or their wait would hold the exit until SIGTERM).
	ctx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	if err := m.checkServed(ctx); err != nil {
		return err
	}

	m.logger = logger
	if err := m.chooseCaches(ctx); err != nil {
		return err
	}
	m.broadcaster.StartStructuredLogging(3)
	m.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: m.client.CoreV1().Events("")})
	defer m.broadcaster.Shutdown()

	m.started = m.now()
	defer m.caches.stopAll()
	defer m.policyCaches.Stop()
	kinds := make([]string, 0, len(m.controllers))
	for _, c := range m.controllers {
		kinds = append(kinds, c.target.String())
	}
	go watchReachability(ctx, m.client.Discovery(), reachabilityInterval)
	if all := m.caches.all; !m.caches.perShard {
		all.start(ctx)
		logger.Info("Waiting for informer caches", "namespace", m.cfg.Namespace, "selector", m.cfg.Selector, "kinds", kinds)
		if !cache.WaitForNamedCacheSyncWithContext(ctx, all.synced()...) {
			return ctx.Err()
		}
		logger.Info("Caches synced; starting workers", "workers", m.cfg.Workers, "kinds", kinds)
	} else {
		// Each shard's caches start when its Lease is taken, and its sets wait for them (handover.go).
		logger.Info("Starting workers; each shard's informers start when it is taken", "workers", m.cfg.Workers, "kinds", kinds)
	}
	m.synced.Store(true)

	// Syncs run on a context that shutdown does not cancel: a sync in flight
	// finishes its plan (the module call and each request keep their own
	// limits); workers take no new item once ctx is done.
	workCtx := context.WithoutCancel(ctx)
	if m.shards != nil {
		if err := m.shards.start(ctx, stopRun); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	m.sweepSetCaches(ctx, &wg)
	for _, c := range m.controllers {
		for i := 0; i < m.cfg.Workers; i++ {
			wg.Go(func() {
				wait.UntilWithContext(ctx, func(context.Context) {
					for ctx.Err() == nil && c.processNextWorkItem(workCtx) {
					}
				}, time.Second)
			})
		}
	}
	<-ctx.Done()
	logger.Info("Shutting down: waiting for syncs in flight")
	for _, c := range m.controllers {
		c.queue.ShutDown()
	}
	wg.Wait()
	if m.shards != nil {
		m.shards.Stop() // no sync in flight: the shards' Leases are released
	}
	m.synced.Store(false)
	if err := context.Cause(ctx); !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// enqueueShard enqueues every set of shard i (it became this replica's).
func (m *Manager) enqueueShard(i int) {
	g := m.caches.ofShard(i)
	if g == nil {
		return
	}
	for _, c := range m.controllers {
		sets, err := g.setListers[c.target.GroupResource()].List(labels.Everything())
		if err != nil {
			continue
		}
		for _, s := range sets {
			if ShardOf(s.Namespace, m.shards.cfg.Shards) == i {
				c.enqueue(s)
			}
		}
	}
}

// forgetShard drops what the controller keeps per set (encoding caches, module sessions, policy memory, the
// consistency store's writes) for the sets of shard i, given up: the replica taking it starts without them
// too, and this one starts afresh if it takes the shard back.
func (c *Controller) forgetShard(i int) {
	inShard := func(ns string) bool { return ShardOf(ns, c.shards.cfg.Shards) == i }
	mine := func(key any) bool {
		ns, _, _ := cache.SplitMetaNamespaceKey(key.(string))
		return inShard(ns)
	}
	c.setCaches.Range(func(key, _ any) bool {
		if mine(key) {
			c.dropSetCache(key.(string))
		}
		return true
	})
	for _, m := range []*sync.Map{&c.held, &c.leftAlone, &c.annotationsWarned, &c.predecessors} {
		m.Range(func(key, _ any) bool {
			if mine(key) {
				m.Delete(key)
			}
			return true
		})
	}
	c.consistency.forget(inShard)
}

// chooseCaches decides, once at start, what the informers cache. Sharded over an API server that filters
// by shard, a group per held shard (started on its take); otherwise the one group of every namespace, the
// handlers registered on it now. Said in the log once, and in ordinal_shard_informers_filtered.
func (m *Manager) chooseCaches(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	if m.shards == nil {
		m.caches.all.watch(logger, m.controllers)
		return nil
	}
	filtered, err := detectShardFiltering(ctx, m.client, m.cfg.Namespace, m.shards.cfg.Shards)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	switch {
	case err != nil:
		logger.Error(err, "Cannot tell whether the API server filters lists by shard (KEP-5866); every replica caches every namespace")
	case filtered:
		logger.Info("The API server filters lists by shard (KEP-5866): this replica caches only the shards it holds")
	default:
		logger.Info("The API server does not filter lists by shard (KEP-5866, kube-apiserver --feature-gates=ShardedListAndWatch=true): every replica caches every namespace")
	}
	m.metrics.setShardInformersFiltered(filtered)
	if !filtered {
		m.caches.all.watch(logger, m.controllers)
		return nil
	}
	m.caches.mu.Lock()
	m.caches.perShard, m.caches.all = true, nil
	m.caches.mu.Unlock()
	return nil
}

// servedWithin is how long Run waits for a custom target's CustomResourceDefinition to be served before it
// refuses to start: one applied just before the controller (a tour's two commands, a chart that installs both)
// is established a moment later, and refusing then was a failed first start for nothing.
const servedWithin = 30 * time.Second

// checkServed refuses to start when a custom target's CustomResourceDefinition is not served within
// servedWithin: its informer would otherwise retry the list forever with nothing in the log at the default
// verbosity. Any other discovery error is left to the informers' retries.
func (m *Manager) checkServed(ctx context.Context) error {
	return m.waitServed(ctx, servedWithin, time.Second)
}

// waitServed is checkServed with its wait (within) and the interval between discovery's answers (every).
func (m *Manager) waitServed(ctx context.Context, within, every time.Duration) error {
	logger := klog.FromContext(ctx)
	for _, c := range m.controllers {
		if !c.target.Custom {
			continue
		}
		t := c.target
		crdName := t.Resource + "." + t.GroupVersion.Group
		waited := false
		err := wait.PollUntilContextTimeout(ctx, every, within, true, func(context.Context) (bool, error) {
			served, err := snapshot.Served(m.client.Discovery(), t)
			if err != nil {
				logger.Error(err, "Could not check that the CustomResourceDefinition is installed", "crd", crdName)
				return true, nil
			}
			if !served && !waited {
				logger.Info("Waiting for the CustomResourceDefinition to be served", "crd", crdName, "within", within)
				waited = true
			}
			return served, nil
		})
		switch {
		case ctx.Err() != nil:
			return context.Cause(ctx)
		case err != nil:
			return fmt.Errorf("%s is not served (waited %s): install the CustomResourceDefinition %s (kubectl apply -f examples/deploy/crd.yaml, "+
				"or the Helm chart's crds/), or `kubectl get crd %s` to see why it is not established", t, within, crdName, crdName)
		}
	}
	return nil
}

// staleRetryMax bounds the wait between two checks of a set whose informers are behind: the check is a
// map lookup, and the informer that catches up may be one whose events do not enqueue the set.
const staleRetryMax = time.Second

func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if c.shards != nil { // another replica's set, or one not yet caught up: dropped (enqueued again if taken)
		ns, _, _ := cache.SplitMetaNamespaceKey(key)
		sctx, done, ok := c.shards.begin(ctx, ns)
		if !ok {
			c.staleRetry.Forget(key)
			c.queue.Forget(key)
			return true
		}
		defer done()
		ctx = sctx
	}
	requeueAfter, err := c.sync(ctx, key)
	var stale *staleError
	switch {
	case errors.As(err, &stale):
		c.queue.AddAfter(key, c.staleRetry.When(key))
	case err != nil:
		c.staleRetry.Forget(key)
		c.queue.AddRateLimited(key)
	default:
		c.staleRetry.Forget(key)
		c.queue.Forget(key)
		if requeueAfter > 0 {
			c.queue.AddAfter(key, requeueAfter)
		}
	}
	return true
}
