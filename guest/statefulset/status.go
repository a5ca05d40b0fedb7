package statefulset

import (
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// countStatus is updateStatus: replicas, ready, available, current and updated counts over
// the given pods.
func (s *syncer) countStatus(st *setStatus, current, update *revision, lists ...[]*pod) {
	var c podCounts
	for _, list := range lists {
		for _, p := range list {
			if p != nil { // an empty replica slot: a pod not yet created counts for nothing
				c.add(p, s.set.MinReadySeconds, s.now, current.Meta.Name, update.Meta.Name, 1)
			}
		}
	}
	c.into(st)
}

// completeUpdate: once every replica is updated and ready, the update revision becomes current.
func (s *syncer) completeUpdate(st *setStatus) {
	r := s.set.Replicas
	if st.UpdatedReplicas == r && st.ReadyReplicas == r && st.Replicas == r {
		st.CurrentReplicas = st.UpdatedReplicas
		st.CurrentRevision = st.UpdateRevision
		if getCondition(st, conditionProgressing) != nil && s.set.StrategyType == strategyRecreate && s.features.RecreateStrategy {
			s.setProgressingCondition(st, "False", reasonRecreateCompleted, "All pods recreated successfully")
		}
	}
}

// inconsistentStatus: the new status differs from the set's (collisionCount is not compared).
func (s *syncer) inconsistentStatus(st *setStatus) bool {
	old := &s.set.Status
	return st.ObservedGeneration > old.ObservedGeneration ||
		st.Replicas != old.Replicas ||
		st.CurrentReplicas != old.CurrentReplicas ||
		st.ReadyReplicas != old.ReadyReplicas ||
		st.UpdatedReplicas != old.UpdatedReplicas ||
		st.CurrentRevision != old.CurrentRevision ||
		st.AvailableReplicas != old.AvailableReplicas ||
		st.UpdateRevision != old.UpdateRevision ||
		!equalConditions(old.Conditions, st.Conditions)
}

func equalConditions(a, b []condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// writeStatus is updateStatefulSetStatus: complete the rollout if done, then write the status
// if it changed.
func (s *syncer) writeStatus(st *setStatus) error {
	s.completeUpdate(st)
	s.progressConditions(st) // extension progress-deadline (extended module only)
	if s.features.MaxUnavailable && s.set.HasRollingUpdate {
		if _, err := s.maxUnavailable(); err != nil {
			return err
		}
	}
	if !s.inconsistentStatus(st) {
		return nil
	}
	// realStatefulSetStatusUpdater retries a Conflict with the lister's set: the same write again
	var err error
	for attempt := 0; attempt < retryStatusSteps; attempt++ {
		obj := jsonv.Obj(jsonv.M("status", statusValue(st)))
		err = s.issue(action{Verb: verbUpdateStatus, Kind: kindStatefulSet, Namespace: s.set.Meta.Namespace, Name: s.set.Meta.Name, Object: &obj}, nil)
		if err == nil || !isConflict(err) {
			break
		}
	}
	return err
}

// statusValue is the JSON of a StatefulSetStatus.
func statusValue(st *setStatus) jsonv.Value {
	// room for every member it may have: grown one Set at a time, its members were stored five times over
	v := jsonv.Value{K: jsonv.Object, O: make([]jsonv.Member, 0, 10)}
	if st.ObservedGeneration != 0 {
		v.Set("observedGeneration", jsonv.Int(st.ObservedGeneration))
	}
	v.Set("replicas", jsonv.Int(int64(st.Replicas)))
	if st.ReadyReplicas != 0 {
		v.Set("readyReplicas", jsonv.Int(int64(st.ReadyReplicas)))
	}
	if st.CurrentReplicas != 0 {
		v.Set("currentReplicas", jsonv.Int(int64(st.CurrentReplicas)))
	}
	if st.UpdatedReplicas != 0 {
		v.Set("updatedReplicas", jsonv.Int(int64(st.UpdatedReplicas)))
	}
	if st.CurrentRevision != "" {
		v.Set("currentRevision", jsonv.Str(st.CurrentRevision))
	}
	if st.UpdateRevision != "" {
		v.Set("updateRevision", jsonv.Str(st.UpdateRevision))
	}
	if st.HasCollisionCount {
		v.Set("collisionCount", jsonv.Int(int64(st.CollisionCount)))
	}
	if len(st.Conditions) > 0 {
		cs := make([]jsonv.Value, len(st.Conditions))
		for i, c := range st.Conditions {
			cv := jsonv.Obj(jsonv.M("type", jsonv.Str(c.Type)), jsonv.M("status", jsonv.Str(c.Status)))
			if c.LastTransitionTime == "" {
				cv.Set("lastTransitionTime", jsonv.NullV())
			} else {
				cv.Set("lastTransitionTime", jsonv.Str(c.LastTransitionTime))
			}
			if c.Reason != "" {
				cv.Set("reason", jsonv.Str(c.Reason))
			}
			if c.Message != "" {
				cv.Set("message", jsonv.Str(c.Message))
			}
			cs[i] = cv
		}
		v.Set("conditions", jsonv.Value{K: jsonv.Array, A: cs})
	}
	v.Set("availableReplicas", jsonv.Int(int64(st.AvailableReplicas)))
	return v
}

// Progressing condition of the Recreate strategy.
const (
	conditionProgressing     = "Progressing"
	reasonRecreateInProgress = "RecreateInProgress"
	reasonRecreateCompleted  = "RecreateCompleted"
)

func getCondition(st *setStatus, typ string) *condition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}

// setProgressingCondition is setStatefulSetCondition with a new Progressing condition stamped now.
func (s *syncer) setProgressingCondition(st *setStatus, status, reason, message string) {
	c := condition{Type: conditionProgressing, Status: status, Reason: reason, Message: message, LastTransitionTime: formatTime(s.now)}
	cur := getCondition(st, conditionProgressing)
	if cur == nil {
		st.Conditions = append(st.Conditions, c)
		return
	}
	if cur.Status == c.Status && cur.Reason == c.Reason && cur.Message == c.Message {
		return
	}
	if cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	*cur = c
}
