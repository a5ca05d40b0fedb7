package replay

import (
	"path/filepath"
	"strings"
	"testing"
)

// Probes of extension progress-deadline (branch probe-deadline): scenarios under
// testdata/probe-deadline. Deployment's DeploymentTimedOut never times out a rollout its Progressing
// condition records as complete (NewReplicaSetAvailable); the module starts a new deadline whenever a
// completed set is not fully available, so a readiness blip of a set with nothing to roll out turns
// Progressing False, and Pause or Rollback act on it.

func probeSteps(t *testing.T, name string) *Timeline {
	t.Helper()
	return replayFile(t, filepath.Join("testdata", "probe-deadline", name+".yaml"), "")
}

// Pause past a "deadline" no rollout ever had: the Failed pod is never replaced.
func TestProbePauseHoldsAFailedPodOfACompletedSet(t *testing.T) {
	tl := probeSteps(t, "pause-completed-set-failed-pod")
	deleted := false
	for _, s := range tl.Steps {
		for _, a := range s.Actions {
			if a.Verb == "delete" && a.Kind == "Pod" && a.Name == "web-2" {
				deleted = true
			}
		}
	}
	for _, s := range tl.Steps {
		if strings.Contains(s.Revisions, "ProgressDeadlineExceeded") && strings.Contains(s.Revisions, "revisions A->A") {
			t.Errorf("step %d (+%s): Progressing False on a set with nothing to roll out: %s", s.Index, s.Offset, s.Revisions)
			break
		}
	}
	if !deleted || tl.Outcome.Result != "complete" {
		t.Errorf("web-2 failed and was never replaced (Pause): outcome %s: %s", tl.Outcome.Result, tl.Outcome.Summary)
	}
}

// Rollback of a healthy canary: the partitioned rollout completed, and a later readiness loss of a pod
// (the canary itself, or an old pod below the partition) puts the template back to revision A.
func TestProbeRollbackOfACompletedCanary(t *testing.T) {
	for _, name := range []string{"rollback-completed-canary-loses-readiness", "rollback-partitioned-old-pod-unready"} {
		t.Run(name, func(t *testing.T) {
			tl := probeSteps(t, name)
			for _, s := range tl.Steps {
				for _, a := range s.Actions {
					if a.Verb == "patch" && a.Kind == "StatefulSet" {
						t.Errorf("step %d (+%s): the set's template rolled back (%s) after its partitioned rollout had completed (RolloutComplete 5 minutes before)", s.Index, s.Offset, s.Revisions)
					}
				}
			}
			t.Logf("outcome: %s: %s", tl.Outcome.Result, tl.Outcome.Summary)
		})
	}
}
