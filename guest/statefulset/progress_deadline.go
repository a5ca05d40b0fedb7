package statefulset

import (
	"strconv"

	"github.com/ordinal-dev/ordinal/internal/deadline"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// Extension progress-deadline (extended module only; kubernetes/kubernetes#79606): a set annotated with
// ordinal.dev/progress-deadline-seconds gets a Deployment's rollout conditions, so `kubectl wait
// --for=condition=Available` and `--for=condition=Progressing=False` work on it:
//
//   - Progressing True NewRevisionProgressing while the rollout to the update revision moves (Deployment:
//     ReplicaSetUpdated), True RolloutComplete once it is done (Deployment: NewReplicaSetAvailable), False
//     ProgressDeadlineExceeded when no pod became updated and available for the deadline (as Deployment),
//     Unknown RolloutPaused while extension pause holds it (Deployment: DeploymentPaused);
//   - Available True MinimumReplicasAvailable when at least replicas - maxUnavailable pods are available,
//     else False MinimumReplicasUnavailable (as Deployment).
//
// A StatefulSetCondition has no lastUpdateTime, the field Deployment measures its deadline from, so the
// Progressing condition's lastTransitionTime carries it: stamped when the rollout starts (the message names
// the update revision, so a new revision is a new transition) and again on every sync that sees progress
// (Deployment's DeploymentProgressing: more pods updated, ready or available, or fewer old ones than the
// status the sync read). With ordinal.dev/on-progress-deadline: Pause, a set past its deadline has no pod
// written until its template changes or the annotation goes (progressDeadlinePaused); with Rollback, the
// set's template is put back to its current revision's (rollbackOnDeadline: a template change like any
// other, after the status write), and pods left at another revision that have not been Ready for the
// deadline are replaced, as extension recover-stuck replaces them, so the rollback gets past a pod of the
// broken revision that never becomes Ready (kubernetes/kubernetes#67250). Upstream's own
// Progressing condition (the Recreate strategy's) is left alone: a Recreate set gets only Available.
const (
	annotationProgressDeadline   = "ordinal.dev/progress-deadline-seconds" // "600": extension progress-deadline
	annotationOnProgressDeadline = "ordinal.dev/on-progress-deadline"      // "Pause": what passing it does

	conditionAvailable = "Available"

	reasonNewRevisionProgressing     = "NewRevisionProgressing"
	reasonRolloutComplete            = "RolloutComplete"
	reasonProgressDeadlineExceeded   = "ProgressDeadlineExceeded"
	reasonRolloutPaused              = "RolloutPaused"
	reasonMinimumReplicasAvailable   = "MinimumReplicasAvailable"
	reasonMinimumReplicasUnavailable = "MinimumReplicasUnavailable"

	onDeadlinePause    = "Pause"
	onDeadlineRollback = "Rollback"

	conditionRolledBack = "RolledBack"
	eventRollingBack    = "RollingBack"
	patchTypeJSONPatch  = "application/json-patch+json"
)

// progressDeadline is the set's deadline (0: the extension is off). A value that is not a positive whole
// number of seconds turns it off, with a warning.
func (s *syncer) progressDeadline() time.Duration {
	if !extendedBuild {
		return 0
	}
	v, ok := s.set.Meta.Annotations[annotationProgressDeadline]
	if !ok {
		return 0
	}
	d, ok := parseProgressDeadline(v)
	if !ok {
		s.event(eventWarning, "InvalidAnnotation", annotationProgressDeadline+": "+strconv.Quote(v)+
			" is not a positive whole number of seconds (e.g. 600): the set has no progress deadline and no rollout conditions")
	}
	return d
}

func parseProgressDeadline(v string) (time.Duration, bool) {
	n, ok := deadline.Seconds(v) // the hosts' reading too (host/kube.ProgressDeadline)
	return time.Duration(n) * time.Second, ok
}

// rollbackRecoversAfter is, for a set this extension rolled back to update (its RolledBack condition names
// that revision), the deadline: how long a pod left at another revision may stay not Ready before it is
// replaced (recoverStuckAfter's default; 0: none). Only then: before a rollback, or once the template
// changed again, a pod not Ready is the rollout's business, as upstream has it.
func (s *syncer) rollbackRecoversAfter(update string) time.Duration {
	if !extendedBuild || s.set.Meta.Annotations[annotationOnProgressDeadline] != onDeadlineRollback {
		return 0
	}
	rolledBack := false
	for _, c := range s.set.Status.Conditions {
		rolledBack = rolledBack || c.Type == conditionRolledBack && c.Status == "True" && strings.Contains(c.Message, " to revision "+update+" ")
	}
	if !rolledBack {
		return 0
	}
	d, _ := parseProgressDeadline(s.set.Meta.Annotations[annotationProgressDeadline])
	return d
}

// onProgressDeadline is what passing the deadline does: "" (report it), Pause or Rollback. Any other value is warned
// of and reports only, so a misspelling never starts holding pods back.
func (s *syncer) onProgressDeadline() string {
	v, ok := s.enumAnnotation(annotationOnProgressDeadline)
	if !ok || v == onDeadlinePause || v == onDeadlineRollback {
		return v
	}
	s.event(eventWarning, "InvalidAnnotation", annotationOnProgressDeadline+": "+strconv.Quote(v)+
		` is neither "Pause" nor "Rollback": passing the progress deadline only reports it`)
	return ""
}

// progressDeadlinePaused: the set asks to pause at its deadline and its status says the rollout to its
// current update revision passed it (the sync that saw it pass wrote that). A new template is a new update
// revision, so it resumes; so does removing either annotation.
func (s *syncer) progressDeadlinePaused() bool {
	if !extendedBuild || s.set.Meta.Annotations[annotationOnProgressDeadline] != onDeadlinePause {
		return false
	}
	if _, ok := s.set.Meta.Annotations[annotationProgressDeadline]; !ok {
		return false
	}
	for _, c := range s.set.Status.Conditions {
		if c.Type == conditionProgressing && c.Status == "False" && c.Reason == reasonProgressDeadlineExceeded {
			return c.Message == s.deadlineExceededMessage(s.set.Status.UpdateRevision)
		}
	}
	return false
}

// progressConditions sets the extension's conditions on the status about to be written (writeStatus),
// or removes them once the set no longer asks for them.
func (s *syncer) progressConditions(st *setStatus) {
	if !extendedBuild || s.set.Meta.Deleting {
		return
	}
	deadline := s.progressDeadline()
	if _, ok := s.set.Meta.Annotations[annotationProgressDeadline]; !ok {
		if v, ok := s.enumAnnotation(annotationOnProgressDeadline); ok {
			s.event(eventWarning, "InvalidAnnotation", annotationOnProgressDeadline+": "+strconv.Quote(v)+" without "+
				annotationProgressDeadline+": there is no deadline to act on")
		}
	}
	if deadline == 0 {
		removeConditions(st, conditionProgressing, reasonNewRevisionProgressing, reasonRolloutComplete, reasonProgressDeadlineExceeded, reasonRolloutPaused)
		removeConditions(st, conditionAvailable, reasonMinimumReplicasAvailable, reasonMinimumReplicasUnavailable)
		removeConditions(st, conditionRolledBack, reasonProgressDeadlineExceeded)
		return // (the module's own only: another writer's conditions of these names stay, removeConditions)
	}
	onDeadline := s.onProgressDeadline() // read every sync: a value it cannot read is warned of at once
	if c := getCondition(st, conditionRolledBack); c != nil && !strings.Contains(c.Message, " to revision "+st.UpdateRevision+" ") {
		removeConditions(st, conditionRolledBack, reasonProgressDeadlineExceeded) // the template changed since
	}
	s.availableCondition(st)
	if s.set.StrategyType == strategyRecreate && s.features.RecreateStrategy {
		return // upstream's Recreate strategy writes Progressing itself
	}
	s.progressingCondition(st, deadline, onDeadline)
}

// availableCondition is Deployment's: at least replicas - maxUnavailable pods available.
func (s *syncer) availableCondition(st *setStatus) {
	maxUnavailable := 1
	if s.set.HasRollingUpdate {
		if v, err := s.maxUnavailable(); err == nil {
			maxUnavailable = v
		}
	}
	if c := getCondition(st, conditionAvailable); c != nil && !ownCondition(c, reasonMinimumReplicasAvailable, reasonMinimumReplicasUnavailable) {
		return // another writer's Available: left as it is
	}
	// constant messages (Deployment's): the counts are in the status, and a message that changed with them
	// would restamp lastTransitionTime while the condition stays False
	if want := int(s.set.Replicas) - maxUnavailable; int(st.AvailableReplicas) >= want {
		s.setCondition(st, conditionAvailable, "True", reasonMinimumReplicasAvailable, "StatefulSet has minimum availability.")
	} else {
		s.setCondition(st, conditionAvailable, "False", reasonMinimumReplicasUnavailable, "StatefulSet does not have minimum availability.")
	}
}

// progressingCondition is Deployment's syncRolloutStatus over a StatefulSet's status.
func (s *syncer) progressingCondition(st *setStatus, deadline time.Duration, onDeadline string) {
	rev := st.UpdateRevision
	completed := "StatefulSet " + strconv.Quote(s.set.Meta.Name) + " has successfully progressed to revision " + rev + "."
	if s.set.StrategyType == strategyRolling && s.set.HasRollingUpdate && s.set.Partition > 0 {
		// a partition lowered later is the same revision's next stage: a new rollout, with its own deadline
		completed = "StatefulSet " + strconv.Quote(s.set.Meta.Name) + " has successfully progressed to revision " + rev +
			" from partition " + strconv.Itoa(int(s.set.Partition)) + "."
	}
	if c := getCondition(st, conditionProgressing); c != nil && c.Reason == reasonRolloutComplete && c.Message == completed {
		// Deployment's isCompleteDeployment: a finished rollout is not timed out again (a pod losing its
		// readiness later, a scale); a new revision is a new rollout
		return
	}
	switch {
	case s.rolloutComplete(st):
		s.setCondition(st, conditionProgressing, "True", reasonRolloutComplete, completed)
		return
	case s.paused():
		s.setCondition(st, conditionProgressing, "Unknown", reasonRolloutPaused,
			"StatefulSet "+strconv.Quote(s.set.Meta.Name)+" is paused ("+annotationPaused+"): no deadline is measured.")
		return
	case s.set.StrategyType == strategyRolling && s.set.HasRollingUpdate && s.partitionSlot() >= int(s.set.Replicas):
		// a partition above every ordinal (kubectl ordinal pause holds an apps/v1 set so) updates no pod: the
		// rollout is held as a pause holds it. Measured, its deadline passed and Rollback rewrote the template
		// and replaced a pod of a set its user had paused.
		s.setCondition(st, conditionProgressing, "Unknown", reasonRolloutPaused,
			"StatefulSet "+strconv.Quote(s.set.Meta.Name)+" is held by its partition "+strconv.Itoa(int(s.set.Partition))+
				" (no pod is updated): no deadline is measured.")
		return
	case s.set.StrategyType == strategyOnDelete:
		// the controller replaces no pod by itself: progress is the user's, no deadline is measured
		s.setCondition(st, conditionProgressing, "True", reasonNewRevisionProgressing, s.progressingMessage(rev))
		return
	}
	cur := getCondition(st, conditionProgressing)
	since, ok := s.progressSince(cur, rev)
	switch {
	case !ok || s.progressed(st):
		// a new rollout, one resumed, or progress: the deadline is measured from now
		c := condition{Type: conditionProgressing, Status: "True", Reason: reasonNewRevisionProgressing,
			Message: s.progressingMessage(rev), LastTransitionTime: formatTime(s.now)}
		if cur == nil {
			st.Conditions = append(st.Conditions, c)
		} else {
			*cur = c
		}
		s.requeueWithin(deadline + time.Second)
	case cur.Reason == reasonProgressDeadlineExceeded: // stays until progress or a new revision
		s.rollBackAtDeadline(st, deadline, onDeadline) // a rollback the last sync could not write: again
	default:
		if left := since.Add(deadline).Sub(s.now); left >= 0 {
			// Deployment's requeueStuckDeployment: one second past the deadline (a transition time far in the
			// future, clock skew or a forged status, is at most the deadline away)
			s.requeueWithin(min(left, deadline) + time.Second)
			return
		}
		s.setCondition(st, conditionProgressing, "False", reasonProgressDeadlineExceeded, s.deadlineExceededMessage(rev))
		what := "it is reported"
		if onDeadline == onDeadlinePause {
			what = "no pod is created, deleted or updated until the template changes or " + annotationOnProgressDeadline + " is removed"
		}
		if onDeadline == onDeadlineRollback && st.CurrentRevision != rev {
			what = "it is rolled back to revision " + st.CurrentRevision
		}
		s.event(eventWarning, reasonProgressDeadlineExceeded, "StatefulSet "+s.set.Meta.Name+" made no progress to revision "+rev+" for "+
			deadline.String()+" ("+annotationProgressDeadline+"): "+strconv.Itoa(int(st.UpdatedReplicas))+" of "+
			strconv.Itoa(int(s.set.Replicas))+" pods updated, "+strconv.Itoa(int(st.AvailableReplicas))+" available; "+what)
		s.rollBackAtDeadline(st, deadline, onDeadline)
	}
}

// rollBackAtDeadline marks, for a set that rolls back at its deadline and has a revision to go back to, the
// rollback rollbackOnDeadline writes after the status, and records why in the RolledBack condition.
func (s *syncer) rollBackAtDeadline(st *setStatus, deadline time.Duration, onDeadline string) {
	if onDeadline != onDeadlineRollback || st.CurrentRevision == st.UpdateRevision || st.CurrentRevision == "" {
		return
	}
	if _, ok := revisionOwnTemplate(s.revByKey[key(s.set.Meta.Namespace, st.CurrentRevision)]); !ok {
		s.event(eventWarning, eventRollingBack, "StatefulSet "+s.set.Meta.Name+" cannot be rolled back to revision "+st.CurrentRevision+
			": the ControllerRevision does not hold a whole pod template")
		return
	}
	s.rollbackTo, s.rollbackFrom = st.CurrentRevision, st.UpdateRevision
	s.setCondition(st, conditionRolledBack, "True", reasonProgressDeadlineExceeded, "StatefulSet "+strconv.Quote(s.set.Meta.Name)+
		" is rolled back to revision "+st.CurrentRevision+" from revision "+st.UpdateRevision+": no progress for "+deadline.String()+".")
}

// rollbackOnDeadline writes the rollback rollBackAtDeadline marked: a JSON patch of the set that puts back the
// template of the revision it came from (the ControllerRevision's own template, as the API server stored it),
// guarded by the generation the sync saw, so an edit made meanwhile is never overwritten. The set's next sync
// rolls the pods back as for any template change, under the set's ordering and policies.
func (s *syncer) rollbackOnDeadline() error {
	if !extendedBuild || s.rollbackTo == "" {
		return nil
	}
	tmpl, _ := revisionOwnTemplate(s.revByKey[key(s.set.Meta.Namespace, s.rollbackTo)]) // checked: rollBackAtDeadline
	patch := jsonv.Arr(
		jsonv.Obj(jsonv.M("op", jsonv.Str("test")), jsonv.M("path", jsonv.Str("/metadata/generation")), jsonv.M("value", jsonv.Int(s.set.Meta.Generation))),
		jsonv.Obj(jsonv.M("op", jsonv.Str("replace")), jsonv.M("path", jsonv.Str("/spec/template")), jsonv.M("value", tmpl)))
	s.event(eventNormal, eventRollingBack, "Rolling StatefulSet "+s.set.Meta.Name+" back from revision "+s.rollbackFrom+" to revision "+
		s.rollbackTo+" ("+annotationOnProgressDeadline+": "+onDeadlineRollback+")")
	return s.issue(action{Verb: verbPatch, Kind: kindStatefulSet, Namespace: s.set.Meta.Namespace, Name: s.set.Meta.Name,
		PatchType: patchTypeJSONPatch, Patch: &patch}, nil)
}

// revisionOwnTemplate is the whole pod template a ControllerRevision stores (data.spec.template with
// "$patch": "replace", as every StatefulSet controller since 1.7 writes it), without the directive.
func revisionOwnTemplate(r *revision) (jsonv.Value, bool) {
	if r == nil || len(r.DataRaw) == 0 {
		return jsonv.Value{}, false
	}
	data, err := jsonv.Parse(r.DataRaw)
	if err != nil || repeatsKeys(data) {
		// a key twice (or but for case) reads two ways: the host's firewall refuses to judge it, and a
		// rollback it refused would refuse the whole sync, every sync
		return jsonv.Value{}, false
	}
	t := data.G("spec").G("template")
	if t.K != jsonv.Object || t.G("$patch").Str() != "replace" {
		return jsonv.Value{}, false
	}
	t = t.Clone()
	t.Delete("$patch")
	return t, true
}

// progressed is Deployment's DeploymentProgressing: this sync's status shows progress over the status it
// read (more pods updated, ready or available, or fewer pods at other revisions).
func (s *syncer) progressed(st *setStatus) bool {
	old := &s.set.Status
	return st.UpdatedReplicas > old.UpdatedReplicas ||
		st.Replicas-st.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		st.ReadyReplicas > old.ReadyReplicas ||
		st.AvailableReplicas > old.AvailableReplicas
}

// rolloutComplete: every pod the rollout replaces (those from the partition up) is at the update revision,
// and every replica exists and is available.
func (s *syncer) rolloutComplete(st *setStatus) bool {
	r := s.set.Replicas
	want := r
	if s.set.StrategyType == strategyRolling && s.set.HasRollingUpdate {
		want = r - int32(s.partitionSlot())
		if want < 0 {
			want = 0
		}
	}
	return st.Replicas == r && st.AvailableReplicas == r && st.UpdatedReplicas >= want &&
		st.ObservedGeneration >= s.set.Meta.Generation
}

// progressSince is the last progress the Progressing condition records for a rollout to revision rev (its
// lastTransitionTime), and false when it records none: no condition, another revision, a rollout complete
// or paused, or a time it cannot read.
func (s *syncer) progressSince(c *condition, rev string) (time.Time, bool) {
	if c == nil || !(c.Reason == reasonNewRevisionProgressing && c.Message == s.progressingMessage(rev) ||
		c.Reason == reasonProgressDeadlineExceeded && c.Message == s.deadlineExceededMessage(rev)) {
		return time.Time{}, false
	}
	t, err := parseTime(c.LastTransitionTime)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

func (s *syncer) progressingMessage(rev string) string {
	return "StatefulSet " + strconv.Quote(s.set.Meta.Name) + " is progressing to revision " + rev + "."
}

func (s *syncer) deadlineExceededMessage(rev string) string {
	return "StatefulSet " + strconv.Quote(s.set.Meta.Name) + " has timed out progressing to revision " + rev + "."
}

// setCondition sets a condition of the extension: a change of status, reason or message is a transition
// (stamped now), as the messages name the revision a rollout goes to.
func (s *syncer) setCondition(st *setStatus, typ, status, reason, message string) {
	c := condition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: formatTime(s.now)}
	if cur := getCondition(st, typ); cur != nil {
		if cur.Status == status && cur.Reason == reason && cur.Message == message {
			return
		}
		*cur = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}

// removeConditions drops the condition of type typ when it is the extension's: one of the given reasons and
// a message the extension writes. Another writer's condition of the same name stays (a set that never opted
// in keeps upstream's plan whatever its status carries).
func removeConditions(st *setStatus, typ string, reasons ...string) {
	out := st.Conditions[:0]
	for _, c := range st.Conditions {
		if !(c.Type == typ && ownCondition(&c, reasons...)) {
			out = append(out, c)
		}
	}
	st.Conditions = out
}

// ownCondition: the condition has one of the extension's reasons and a message the extension writes (they
// all begin "StatefulSet ").
func ownCondition(c *condition, reasons ...string) bool {
	if !strings.HasPrefix(c.Message, "StatefulSet ") {
		return false
	}
	for _, r := range reasons {
		if c.Reason == r {
			return true
		}
	}
	return false
}

// repeatsKeys reports whether an object in v, at any depth, has a key twice, exactly or but for case.
func repeatsKeys(v jsonv.Value) bool {
	switch v.K {
	case jsonv.Object:
		seen := make(map[string]bool, len(v.O))
		for _, m := range v.O {
			k := strings.ToLower(m.Key)
			if seen[k] || repeatsKeys(m.Val) {
				return true
			}
			seen[k] = true
		}
	case jsonv.Array:
		for _, e := range v.A {
			if repeatsKeys(e) {
				return true
			}
		}
	}
	return false
}
