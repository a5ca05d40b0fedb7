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
// backoff), as upstream's sync does. It reads as its steps: the set, what runs
// it (module and policies), the objects it owns, their snapshot, the plan run
// through the firewall and the policies, and what the result means for the queue.
func (c *Controller) sync(ctx context.Context, key string) (requeueAfter time.Duration, err error) {
	r := &syncRecord{key: key, start: time.Now(), logger: klog.FromContext(ctx), result: resultSuccess}
	defer func() { c.logSync(r, requeueAfter, err) }()

	set, err := c.readSet(r)
	if set == nil {
		return 0, err
	}
	ref, policies, err := c.whatRuns(ctx, r, set)
	if ref == nil {
		return 0, err
	}
	objs, err := c.ownedObjects(r, set)
	if objs == nil {
		return 0, err
	}
	syncTime := c.now()
	sc := c.setCacheOf(key, syncTime)
	snap, err := c.buildSnapshot(r, sc, set, *objs, syncTime)
	if snap == nil {
		return 0, err
	}
	// The module is held for the whole sync: a hot swap meanwhile takes effect at
	// the next sync, and this one finishes (and releases) the module it started with.
	mod, moduleInfo, release := ref.Acquire()
	defer release()
	if mod == nil {
		// The module the set named was withdrawn after it was looked up (its ConfigMap supplied other bytes):
		// retried, the next sync looks it up again.
		c.fail(r, resultError, stageGuest)
		return 0, errModuleWithdrawn
	}
	r.moduleDigest = moduleInfo.ShortDigest()
	c.warnAnnotations(key, set, moduleInfo)
	res, err := c.runPlan(ctx, r, sc, set, objs.Pods, snap, mod, moduleInfo, policies, syncTime)
	if err != nil {
		return 0, c.planFailed(r, set, moduleInfo, err)
	}
	return c.afterPlan(r, set, res)
}

// errModuleWithdrawn: the set's module was replaced or removed between its lookup and the sync's use of it.
var errModuleWithdrawn = errors.New("the set's module was withdrawn while the sync started (its source changed); retrying with the module as it is now")

// syncRecord is what one sync's log line and metrics say of it, filled in by its steps.
type syncRecord struct {
	key           string
	nn            types.NamespacedName
	start         time.Time
	logger        klog.Logger
	result        string
	done, planned int
	snapBytes     int
	moduleDigest  string
}

// fail records a failed step: its result, and the stage of the errors metric when it has one.
func (c *Controller) fail(r *syncRecord, result, stage string) {
	r.result = result
	if stage != "" {
		c.metrics.errors.WithLabelValues(stage).Inc()
	}
}

// logSync is a sync's metrics and its one log line.
func (c *Controller) logSync(r *syncRecord, requeueAfter time.Duration, err error) {
	d := time.Since(r.start)
	c.metrics.syncs.WithLabelValues(r.result).Inc()
	if r.result != resultStale {
		c.metrics.syncDuration.Observe(d.Seconds())
	}
	kv := []any{"set", r.key, "kind", c.target.String(), "result", r.result, "actions", r.done, "planned", r.planned,
		"duration", d.String(), "snapshotBytes", r.snapBytes}
	if requeueAfter > 0 {
		kv = append(kv, "requeueAfter", requeueAfter.String())
	}
	if r.moduleDigest != "" {
		kv = append(kv, "module", r.moduleDigest)
	}
	switch {
	case r.result == resultStale:
		r.logger.V(2).Info("Sync skipped: the informers are behind", append(kv, "reason", err.Error())...)
	case err != nil:
		r.logger.Error(err, "Sync failed", kv...)
	default:
		r.logger.Info("Synced StatefulSet", kv...)
	}
}

// staleSkip records a sync skipped because the caches lack something (err says what).
func (c *Controller) staleSkip(r *syncRecord, err error) {
	r.result = resultStale
	var se *staleError
	if errors.As(err, &se) {
		c.metrics.staleSkips.WithLabelValues(se.Resource.Group, se.Resource.Resource).Inc()
	}
}

// readSet is the set of the key from the cache, once the cache holds the controller's own writes
// (upstream's consistency store: never plan from a cache that lacks them). nil: nothing to do now (err
// nil), or the sync failed (err).
func (c *Controller) readSet(r *syncRecord) (*appsv1.StatefulSet, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(r.key)
	if err != nil {
		c.fail(r, resultError, "")
		return nil, err
	}
	r.nn = types.NamespacedName{Namespace: ns, Name: name}
	if expired, err := c.consistency.EnsureReady(r.nn); err != nil {
		if !expired {
			c.staleSkip(r, err)
			return nil, err
		}
		r.logger.Info("Gave up waiting for the informers to observe the controller's writes; syncing anyway",
			"set", r.key, "timeout", c.cfg.StaleTimeout.String(), "reason", err.Error())
	}
	set, err := c.setsIn(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.forgetSet(r)
		r.result = resultNotFound
		return nil, nil
	}
	if err != nil {
		c.fail(r, resultError, "")
		return nil, err
	}
	if _, err := metav1.LabelSelectorAsSelector(set.Spec.Selector); err != nil {
		// Upstream: a non-transient error, not retried.
		c.fail(r, resultError, stageSnapshot)
		r.logger.Error(err, "Invalid StatefulSet selector; not retrying", "set", r.key)
		return nil, nil
	}
	return set, nil
}

// forgetSet drops what the controller keeps of a set that is gone.
func (c *Controller) forgetSet(r *syncRecord) {
	c.consistency.Clear(r.nn, "")
	c.dropSetCache(r.key)
	c.held.Delete(r.key)
	c.leftAlone.Delete(r.key)
	c.annotationsWarned.Delete(r.key)
	c.predecessors.Delete(r.key)
}

// whatRuns is the set's module (the active one, or the one it names: ordinal.dev/module) and its policies
// (ordinal.dev/policies), each of which must be there. A nil module: the set is left alone (err nil) or
// the sync failed (err).
func (c *Controller) whatRuns(ctx context.Context, r *syncRecord, set *appsv1.StatefulSet) (*module.Ref, []policy.Module, error) {
	ref, named, err := module.OfSet(ctx, set.Annotations, c.cfg.Module, c.cfg.Modules.Get)
	switch {
	case errors.Is(err, module.ErrUnknownModule):
		r.result = resultUnknownModule
		c.leaveAlone(r.logger, set, r.key, EventUnknownModule, "it names a module this controller does not have",
			fmt.Sprintf("%s names the module %q; this controller has %s", abi.AnnotationModule, named, c.cfg.Modules.Names()))
		return nil, nil, nil
	case errors.Is(err, module.ErrModuleRefused): // a supplied module that failed its check: until it changes
		r.result = resultUnknownModule
		c.leaveAlone(r.logger, set, r.key, module.EventModuleRefused, "the module it names was refused", hostplan.Truncate(err.Error(), 900))
		return nil, nil, nil
	case err != nil:
		c.fail(r, resultError, stageGuest)
		return nil, nil, err
	}
	policies, why := c.policiesOf(ctx, set)
	if errors.Is(why, wasm.ErrStillChecking) { // the sync stopped waiting for a policy's gate: retried
		c.fail(r, resultError, "")
		return nil, nil, why
	}
	if why != nil {
		r.result = resultUnknownModule
		c.leaveAlone(r.logger, set, r.key, EventUnknownPolicy, "it names a policy this controller cannot run", hostplan.Truncate(why.Error(), 900))
		return nil, nil, nil
	}
	return ref, policies, nil
}

// ownedObjects are the objects the set's snapshot is built from, once the caches show what a predecessor of
// its name left; nil when the sync stops here: left alone because another controller acts on the set
// (unless --force; the pods it controls are among these objects), or failed (err).
func (c *Controller) ownedObjects(r *syncRecord, set *appsv1.StatefulSet) (*snapshot.Objects, error) {
	cands, err := c.candidates(set)
	if err != nil {
		c.fail(r, resultError, stageSnapshot)
		return nil, err
	}
	// A set that replaced another of its name: its first sync waits for the caches to show the orphaning.
	if err := c.awaitPredecessor(r.logger, r.key, set, cands); err != nil {
		c.staleSkip(r, err)
		return nil, err
	}
	objs, err := snapshot.SelectObjects(cands)
	if err != nil {
		c.fail(r, resultError, stageSnapshot)
		return nil, err
	}
	// Never fight another controller: a set someone else also acts on is left alone (unless --force).
	if !c.cfg.Force {
		if why, ok := otherController(set, objs.Pods, c.started); ok {
			r.result = resultYielded
			c.leaveAlone(r.logger, set, r.key, EventOtherController, "another controller acts on it",
				"another controller does ("+why+"); turn one off, or run ordinal controller --force")
			return nil, nil
		}
	}
	return &objs, nil
}

// buildSnapshot is the module's input. nil: a set apps/v1 validation refuses, left alone (err nil), or a
// failure (err).
func (c *Controller) buildSnapshot(r *syncRecord, sc *setCache, set *appsv1.StatefulSet, objs snapshot.Objects, syncTime time.Time) (*snapshot.Snapshot, error) {
	snap, err := sc.encode.Build(objs, c.target, syncTime, c.cfg.Features)
	var invalid *snapshot.InvalidSetError
	if errors.As(err, &invalid) {
		// As an apps/v1 set the API server would have refused: not acted on, not retried (the next edit
		// of the set enqueues it again).
		r.result = resultInvalid
		c.leaveAlone(r.logger, set, r.key, EventInvalidSpec, "apps/v1 validation refuses its spec",
			"kube-apiserver would refuse it as an apps/v1 StatefulSet: "+err.Error())
		return nil, nil
	}
	c.leftAlone.Delete(r.key) // acted on: a later reason to leave it alone is news again
	if err != nil {
		c.fail(r, resultError, stageSnapshot)
		return nil, err
	}
	r.snapBytes = len(snap.JSON)
	c.metrics.snapshotBytes.Observe(float64(r.snapBytes))
	return snap, nil
}

// runPlan asks the module for the sync's plan and applies it: the action firewall (inside the applier)
// checks every action against the snapshot before anything is written, the module being untrusted, and
// the set's policies judge it and commit what it spends. Events of the writes are recorded as they go.
func (c *Controller) runPlan(ctx context.Context, r *syncRecord, sc *setCache, set *appsv1.StatefulSet, pods []*corev1.Pod,
	snap *snapshot.Snapshot, mod hostplan.Reconciler, moduleInfo module.Info, policies []policy.Module, syncTime time.Time) (hostplan.StepResult, error) {
	scope, err := snap.FirewallScope()
	if err != nil {
		return hostplan.StepResult{}, &stageError{stage: stageFirewall, err: err}
	}
	step := hostplan.Step{
		Module: sc.reconciler(mod, snap), Snapshot: snap.JSON, WriteFailures: moduleInfo.Describe.WriteFailures, Scope: scope, Set: set.Name,
		Writer: &restWriter{
			rest: c.rest, target: c.target, snap: snap, ns: set.Namespace,
			wrote:    func(gr schema.GroupResource, rv string) { c.consistency.WroteAt(r.nn, set.UID, gr, rv) },
			canAdopt: func(ctx context.Context) error { return c.recheckSet(ctx, set) },
		},
		Each: func(res hostplan.Result) {
			outcome := "ok"
			if res.Err != nil {
				outcome = "error"
			}
			c.metrics.actions.WithLabelValues(res.Action.Verb, res.Action.Kind, outcome).Inc()
			for _, ev := range res.Events {
				c.recordEvent(set, ev)
			}
		},
	}
	var policyFailures []policy.Failure
	var pr *policy.Run
	memory := c.policyMemory(set, r.key, len(policies) > 0, snap.SetJSON)
	if len(policies) > 0 {
		budgets, nodes, err := c.policyCaches.context(ctx, set.Namespace, pods, policies)
		if err != nil {
			return hostplan.StepResult{}, &stageError{stage: stageSnapshot, err: err}
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
	step.Status = policy.HoldStatus(func() gjson.Result { return gjson.ParseBytes(snap.SetJSON) }, syncTime, memory)
	res, err := step.Run(ctx)
	c.metrics.guestDuration.Observe(res.ModuleTime.Seconds())
	if memory != nil {
		for _, ev := range policy.Events(syncTime, memory, pr.Held(res.Held), policyFailures, policy.UnmadeOf(res.Applied, err)) {
			c.recordEvent(set, ev)
		}
		if merr := c.keepMemory(ctx, step.Writer, snap.SetJSON, memory); merr != nil && err == nil {
			err = merr // retried with the error backoff: a hold's own retry may be hours away
		}
	}
	if res.First != nil {
		r.planned = len(res.First.Actions)
	}
	r.done = res.Issued
	return res, err
}

// stageError is a failure of runPlan before the module ran, and the errors metric's stage of it.
type stageError struct {
	stage string
	err   error
}

func (e *stageError) Error() string { return e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

// planFailed records why the plan did not run or its writes failed, and is the sync's error: the module's
// own failure, a plan out of the ABI or refused by the firewall (a Warning event naming the module), a
// write that failed.
func (c *Controller) planFailed(r *syncRecord, set *appsv1.StatefulSet, moduleInfo module.Info, err error) error {
	var (
		stageErr  *stageError
		moduleErr *hostplan.ModuleError
		badPlan   *hostplan.InvalidError
		rejected  *hostplan.RejectedError
		refused   *firewall.RefusedError
	)
	switch {
	case errors.As(err, &stageErr):
		c.fail(r, resultError, stageErr.stage)
		return stageErr.err
	case errors.As(err, &moduleErr):
		c.fail(r, resultError, stageGuest)
		return fmt.Errorf("reconcile module: %w", err)
	case errors.As(err, &badPlan):
		c.fail(r, resultError, stagePlan)
		return fmt.Errorf("reconcile module broke the ABI: %w", err)
	case errors.As(err, &rejected):
		c.fail(r, resultError, stagePlan)
		return fmt.Errorf("reconcile module rejected the snapshot: %w", rejected.Err)
	case errors.As(err, &refused):
		c.fail(r, resultError, stageFirewall)
		c.metrics.planRefusals.WithLabelValues(string(refused.Rules()[0])).Inc()
		c.recorder.Event(set, corev1.EventTypeWarning, EventPlanRefused, hostplan.Truncate(fmt.Sprintf("Module %s %s (%s): %s",
			moduleInfo.Describe.Module, moduleInfo.Describe.ModuleVersion, moduleInfo.Digest, err), 1000))
		return err
	default:
		stage := stageApply
		if errors.Is(err, hostplan.ErrAdoptionRefused) {
			stage = stageAdoption
		}
		c.fail(r, resultError, stage)
		return err
	}
}

// afterPlan is what a plan that ran means for the queue: its end-of-sync events recorded; a hold's own
// retry (no error backoff: the writes held are the sync's failures, and a watch event on the set's objects
// syncs it sooner), upstream's sync error, or the plan's timed requeue.
func (c *Controller) afterPlan(r *syncRecord, set *appsv1.StatefulSet, res hostplan.StepResult) (time.Duration, error) {
	for _, ev := range res.AtEnd {
		c.recordEvent(set, ev)
		if ev.Reason == abi.EventProgressDeadlineExceeded {
			c.metrics.deadlinesExceeded.Inc()
		}
	}
	if retry := policy.RetryAfter(res.Held); retry > 0 {
		r.result = resultHeld
		if after := hostplan.RequeueAfter(res.Plan.RequeueAfterSeconds); after > 0 && after < retry {
			retry = after
		}
		return retry, nil
	}
	if res.Plan.Error != nil { // SyncFailed: upstream's sync returned this error after these writes
		c.fail(r, resultError, stagePlan)
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
// changed. A failure is the sync's error, so the set is retried with the error backoff and that sync
// writes it again: a held sync's own retry may be hours away (a window closed for the night), and until
// the record lands a restarted controller would time the holds afresh.
func (c *Controller) keepMemory(ctx context.Context, w hostplan.Writer, setJSON []byte, memory *policy.Memory) error {
	a := policy.MemoryWrite(gjson.ParseBytes(setJSON), memory)
	if a == nil {
		return nil
	}
	if _, err := w.Write(ctx, a, ""); err != nil {
		return fmt.Errorf("recording the policies' holds in the set (annotation %s): %w", policy.AnnotationHeld, err)
	}
	return nil
}

// EventUnknownModule is the warning recorded on a set that names a module the controller does not have.
const EventUnknownModule = "UnknownModule"

// EventInvalidSpec is the warning recorded on a custom target's set that apps/v1 validation refuses.
const EventInvalidSpec = "InvalidSpec"
