package replay

import (
	"errors"
	"fmt"
	"time"

	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// The replay's clock: the delays model's event-driven loop and the tick model's, and the limits a replay
// stops at.

// runDelays is the event-driven loop: at each instant, due user events and kubelet transitions
// change the world, then the controller syncs while something changed (its own writes included)
// or a requeue is due; then virtual time jumps to the next thing scheduled.
func (e *engine) runDelays() error {
	e.dirty = true
	e.triggers = []string{"start"}
	e.newSegment = true
	for {
		now := e.clock.Now()
		if err := e.fireEvents(now); err != nil {
			return err
		}
		for _, t := range e.timers.PopDue(now) {
			before := e.api.NoteCount()
			t.Fire()
			if e.api.NoteCount() > before && !e.dirty {
				e.dirty = true
				e.triggers = appendOnce(e.triggers, "kubelet")
			}
		}
		if n := e.api.NoteCount(); n > 0 {
			e.api.CollectGarbage()
			e.dirty = true
		}
		if e.requeueDue(now) {
			e.triggers = append(e.triggers, "requeue")
			e.dirty = true
		}
		for n := 0; e.dirty; n++ {
			if n == maxSyncsPerInstant {
				e.tl.Notes = append(e.tl.Notes, fmt.Sprintf("at +%s the controller kept writing; stopped re-syncing after %d syncs", world.FormatDuration(now.Sub(e.start)), n))
				e.dirty = false
				break
			}
			st, err := e.sync()
			if err != nil {
				return err
			}
			e.api.CollectGarbage()
			e.kube.BindClaims()
			e.kube.ExpandClaims()
			e.dirty = st.wrote || e.api.NoteCount() > 0
			if e.dirty {
				e.triggers = []string{"watch"}
			}
			if stop := e.checkLimits(); stop {
				return nil
			}
		}
		next, ok := e.nextInstant(now)
		if !ok {
			return nil
		}
		if next.After(now) {
			e.triggers = nil
		}
		e.clock.Set(next)
		if e.overTime(e.clock.Now()) {
			return nil
		}
	}
}

// nextInstant is when something happens next: a kubelet transition, a requeue, a hold's retry, a user
// event; none when the world has settled and no event is left. A hold's retry that outlived its holds (the
// last sync held nothing: the operator opened the window, the role was handed off) comes as the
// controller's work queue brings it while anything else is still to happen, but it does not keep the
// world from settling, and once nothing else is left it is dropped: its sync would re-ask about no held
// write, and the module asks for its own requeue when time alone changes its plan, so it would write
// nothing, hours later (a window's retry is its opening), and the replay would end at its time limit
// instead of complete.
func (e *engine) nextInstant(now time.Time) (time.Time, bool) {
	var next *time.Time
	consider := func(t time.Time) {
		if next == nil || t.Before(*next) {
			next = &t
		}
	}
	if t, ok := e.timers.Next(); ok {
		consider(t)
	}
	if e.requeueAt != nil {
		consider(*e.requeueAt)
	}
	staleRetry := e.holdRetryAt != nil && !e.holding
	if e.holdRetryAt != nil && !staleRetry {
		consider(*e.holdRetryAt)
	}
	settled := next == nil && len(e.api.AwaitingGC()) == 0
	if t, ok := e.nextEventTime(now, settled); ok {
		consider(t)
	}
	switch {
	case staleRetry && next == nil:
		e.holdRetryAt = nil
	case staleRetry:
		consider(*e.holdRetryAt)
	}
	if next == nil {
		return time.Time{}, false
	}
	return *next, true
}

// runTick is the reference harness's loop: one sync per tick, world rules at the start of every
// tick after the first, stop when a sync writes nothing, asks for no requeue and nothing is
// pending. User events happen after the tick's world rules, before its sync.
func (e *engine) runTick() error {
	tick := e.cfg.TickEvery()
	settled := false
	e.newSegment = true
	e.triggers = []string{"start"}
	for step := 0; ; step++ {
		if step > 0 {
			e.clock.Set(e.clock.Now().Add(tick))
			e.kube.TickProgress(step)
			e.triggers = []string{"tick"}
		}
		e.kube.SetStep(step)
		if err := e.fireEvents(e.clock.Now()); err != nil {
			return err
		}
		_ = settled
		st, err := e.sync()
		if err != nil {
			return err
		}
		if stop := e.checkLimits(); stop {
			return nil
		}
		converged := st.actions == 0 && st.requeue == 0 && len(e.kube.PendingTick()) == 0
		settled = converged
		if converged {
			t, ok := e.nextEventTime(e.clock.Now(), true)
			if !ok {
				if st.syncErr {
					e.tl.StopReason = fmt.Sprintf("stuck at step %d: sync error with no writes and nothing pending", step)
				}
				return nil
			}
			// Nothing happens until the event: jump so that the next tick is at its time.
			if t.After(e.clock.Now().Add(tick)) {
				e.clock.Set(t.Add(-tick))
			}
		}
		if e.overTime(e.clock.Now().Add(tick)) {
			return nil
		}
	}
}

// overTime reports (and records as the stop reason) whether t is past the time limit.
func (e *engine) overTime(t time.Time) bool {
	from, since := e.start, ""
	if e.sc.Limits.Duration == nil {
		from, since = e.lastEvent, e.sinceLastChange()
	}
	if t.Sub(from) <= e.maxDuration() {
		return false
	}
	e.tl.StopReason = fmt.Sprintf("time limit (%s%s) reached; %s", world.FormatDuration(e.maxDuration()), since, e.progress())
	return true
}

// sinceLastChange words where the default limits count from.
func (e *engine) sinceLastChange() string {
	if e.next == 0 {
		return ""
	}
	return " since the last change of the world"
}

// progress says how far the set got: its status as the controller last wrote it.
func (e *engine) progress() string {
	return "the set's status: " + e.statusLine()
}

func (e *engine) maxDuration() time.Duration {
	if e.sc.Limits.Duration != nil {
		return e.sc.Limits.Duration.D()
	}
	return max(DefaultMaxDuration, time.Duration(e.replicas())*TimePerReplica)
}

func (e *engine) maxSteps() int {
	if e.sc.Limits.Steps > 0 {
		return e.sc.Limits.Steps
	}
	return max(defaultStepsFloor, int(e.replicas())*StepsPerReplica)
}

// defaultStepsFloor is DefaultMaxSteps (a variable for the test of limits per change).
var defaultStepsFloor = DefaultMaxSteps

// The most replicas a replay takes, by the module's memory limit (issue 32, finding 7: 100,000 replicas
// ran the module out of memory, exit 4, after minutes): every sync's snapshot holds every pod, and a
// Parallel creation plans every missing pod in one sync. Measured with the shipped module at its default
// 256 MiB: a snapshot of 8,192 pods of 1.7 KB fits and one of 12,000 does not; a Parallel creation of
// 19,000 fits and 20,000 does not. Whatever the memory, a plan that creates more than about 38,000 pods
// is larger than a plan may be (wasm.DefaultMaxOutputBytes at 1.7 KB a create).
const (
	ReplicasPerMiB  = 32
	MaxReplicasEver = 32768
)

// MaxReplicas is the most replicas a replay takes with a module whose memory limit is memoryLimitPages.
func MaxReplicas(memoryLimitPages uint32) int64 {
	return min(int64(memoryLimitPages/16)*ReplicasPerMiB, MaxReplicasEver)
}

// checkReplicas refuses, before its sync, a set beyond MaxReplicas of the module's memory limit (a
// *wasm.Module tells it): a world the module cannot hold, not a module failure.
func (e *engine) checkReplicas() error {
	m, ok := e.opts.Module.(interface{ Config() wasm.Config })
	if !ok {
		return nil
	}
	pages := m.Config().MemoryLimitPages
	if n, most := e.replicas(), MaxReplicas(pages); n > most {
		return invalidWorld("the set has %d replicas, more than the %d a replay takes with the module's %d MiB memory limit (%d a MiB, at most %d; raise it with --memory-limit-mib): a sync of more pods runs the module out of memory",
			n, most, pages/16, ReplicasPerMiB, MaxReplicasEver)
	}
	return nil
}

// replicas is the set's spec.replicas now (0 when the set is gone).
func (e *engine) replicas() int64 {
	n, _ := jsonobj.GetInt(e.api.StatefulSet(), "spec.replicas")
	return max(n, 0)
}

func (e *engine) checkLimits() bool {
	limit, taken, since := e.maxSteps(), len(e.tl.Steps), ""
	if e.sc.Limits.Steps == 0 {
		taken, since = taken-e.eventStep, e.sinceLastChange()
	}
	if taken >= limit {
		e.tl.StopReason = fmt.Sprintf("step limit (%d syncs%s) reached; %s", limit, since, e.progress())
		return true
	}
	now := time.Now()
	if !e.lastCheck.IsZero() {
		e.longestSync = max(e.longestSync, now.Sub(e.lastCheck))
	}
	e.lastCheck = now
	if why, spent := e.opts.Budget.spent(len(e.tl.Steps), e.longestSync); spent {
		if e.opts.Budget.Limit != "" {
			e.tl.StopReason = why + "; " + e.progress()
			return true
		}
		e.tl.StopReason, e.tl.budgetSpent = why, true
		return true
	}
	return false
}

// nextEventTime is when the next user event becomes due, if it can be known now.
func (e *engine) nextEventTime(now time.Time, settled bool) (time.Time, bool) {
	if e.next >= len(e.sc.Events) {
		return time.Time{}, false
	}
	if e.eventDue != nil {
		return *e.eventDue, true
	}
	ev := e.sc.Events[e.next]
	var t time.Time
	switch {
	case ev.At != nil:
		t = e.start.Add(ev.At.D())
	case ev.Settled:
		if !settled {
			return time.Time{}, false
		}
		t = now.Add(world.DurationOr(ev.After, 0))
	default:
		t = e.lastEvent.Add(world.DurationOr(ev.After, 0))
	}
	if t.Before(now) {
		t = now
	}
	e.eventDue = &t
	return t, true
}

// fireEvents applies every user event due at now, in order. An event that cannot be applied (an edit the
// API server refuses, a path that is not in the set, a pod that does not exist) ends the replay: the
// scenario does not say what its author meant.
func (e *engine) fireEvents(now time.Time) error {
	for e.next < len(e.sc.Events) {
		t, ok := e.nextEventTime(now, false)
		if !ok || t.After(now) {
			return nil
		}
		ev := e.sc.Events[e.next]
		e.next++
		e.eventDue = nil
		e.lastEvent, e.eventStep = now, len(e.tl.Steps)
		if err := e.applyEvent(ev); err != nil {
			var world *InvalidWorldError
			if errors.As(err, &world) {
				return invalidWorld("event %d (%s, at +%s): %v", e.next, ev.action(), now.Sub(e.start), world.Err)
			}
			return fmt.Errorf("event %d (%s, at +%s): %w", e.next, ev.action(), now.Sub(e.start), err)
		}
		e.dirty = true
		e.newSegment = true
		e.triggers = appendOnce(e.triggers, "user")
	}
	return nil
}
