package rollout_test

import (
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/rollout"
)

// withConditions sets the set's status conditions.
func withConditions(conds ...map[string]any) func(set map[string]any) {
	return func(set map[string]any) {
		l := make([]any, len(conds))
		for i, c := range conds {
			l[i] = c
		}
		status(set)["conditions"] = l
	}
}

// A rollout ends complete as kubectl rollout status's does (the latest generation observed, the pods
// updated and ready, the partition's share when partitioned, the status recorded), and stuck where
// kubectl's would wait forever: the progress deadline passed, the set is being rolled back, InPlaceOnly holds
// a pod; a condition of an earlier generation does not count.
func TestStatusEnded(t *testing.T) {
	deadline := map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
		"message": `StatefulSet "web" has timed out progressing to revision web-b.`}
	rolledBack := map[string]any{"type": "RolledBack", "status": "True", "reason": "ProgressDeadlineExceeded",
		"message": `StatefulSet "web" is rolled back to revision web-a from revision web-b: no progress for 10s.`}
	newer := func(set map[string]any) {
		set["metadata"].(map[string]any)["generation"] = status(set)["observedGeneration"].(float64) + 1
	}
	for _, c := range []struct {
		name     string
		scenario string
		edits    []func(set map[string]any)
		want     rollout.Ending
		why      string
	}{
		{"complete", "rolling-update", nil, rollout.Complete, "3 pods Ready at revision B"},
		{"partitioned", "ondelete-then-rollingupdate", nil, rollout.Complete, "partition 1 holds back web-0 (A)"},
		{"waiting for a pod", "create-never-ready", nil, rollout.NotEnded, ""},
		{"OnDelete waits for deletes", "ondelete", nil, rollout.NotEnded, ""},
		{"the next sync creates", "rolling-update", []func(map[string]any){func(set map[string]any) { spec(set)["replicas"] = 5 }}, rollout.NotEnded, ""},
		{"an edit not observed yet", "rolling-update", []func(map[string]any){newer}, rollout.NotEnded, ""},
		{"the status not recorded yet", "rolling-update", []func(map[string]any){func(set map[string]any) { status(set)["readyReplicas"] = 2 }}, rollout.NotEnded, ""},
		{"progress deadline exceeded", "create-never-ready", []func(map[string]any){withConditions(deadline)}, rollout.Stuck,
			`Progressing=False ProgressDeadlineExceeded: StatefulSet "web" has timed out progressing to revision web-b.`},
		{"a deadline of an earlier generation", "create-never-ready", []func(map[string]any){withConditions(deadline), newer}, rollout.NotEnded, ""},
		{"rolling back", "create-never-ready", []func(map[string]any){withConditions(rolledBack)}, rollout.Stuck, "RolledBack=True ProgressDeadlineExceeded: StatefulSet"},
		// the sync that rolls back writes both conditions: the rollback is what a reader needs
		{"rolling back past the deadline", "create-never-ready", []func(map[string]any){withConditions(deadline, rolledBack)}, rollout.Stuck, "RolledBack=True"},
		// the rollback rolled out: a wait started now (the deploy of a revert to the same template) finds it complete
		{"rolled back", "rolling-update", []func(map[string]any){withConditions(rolledBack)}, rollout.Complete,
			"3 pods Ready at revision B (RolledBack=True ProgressDeadlineExceeded: StatefulSet"},
		{"InPlaceOnly holds a pod", "create-never-ready", []func(map[string]any){withConditions(map[string]any{"type": "InPlaceUpdateBlocked", "status": "True", "reason": "ChangeNotInPlace",
			"message": "web-0: spec.containers[0].env changes"})}, rollout.Stuck, "InPlaceUpdateBlocked=True ChangeNotInPlace: web-0"},
		{"a progressing condition", "create-never-ready", []func(map[string]any){withConditions(map[string]any{"type": "Progressing", "status": "True", "reason": "NewRevisionProgressing"})}, rollout.NotEnded, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := finalSnapshot(t, c.scenario)
			for _, e := range c.edits {
				snap = edit(t, snap, e)
			}
			st := statusOf(t, snap)
			got, why := st.Ended(st.Generation) // the wait began at the set's generation
			if got != c.want || !strings.Contains(why, c.why) || (got == rollout.NotEnded) != (why == "") {
				t.Errorf("Ended() = %q, %q; want %q, %q (state %s: %s)", got, why, c.want, c.why, st.State, strings.Join(st.Reasons, "; "))
			}
		})
	}
	// Rolled back while waited on (the rollback's template write is a generation past the wait's start), and
	// done by the time the wait looked again, as it may be on a fast cluster: the rollout waited on failed.
	st := statusOf(t, edit(t, finalSnapshot(t, "rolling-update"), withConditions(rolledBack)))
	if got, why := st.Ended(st.Generation - 1); got != rollout.Stuck || !strings.HasPrefix(why, "RolledBack=True") {
		t.Errorf("rolled back during the wait: %q, %q; want stuck naming RolledBack", got, why)
	}
	if got, why := rollout.NotFound("default", "web").Ended(0); got != rollout.Gone || why != "StatefulSet default/web not found" {
		t.Errorf("a set that does not exist: %q, %q", got, why)
	}
}

// A rollout complete after its set was rolled back at the deadline says that the source the set is applied
// from still holds the template that failed (a GitOps loop); one complete without a rollback does not.
func TestStatusOfARolledBackSetSaysToRevertTheSource(t *testing.T) {
	snap := finalSnapshot(t, "rolling-update")
	advice := "revert the change there"
	if st := statusOf(t, snap); strings.Contains(strings.Join(st.Reasons, "; "), advice) {
		t.Errorf("a set never rolled back: %q", st.Reasons)
	}
	st := statusOf(t, edit(t, snap, withConditions(map[string]any{"type": "RolledBack", "status": "True", "reason": "ProgressDeadlineExceeded",
		"message": `StatefulSet "web" is rolled back to revision web-a from revision web-b: no progress for 10s.`})))
	if st.State != rollout.StateComplete || !strings.Contains(strings.Join(st.Reasons, "; "), advice) || st.Why() != "3 pods Ready at revision B" {
		t.Errorf("a set rolled back, the rollback rolled out: state %s, reasons %q", st.State, st.Reasons)
	}
}
