package rollout

import (
	"fmt"

	"github.com/ordinal-dev/ordinal/abi"
)

// Ending is how a rollout that someone waits on (kubectl ordinal status --wait) has ended.
type Ending string

// Endings.
const (
	NotEnded Ending = ""
	// Complete: every pod the rollout moves is at the update revision and Ready (Available, with
	// minReadySeconds), up to the partition when the set has one, and the controller has recorded it.
	Complete Ending = "complete"
	// Stuck: the rollout will not end by itself: the set's progress deadline passed (with on-progress-deadline
	// Rollback, the template is being put back), or pod-update-policy InPlaceOnly holds a pod.
	Stuck Ending = "stuck"
	// Gone: the set does not exist.
	Gone Ending = "gone"
)

// Ended says whether the rollout has ended, how, and why in one line. It is kubectl rollout status's test —
// the controller has observed the set's latest generation, and its status says the pods are updated and
// ready — made of the pods as the module reads them and of the next sync writing nothing (so the status
// the controller recorded is final), and it knows what kubectl's does not: a rollout that cannot end by
// itself. A condition counts only in a status of the set's latest generation; an older one is of an
// earlier edit (a stale ProgressDeadlineExceeded before the controller has seen the fix). since is the set's
// generation when the wait began: a rollback writes the template, a new generation, so one past since rolled
// back the rollout waited on, however far it has rolled back since (a wait sees the states it is shown, not
// every state the set went through).
func (s *Status) Ended(since int64) (Ending, string) {
	switch {
	case s.State == StateNotFound:
		return Gone, fmt.Sprintf("StatefulSet %s/%s not found", s.Namespace, s.Name)
	case s.ObservedGeneration < s.Generation:
		return NotEnded, ""
	}
	complete := (s.State == StateComplete || s.State == StatePartitioned) && len(s.Next.Writes) == 0 && s.Next.UpdateRevision == ""
	var rolledBack, stuck string
	for _, c := range s.Conditions {
		switch {
		case c.Type == abi.ConditionRolledBack && c.Status == "True":
			// The condition stays for as long as the set keeps the template it was rolled back to: the edit failed
			// while the rollback rolls out, or when the rollback came during the wait; but a wait begun after it
			// (say, the deploy of a Git revert to that same template, which changes nothing) finds a set that is
			// complete, and says how it got there.
			rolledBack = conditionLine(c)
		case stuck == "" && (abi.ProgressDeadlineExceeded(c.Type, c.Status, c.Reason) || abi.InPlaceOnlyHolds(c.Type, c.Status)):
			stuck = conditionLine(c)
		}
	}
	switch {
	case rolledBack != "" && (!complete || s.Generation > since):
		return Stuck, rolledBack // the deadline passed too; the rollback says what follows
	case stuck != "":
		return Stuck, stuck
	case complete && rolledBack != "":
		return Complete, s.Why() + " (" + rolledBack + ")"
	case complete:
		return Complete, s.Why()
	}
	return NotEnded, ""
}

// conditionLine is a condition as one line: Type=Status Reason: message.
func conditionLine(c Condition) string {
	l := c.Type + "=" + c.Status
	if c.Reason != "" {
		l += " " + c.Reason
	}
	if c.Message != "" {
		l += ": " + c.Message
	}
	return l
}

// Why is the reason for the state in one line: what the rollout waits for, or why it is complete (after
// the other controller's, which OfWith puts first).
func (s *Status) Why() string {
	r := s.Reasons
	if s.OtherController != "" && len(r) > 1 {
		r = r[1:]
	}
	if len(r) == 0 {
		return s.State
	}
	return r[0]
}
