package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// One sync of the set: the snapshot written from the world, the module called through the one sync step
// (host/plan.Step) with the set's policies, the writes applied to the world and recorded in the timeline.

type syncResult struct {
	actions int
	wrote   bool
	requeue float64
	syncErr bool
}

// sync is one sync of the set, as the controller runs it: the world written as a snapshot, the module called
// through the sync step (host/plan.Step: firewall, applier and the set's policies), the writes applied to
// the world, and the step recorded in the timeline.
func (e *engine) sync() (syncResult, error) {
	var res syncResult
	if err := e.ctx.Err(); err != nil { // the caller's deadline or cancel, between syncs as within one
		return res, fmt.Errorf("step %d: %w", len(e.tl.Steps), context.Cause(e.ctx))
	}
	if err := e.checkReplicas(); err != nil {
		return res, err
	}
	snap := e.syncSnapshot()
	module, err := e.moduleOfSet()
	if err != nil {
		return res, e.namedError(err)
	}
	policies, err := e.policiesOfSet()
	if err != nil {
		return res, e.namedError(err)
	}
	// The controller's sync step, firewall and applier included: a plan that writes outside its set is not
	// carried out.
	scope, err := e.scope()
	if err != nil {
		return res, fmt.Errorf("step %d: %w", len(e.tl.Steps), err)
	}
	now := e.clock.Now()
	step := e.newStep(now)
	e.labelRevisions()
	w := &worldWriter{api: e.api, set: e.api.StatefulSet()}
	var log writeLog
	run := hostplan.Step{Module: e.sessionOf(module, snap), Snapshot: snap, WriteFailures: describesWriteFailures(module), Scope: scope, Writer: w,
		Set: jsonobj.GetStr(w.set, "metadata.name"), Each: log.add}
	var policyFailures []policy.Failure
	pr := e.policyRun(policies, snap, now, &policyFailures)
	if pr != nil {
		run.Judge, run.Admit = pr.Judge, pr.Admit
	}
	run.Status = policy.HoldStatus(func() gjson.Result { return e.headOf(snap, "statefulSet") }, now, e.held)
	out, runErr := run.Run(e.ctx)
	stopped, err := e.stepFailure(runErr)
	if err != nil {
		return res, err
	}
	plan := out.Plan
	step.Plan, step.Requeue = out.FirstRaw, plan.RequeueAfterSeconds
	if out.Replans > 0 {
		step.Replanned = out.Raw
	}
	e.triggers = nil
	e.recordActions(&step, out, log.results, stopped)
	e.labelRevisions()
	e.markRepeatedHolds(step.Actions)
	e.recordPolicyFailures(step, policyFailures)
	memoryEvents := append(e.heldEvents, policy.Events(now, e.held, pr.Held(out.Held), policyFailures, policy.UnmadeOf(out.Applied, runErr))...)
	e.heldEvents = nil
	if a := policy.MemoryWrite(e.headOf(snap, "statefulSet"), e.held); a != nil {
		_, _ = w.Write(e.ctx, a, "") // the replay's API server refuses it only when the set is gone: no sync follows
	}
	e.recordEvents(&step, append(append(log.events, out.AtEnd...), memoryEvents...), log.heldFor)
	return syncResult{actions: len(plan.Actions), wrote: log.wrote, requeue: plan.RequeueAfterSeconds,
		syncErr: e.endStep(step, out, stopped, now)}, nil
}

// endStep records the sync's error in step (failed: the plan's error, or a write the world refused),
// schedules the work queue's next visit (event model), and appends step to the timeline.
func (e *engine) endStep(step Step, out hostplan.StepResult, stopped *hostplan.WriteError, now time.Time) (failed bool) {
	plan := out.Plan
	if plan.Error != nil {
		step.Error = plan.Error.Message
		step.errorHeld = heldRefusal(step.Actions, step.Error)
		failed = true
	} else if stopped != nil {
		step.Error = "a write was rejected"
		failed = true
	}
	if e.cfg.Model != ModelTick {
		retry := policy.RetryAfter(out.Held)
		e.scheduleRequeue(now, plan.RequeueAfterSeconds, failed && retry == 0) // a hold's retry, not the error backoff
		e.scheduleHoldRetry(now, len(out.Held), retry)
	}
	step.Revisions = e.statusLine()
	e.tl.Steps = append(e.tl.Steps, step)
	if e.opts.Progress != nil {
		e.opts.Progress(e.progressAt(now))
	}
	return failed
}

// syncSnapshot is the world as the sync sees it (snapshot), opening the timeline's next segment first when
// the scenario starts one: the segment keeps its first snapshot, compact.
func (e *engine) syncSnapshot() []byte {
	if e.newSegment {
		e.newSegment = false
		if e.cfg.Model == ModelTick {
			// The harness starts a fresh simulation (counters from 1) on the world as it is.
			e.api.RestartIDs()
		}
		e.tl.Segments = append(e.tl.Segments, Segment{FirstStep: len(e.tl.Steps), Comparable: e.segmentComparable()})
	}
	snap := e.snapshot()
	if seg := &e.tl.Segments[len(e.tl.Segments)-1]; seg.FirstStep == len(e.tl.Steps) {
		seg.Snapshot = e.compact(snap)
	}
	return snap
}

// newStep is the timeline's record of the sync about to run at now: what triggered it, the world's notes
// since the previous one and the pods as the sync sees them.
func (e *engine) newStep(now time.Time) Step {
	offset := Duration(now.Sub(e.start))
	return Step{
		Index:         len(e.tl.Steps),
		Segment:       len(e.tl.Segments) - 1,
		Time:          now.Format(time.RFC3339),
		Offset:        offset,
		OffsetSeconds: offset.Seconds(),
		Trigger:       e.triggers,
		World:         e.api.TakeNotes(),
		Pods:          e.podStates(),
	}
}

// writeLog is what the sync step reported of each write it settled, in order (hostplan.Step.Each).
type writeLog struct {
	results []hostplan.Result
	events  []abi.Event // the events recorded with the writes
	heldFor []int       // for each of events, the held write it reports (its action's index), else -1
	wrote   bool        // a write succeeded
}

func (l *writeLog) add(r hostplan.Result) {
	l.events = append(l.events, r.Events...)
	for range r.Events {
		l.heldFor = append(l.heldFor, heldIndex(r))
	}
	l.results = append(l.results, r)
	if r.Outcome == hostplan.Succeeded {
		l.wrote = true
	}
}

// policyRun is the run of the set's policies over this sync (nil without policies); a policy that fails is
// added to failures.
func (e *engine) policyRun(policies []policy.Module, snap []byte, now time.Time, failures *[]policy.Failure) *policy.Run {
	if len(policies) == 0 {
		return nil
	}
	return &policy.Run{Policies: policies, Snapshot: snap, Memory: e.held, Signals: e.signals,
		PodDisruptionBudgets: e.budgetsFor(policies), Nodes: e.nodesFor(policies),
		Object: func(kind, name string) (json.RawMessage, bool) { // the objects as this snapshot carries them
			if r := e.recordOf(kind, name); r != nil && e.inSnapshot(r) {
				return json.RawMessage(snap[r.from:r.to]), true
			}
			return json.RawMessage(snap[0:0]), false
		},
		Head:    e.head(snap),
		Budgets: budgetWriter{e}, Now: now,
		Failed: func(f policy.Failure) { *failures = append(*failures, timeless(f)) }}
}

// stepFailure sorts the sync step's error: the replay's error when the module failed, its plan was refused
// or the step could not run; else the write the world refused, which stopped the sync and is recorded with
// it (nil when every write was made).
func (e *engine) stepFailure(err error) (stopped *hostplan.WriteError, failed error) {
	var (
		moduleErr *hostplan.ModuleError
		badPlan   *hostplan.InvalidError
		rejected  *hostplan.RejectedError
		refused   *firewall.RefusedError
	)
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &moduleErr), errors.As(err, &badPlan), errors.As(err, &refused):
		return nil, fmt.Errorf("step %d: module failed: %w", len(e.tl.Steps), err)
	case errors.As(err, &rejected):
		return nil, &RejectedError{Step: len(e.tl.Steps), Plan: rejected.Err}
	case errors.As(err, &stopped):
		return stopped, nil
	}
	return nil, fmt.Errorf("step %d: %w", len(e.tl.Steps), err)
}

// recordActions records each of the plan's writes in step as the sync step settled it: held by a policy,
// failed, or not issued after the write that stopped the sync.
func (e *engine) recordActions(step *Step, out hostplan.StepResult, results []hostplan.Result, stopped *hostplan.WriteError) {
	plan := out.Plan
	step.Actions = make([]ActionRecord, len(plan.Actions))
	for i, a := range plan.Actions {
		step.Actions[i] = e.describe(a)
	}
	markInPlace(step.Actions, plan, step.Pods)
	for _, r := range results {
		rec := &step.Actions[r.Index]
		for _, ev := range r.Events { // the module's reason for this very write (extension in-place-update)
			if ev.Reason == abi.EventRecreatingPod && r.Action != nil && r.Action.Kind == abi.KindPod && r.Action.Verb == abi.VerbDelete {
				rec.Why = ev.Message
			}
		}
		switch {
		case r.Hold != nil:
			rec.Error = r.Err.Error()
			rec.Held = &ActionHold{Policy: r.Hold.Policy, Reason: r.Hold.Reason, Message: r.Hold.Message, RetryAfterSeconds: r.Hold.RetryAfter.Seconds()}
		case r.Outcome == hostplan.FailedAsPlanned && !r.Reported:
			rec.Error = r.Action.Error
		case r.Outcome != hostplan.Succeeded && r.Err != nil:
			rec.Error = r.Err.Error()
		}
	}
	if stopped != nil {
		if rec := &step.Actions[stopped.Index]; rec.Error == "" {
			rec.Error = stopped.Err.Error() // refused adoption, or a predicted rejection that did not come
		}
		for i := out.Issued; i < len(step.Actions); i++ {
			if i != stopped.Index {
				step.Actions[i].Error = "not issued: the sync stopped at an earlier error"
			}
		}
	}
}

// recordEvents records the sync's events in step (heldFor: for each of the first events, the held write it
// reports, else -1), and the warnings among them in the timeline's lists.
func (e *engine) recordEvents(step *Step, events []abi.Event, heldFor []int) {
	for i, ev := range events {
		step.Events = append(step.Events, ev.Type+" "+ev.Reason+" "+ev.Message)
		heldAt := -1
		if i < len(heldFor) {
			heldAt = heldFor[i]
		}
		step.holdEvent = append(step.holdEvent, heldAt >= 0)
		if ev.Type == abi.EventWarning && ev.Reason == abi.EventInvalidAnnotation && !slices.Contains(e.tl.invalidAnnotations, ev.Message) {
			e.tl.invalidAnnotations = append(e.tl.invalidAnnotations, ev.Message)
		}
		if ev.Type == abi.EventWarning && heldAt < 0 && ev.Reason != policy.EventFailed { // holds and failures: their own lists
			e.tl.WarningEvents = foldEvent(e.tl.WarningEvents, ev, *step)
		}
	}
}

// scheduleRequeue models the work queue: AddAfter for requeueAfterSeconds (the earliest wins), and
// the rate-limited retry after a failed sync (5ms doubling up to 1000s, client-go's default).
func (e *engine) scheduleRequeue(now time.Time, after float64, failed bool) {
	at := func(d time.Duration) {
		t := now.Add(d)
		if e.requeueAt == nil || t.Before(*e.requeueAt) {
			e.requeueAt = &t
		}
	}
	if after > 0 {
		at(hostplan.RequeueAfter(after))
	}
	if failed {
		d := 5 * time.Millisecond << min(e.failures, 20)
		if d > 1000*time.Second {
			d = 1000 * time.Second
		}
		e.failures++
		at(d)
	} else {
		e.failures = 0
	}
}

// scheduleHoldRetry queues the set again when its policies asked to be asked again about the writes they
// hold (policy.RetryAfter of the sync's holds), the earliest retry winning as in the controller's work
// queue, and notes whether the sync held any write (a retry outliving its holds does not keep the world
// from settling: nextInstant). The module's own requeue stands beside it, the earlier one coming first,
// as the controller takes the sooner of the two.
func (e *engine) scheduleHoldRetry(now time.Time, held int, retry time.Duration) {
	e.holding = held > 0
	if retry <= 0 {
		return
	}
	if t := now.Add(retry); e.holdRetryAt == nil || t.Before(*e.holdRetryAt) {
		e.holdRetryAt = &t
	}
}

// requeueDue reports whether the work queue brings the set back at now (a requeue or a hold's retry is
// due), and takes what is due off the queue.
func (e *engine) requeueDue(now time.Time) bool {
	due := false
	for _, t := range []**time.Time{&e.requeueAt, &e.holdRetryAt} {
		if *t != nil && !(*t).After(now) {
			*t, due = nil, true
		}
	}
	return due
}

// segmentComparable: the harness can replay a segment only if no pod is still starting (it
// starts only pods it created itself).
func (e *engine) segmentComparable() bool {
	if e.cfg.Model != ModelTick {
		return false
	}
	for _, n := range e.api.Names(world.KindPod) {
		if e.kube.Created(n) {
			return false
		}
	}
	return true
}
