package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/host/module"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// sync runs one sync of the set with the given key. It returns the delay of a
// timed requeue (the plan's requeueAfterSeconds) or an error (requeue with
// backoff), as upstream's sync does.
func (c *Controller) sync(ctx context.Context, key string) (requeueAfter time.Duration, err error) {
	start := time.Now()
	logger := klog.FromContext(ctx)
	result := resultSuccess
	done, planned := 0, 0
	var snapBytes int
	moduleDigest := ""
	defer func() {
		d := time.Since(start)
		c.metrics.syncs.WithLabelValues(result).Inc()
		if result != resultStale {
			c.metrics.syncDuration.Observe(d.Seconds())
		}
		kv := []any{"set", key, "kind", c.target.String(), "result", result, "actions", done, "planned", planned,
			"duration", d.String(), "snapshotBytes", snapBytes}
		if requeueAfter > 0 {
			kv = append(kv, "requeueAfter", requeueAfter.String())
		}
		if moduleDigest != "" {
			kv = append(kv, "module", moduleDigest)
		}
		switch {
		case result == resultStale:
			logger.V(2).Info("Sync skipped: the informers are behind", append(kv, "reason", err.Error())...)
		case err != nil:
			logger.Error(err, "Sync failed", kv...)
		default:
			logger.Info("Synced StatefulSet", kv...)
		}
	}()

	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		result = resultError
		return 0, err
	}
	nn := types.NamespacedName{Namespace: ns, Name: name}

	// Upstream's consistency store: never plan from a cache that lacks our own writes.
	if expired, err := c.consistency.EnsureReady(nn); err != nil {
		var se *staleError
		if !expired {
			result = resultStale
			if errors.As(err, &se) {
				c.metrics.staleSkips.WithLabelValues(se.Resource.Group, se.Resource.Resource).Inc()
			}
			return 0, err
		}
		logger.Info("Gave up waiting for the informers to observe the controller's writes; syncing anyway",
			"set", key, "timeout", c.cfg.StaleTimeout.String(), "reason", err.Error())
	}

	set, err := c.setsIn(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.consistency.Clear(nn, "")
		c.dropSetCache(key)
		c.held.Delete(key)
		c.leftAlone.Delete(key)
		c.predecessors.Delete(key)
		result = resultNotFound
		return 0, nil
	}
	if err != nil {
		result = resultError
		return 0, err
	}
	if _, err := metav1.LabelSelectorAsSelector(set.Spec.Selector); err != nil {
		// Upstream: a non-transient error, not retried.
		result = resultError
		c.metrics.errors.WithLabelValues(stageSnapshot).Inc()
		logger.Error(err, "Invalid StatefulSet selector; not retrying", "set", key)
		return 0, nil
	}

	// The set's module: the active one, or the one it names (ordinal.dev/module).
	ref, named, err := module.OfSet(ctx, set.Annotations, c.cfg.Module, c.cfg.Modules.Get)
	switch {
	case errors.Is(err, module.ErrUnknownModule):
		result = resultUnknownModule
		c.leaveAlone(logger, set, key, EventUnknownModule, "it names a module this controller does not have",
			fmt.Sprintf("%s names the module %q; this controller has %s", abi.AnnotationModule, named, c.cfg.Modules.Names()))
		return 0, nil
	case errors.Is(err, module.ErrModuleRefused): // a supplied module that failed its check: until it changes
		result = resultUnknownModule
		c.leaveAlone(logger, set, key, module.EventModuleRefused, "the module it names was refused", hostplan.Truncate(err.Error(), 900))
		return 0, nil
	case err != nil:
		result = resultError
		c.metrics.errors.WithLabelValues(stageGuest).Inc()
		return 0, err
	}

	// The set's policies (ordinal.dev/policies): each must be there, as a module the set names must.
	policies, why := c.policiesOf(ctx, set)
	if errors.Is(why, wasm.ErrStillChecking) { // the sync stopped waiting for a policy's gate: retried
		result = resultError
		return 0, why
	}
	if why != nil {
		result = resultUnknownModule
		c.leaveAlone(logger, set, key, EventUnknownPolicy, "it names a policy this controller cannot run", hostplan.Truncate(why.Error(), 900))
		return 0, nil
	}

	cands, err := c.candidates(set)
	if err != nil {
		result = resultError
		c.metrics.errors.WithLabelValues(stageSnapshot).Inc()
		return 0, err
	}
	// A set that replaced another of its name: its first sync waits for the caches to show the orphaning.
	if err := c.awaitPredecessor(logger, key, set, cands); err != nil {
		result = resultStale
		var se *staleError
		if errors.As(err, &se) {
			c.metrics.staleSkips.WithLabelValues(se.Resource.Group, se.Resource.Resource).Inc()
		}
		return 0, err
	}
	objs, err := snapshot.SelectObjects(cands)
	if err != nil {
		result = resultError
		c.metrics.errors.WithLabelValues(stageSnapshot).Inc()
		return 0, err
	}
	// Never fight another controller: a set someone else also acts on is left alone (unless --force).
	// The pods it controls are among the objects the snapshot is built from.
	if !c.cfg.Force {
		if why, ok := otherController(set, objs.Pods, c.started); ok {
			result = resultYielded
			c.leaveAlone(logger, set, key, EventOtherController, "another controller acts on it",
				"another controller does ("+why+"); turn one off, or run ordinal controller --force")
			return 0, nil
		}
	}

	syncTime := c.now()
	sc := c.setCacheOf(key, syncTime)
	snap, err := sc.encode.Build(objs, c.target, syncTime, c.cfg.Features)
	var invalid *snapshot.InvalidSetError
	if errors.As(err, &invalid) {
		// As an apps/v1 set the API server would have refused: not acted on, not retried (the next edit
		// of the set enqueues it again).
		result = resultInvalid
		c.leaveAlone(logger, set, key, EventInvalidSpec, "apps/v1 validation refuses its spec",
			"kube-apiserver would refuse it as an apps/v1 StatefulSet: "+err.Error())
		return 0, nil
	}
	c.leftAlone.Delete(key) // acted on: a later reason to leave it alone is news again
	if err != nil {
		result = resultError
		c.metrics.errors.WithLabelValues(stageSnapshot).Inc()
		return 0, err
	}
	snapBytes = len(snap.JSON)
	c.metrics.snapshotBytes.Observe(float64(snapBytes))

	// The module is held for the whole sync: a hot swap meanwhile takes effect at
	// the next sync, and this one finishes (and releases) the module it started with.
	module, moduleInfo, release := ref.Acquire()
	defer release()
	moduleDigest = moduleInfo.ShortDigest()

	// The action firewall (inside the applier): the module is not trusted, so every action is checked
	// against the snapshot before anything is written; one action out of bounds refuses the whole plan.
	scope, err := snap.FirewallScope()
	if err != nil {
		result = resultError
		c.metrics.errors.WithLabelValues(stageFirewall).Inc()
		return 0, err
	}
	step := hostplan.Step{
		Module: sc.reconciler(module, snap), Snapshot: snap.JSON, WriteFailures: moduleInfo.Describe.WriteFailures, Scope: scope, Set: set.Name,
		Writer: &restWriter{
			rest: c.rest, target: c.target, snap: snap, ns: ns,
			wrote:    func(gr schema.GroupResource, rv string) { c.consistency.WroteAt(nn, set.UID, gr, rv) },
			canAdopt: func(ctx context.Context) error { return c.recheckSet(ctx, set) },
		},
		Each: func(r hostplan.Result) {
			outcome := "ok"
			if r.Err != nil {
				outcome = "error"
			}
			c.metrics.actions.WithLabelValues(r.Action.Verb, r.Action.Kind, outcome).Inc()
			for _, ev := range r.Events {
				c.recordEvent(set, ev)
			}
		},
	}
	var policyFailures []policy.Failure
	var pr *policy.Run
	memory := c.policyMemory(set, key, len(policies) > 0, snap.SetJSON)
	if len(policies) > 0 {
		budgets, nodes, err := c.policyCaches.context(ctx, ns, objs.Pods, policies)
		if err != nil {
			result = resultError
			c.metrics.errors.WithLabelValues(stageSnapshot).Inc()
			return 0, err
		}
		pr = &policy.Run{Policies: policies, Snapshot: snap.JSON, Memory: memory, Signals: c.cfg.Signals.Get(), PodDisruptionBudgets: budgets, Nodes: nodes,
			Object: snap.Object, Head: snap.Head(), Pods: snap.PodStates,
			Budgets: policy.ClientBudgets{Client: c.client, FieldManager: FieldManager}, Now: syncTime,
			Failed: func(f policy.Failure) {
				policyFailures = append(policyFailures, f)
				c.metrics.policyFailures.WithLabelValues(f.Policy, f.Reason).Inc()
			},
			Timed: func(p string, d time.Duration) { c.metrics.policyDuration.WithLabelValues(p).Observe(d.Seconds()) }}
		step.Judge, step.Admit = pr.Judge, pr.Admit
	}
	step.Status = policy.HoldStatus(func() gjson.Result { return gjson.ParseBytes(snap.SetJSON) }, syncTime)
	res, err := step.Run(ctx)
	c.metrics.guestDuration.Observe(res.ModuleTime.Seconds())
	if memory != nil {
		for _, ev := range policy.Events(syncTime, memory, pr.Held(res.Held), policyFailures) {
			c.recordEvent(set, ev)
		}
		c.keepMemory(ctx, step.Writer, set, snap.SetJSON, memory)
	}
	if res.First != nil {
		planned = len(res.First.Actions)
	}
	done = res.Issued
	var (
		moduleErr *hostplan.ModuleError
		badPlan   *hostplan.InvalidError
		rejected  *hostplan.RejectedError
		refused   *firewall.RefusedError
	)
	switch {
	case errors.As(err, &moduleErr):
		result = resultError
		c.metrics.errors.WithLabelValues(stageGuest).Inc()
		return 0, fmt.Errorf("reconcile module: %w", err)
	case errors.As(err, &badPlan):
		result = resultError
		c.metrics.errors.WithLabelValues(stagePlan).Inc()
		return 0, fmt.Errorf("reconcile module broke the ABI: %w", err)
	case errors.As(err, &rejected):
		result = resultError
		c.metrics.errors.WithLabelValues(stagePlan).Inc()
		return 0, fmt.Errorf("reconcile module rejected the snapshot: %w", rejected.Err)
	case errors.As(err, &refused):
		result = resultError
		c.metrics.errors.WithLabelValues(stageFirewall).Inc()
		c.metrics.planRefusals.WithLabelValues(string(refused.Rules()[0])).Inc()
		c.recorder.Event(set, corev1.EventTypeWarning, EventPlanRefused, hostplan.Truncate(fmt.Sprintf("Module %s %s (%s): %s",
			moduleInfo.Describe.Module, moduleInfo.Describe.ModuleVersion, moduleInfo.Digest, err), 1000))
		return 0, err
	case err != nil:
		result = resultError
		stage := stageApply
		if errors.Is(err, hostplan.ErrAdoptionRefused) {
			stage = stageAdoption
		}
		c.metrics.errors.WithLabelValues(stage).Inc()
		return 0, err
	}
	for _, ev := range res.AtEnd {
		c.recordEvent(set, ev)
		if ev.Reason == abi.EventProgressDeadlineExceeded {
			c.metrics.deadlinesExceeded.Inc()
		}
	}
	if retry := policy.RetryAfter(res.Held); retry > 0 {
		// Held back by a policy that says when to look again: no error backoff meanwhile (the writes held are
		// the sync's failures; a watch event on the set's objects syncs it sooner).
		result = resultHeld
		if after := hostplan.RequeueAfter(res.Plan.RequeueAfterSeconds); after > 0 && after < retry {
			retry = after
		}
		return retry, nil
	}
	if res.Plan.Error != nil { // SyncFailed: upstream's sync returned this error after these writes
		result = resultError
		c.metrics.errors.WithLabelValues(stagePlan).Inc()
		return 0, fmt.Errorf("sync failed: %s", res.Plan.Error.Message)
	}
	return hostplan.RequeueAfter(res.Plan.RequeueAfterSeconds), nil
}

// recheckSet is upstream's canAdopt (controller.RecheckDeletionTimestamp with
// an uncached GET): adoption is refused when the set the cache holds has been
// replaced by another with the same name, or is being deleted.
func (c *Controller) recheckSet(ctx context.Context, set *appsv1.StatefulSet) error {
	res := c.rest[c.target.GroupVersion].Get().Namespace(set.Namespace).Resource(c.target.Resource).
		Name(set.Name).Do(ctx)
	if err := res.Error(); err != nil { // Error, not Raw: it keeps the API server's message
		return err
	}
	raw, _ := res.Raw()
	var fresh metav1.PartialObjectMetadata
	if err := json.Unmarshal(raw, &fresh); err != nil {
		return err
	}
	if fresh.UID != set.UID {
		return fmt.Errorf("original %s %v/%v is gone: got uid %v, wanted %v", c.target.Kind, set.Namespace, set.Name, fresh.UID, set.UID)
	}
	if fresh.DeletionTimestamp != nil {
		return fmt.Errorf("%v/%v has just been deleted at %v", set.Namespace, set.Name, fresh.DeletionTimestamp)
	}
	return nil
}

// Snapshot returns the snapshot the controller would send for the set
// namespace/name at time now, from its caches (for tests and debugging).
func (c *Controller) Snapshot(namespace, name string, now time.Time) (*snapshot.Snapshot, error) {
	set, err := c.setsIn(namespace).Get(name)
	if err != nil {
		return nil, err
	}
	cands, err := c.candidates(set)
	if err != nil {
		return nil, err
	}
	objs, err := snapshot.SelectObjects(cands)
	if err != nil {
		return nil, err
	}
	return snapshot.Build(objs, c.target, now, c.cfg.Features)
}

// EventPlanRefused is the warning recorded on a set when the action firewall refuses its plan.
const EventPlanRefused = "PlanRefused"

// leaveAlone is a sync that does not act on the set: a log line "Leaving the StatefulSet alone: what" and a
// Warning event (reason, "Ordinal does not act on this StatefulSet: why"), once per new reason and why (a
// set left alone is synced again on every change of it or its pods).
func (c *Controller) leaveAlone(logger klog.Logger, set *appsv1.StatefulSet, key, reason, what, why string) {
	if prev, _ := c.leftAlone.Swap(key, reason+": "+why); prev == reason+": "+why {
		return
	}
	logger.Info("Leaving the StatefulSet alone: "+what, "set", key, "kind", c.target.String(), "reason", why)
	c.recorder.Event(set, corev1.EventTypeWarning, reason, hostplan.Truncate("Ordinal does not act on this StatefulSet: "+why, 1024))
}

// EventUnknownPolicy is the warning recorded on a set that names a policy the controller cannot run.
const EventUnknownPolicy = "UnknownPolicy"

// policiesOf are the policies the set names (abi.AnnotationPolicies), in its order; an error says why the
// set cannot be synced with them.
func (c *Controller) policiesOf(ctx context.Context, set *appsv1.StatefulSet) ([]policy.Module, error) {
	value, ok := set.Annotations[abi.AnnotationPolicies]
	if !ok {
		return nil, nil
	}
	if c.cfg.Policies == nil {
		return policy.Resolve(ctx, value, nil)
	}
	return policy.Resolve(ctx, value, c.cfg.Policies.Get)
}

// policyMemory is the set's memory of its policies' holds: the one this replica keeps, else the one the set
// records (policy.MemoryOf: a restarted controller, or a shard taken, goes on timing the holds the one before
// timed), kept when the set has policies or holds to release (nil: neither).
func (c *Controller) policyMemory(set *appsv1.StatefulSet, key string, hasPolicies bool, setJSON []byte) *policy.Memory {
	if m, ok := c.held.Load(key); ok {
		return m.(*policy.Memory)
	}
	m, err := policy.MemoryOf(gjson.ParseBytes(setJSON))
	if err != nil {
		c.recordEvent(set, policy.MemoryInvalid(err))
	}
	if !hasPolicies && m.Empty() {
		return nil
	}
	stored, _ := c.held.LoadOrStore(key, m)
	return stored.(*policy.Memory)
}

// keepMemory records the set's memory of its policies' holds in the set (policy.MemoryWrite) when it
// changed: a failure is logged, and the next sync writes it again.
func (c *Controller) keepMemory(ctx context.Context, w hostplan.Writer, set *appsv1.StatefulSet, setJSON []byte, memory *policy.Memory) {
	a := policy.MemoryWrite(gjson.ParseBytes(setJSON), memory)
	if a == nil {
		return
	}
	if _, err := w.Write(ctx, a, ""); err != nil {
		klog.FromContext(ctx).Info("Could not record the policies' holds in the set; the next sync records them",
			"set", set.Namespace+"/"+set.Name, "err", err.Error())
	}
}

// EventUnknownModule is the warning recorded on a set that names a module the controller does not have.
const EventUnknownModule = "UnknownModule"

// EventInvalidSpec is the warning recorded on a custom target's set that apps/v1 validation refuses.
const EventInvalidSpec = "InvalidSpec"
