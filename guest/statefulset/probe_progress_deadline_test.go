package statefulset

import (
	"encoding/json"
	"testing"
	"time"
)

// Probes of extension progress-deadline (branch probe-deadline). Each test states the claim it holds the
// module to; a failure is a finding.

// withStatusConditions sets the snapshot's status conditions.
func withStatusConditions(t *testing.T, snapshot []byte, conds ...map[string]any) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(snapshot, &v); err != nil {
		t.Fatal(err)
	}
	cs := make([]any, len(conds))
	for i, c := range conds {
		cs[i] = c
	}
	v["statefulSet"].(map[string]any)["status"].(map[string]any)["conditions"] = cs
	out, _ := json.Marshal(v)
	return out
}

// setPod edits pod i of the snapshot: its Ready condition (status, since when) and, when phase is not "",
// its phase.
func setPod(t *testing.T, snapshot []byte, i int, ready string, since time.Time, phase string) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(snapshot, &v); err != nil {
		t.Fatal(err)
	}
	p := v["pods"].([]any)[i].(map[string]any)
	st := p["status"].(map[string]any)
	for _, c := range st["conditions"].([]any) {
		c := c.(map[string]any)
		if c["type"] == "Ready" || c["type"] == "ContainersReady" {
			c["status"], c["lastTransitionTime"] = ready, since.Format(time.RFC3339)
		}
	}
	if phase != "" {
		st["phase"] = phase
	}
	out, _ := json.Marshal(v)
	return out
}

// docs/extensions.md: the extended module without the annotation plans as upstream does. A set whose
// status carries conditions named Available/Progressing that some other writer put there (a tool that
// mimics Deployment, an earlier controller) is a set that never opted in: its plan must be upstream's
// (here: nothing to write). The extended module instead rewrites the status to drop them.
func TestProbeForeignConditionsWithoutTheAnnotation(t *testing.T) {
	in := readCase(t, "status", "ordered-consistent-rollingupdate")
	base := Reconcile(in)
	foreign := withStatusConditions(t, in,
		map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "set by another tool", "lastTransitionTime": "2026-11-22T10:00:00Z"},
		map[string]any{"type": "Progressing", "status": "True", "reason": "NewRevisionProgressing", "message": "set by another tool", "lastTransitionTime": "2026-11-22T10:00:00Z"})
	got := Reconcile(foreign)
	if d := diffJSON(base, got); d != "" {
		t.Errorf("a set without ordinal.dev/progress-deadline-seconds whose status carries another writer's Available/Progressing: plan differs from upstream's (nothing to write):\n%s", d)
	}
}

// README: the extension never touches "other conditions". An Available condition of a reason the
// extension never writes (someone else's) is overwritten as soon as the set opts in, though removal
// (annotation gone) recognises the extension's own conditions by their reason and keeps this one.
func TestProbeForeignAvailableClobbered(t *testing.T) {
	in := annotate(t, readCase(t, "status", "ordered-consistent-rollingupdate"), annotationProgressDeadline, "600")
	in = withStatusConditions(t, in,
		map[string]any{"type": "Available", "status": "False", "reason": "ExternalHealthCheck", "message": "backup running", "lastTransitionTime": "2026-11-22T10:00:00Z"})
	if !extendedOnly(t, in) {
		return
	}
	st := decodeDeadlinePlan(t, Reconcile(in)).status(t)
	if st == nil {
		t.Fatal("no status write")
	}
	if c := conditionOf(t, st, conditionAvailable); c == nil || c.Reason != "ExternalHealthCheck" {
		t.Errorf("foreign Available condition replaced by %+v", c)
	}
}

// Deployment's DeploymentTimedOut never times out a rollout whose Progressing condition says it completed
// (NewReplicaSetAvailable): a finished rollout that later loses a pod's readiness stays Progressing True.
// The module instead starts a new deadline for a set with nothing to roll out (currentRevision ==
// updateRevision, every pod updated), turns Progressing False ProgressDeadlineExceeded, and with
// on-progress-deadline: Pause stops replacing even a Failed pod: the set stops healing itself.
func TestProbeCompletedSetLosesReadinessPause(t *testing.T) {
	in := readCase(t, "status", "ordered-consistent-rollingupdate")
	in = annotate(t, in, annotationProgressDeadline, "30")
	in = annotate(t, in, annotationOnProgressDeadline, onDeadlinePause)
	if !extendedOnly(t, in) {
		return
	}
	// the status as the extension left it once the rollout completed
	st0 := decodeDeadlinePlan(t, Reconcile(in)).status(t)
	if pr := conditionOf(t, st0, conditionProgressing); pr == nil || pr.Reason != reasonRolloutComplete {
		t.Fatalf("the completed case: Progressing %+v, want RolloutComplete", pr)
	}
	var v map[string]any
	_ = json.Unmarshal(in, &v)
	now, _ := time.Parse(time.RFC3339, v["now"].(string))

	// web-3 loses readiness (no template change, no scale)
	unready := setPod(t, nextSync(t, in, st0, 0), 3, "False", now, "")
	p1 := decodeDeadlinePlan(t, Reconcile(unready))
	st1 := p1.status(t)
	if st1 == nil {
		st1 = st0
	}
	p2 := decodeDeadlinePlan(t, Reconcile(setPod(t, nextSync(t, in, st1, 31*time.Second), 3, "False", now, "")))
	st2 := p2.status(t)
	if st2 == nil {
		st2 = st1
	}
	if pr := conditionOf(t, st2, conditionProgressing); pr != nil && pr.Status == "False" {
		t.Errorf("a completed set (current == update revision) with one pod not Ready for 31 s: Progressing %s %s (%q); Deployment keeps a completed rollout's condition", pr.Status, pr.Reason, pr.Message)
	}
	// web-3 then fails: upstream deletes a Failed pod to recreate it
	failed := setPod(t, nextSync(t, in, st2, 32*time.Second), 3, "False", now, "Failed")
	w := decodeDeadlinePlan(t, Reconcile(failed)).podWrites()
	if len(w) == 0 {
		t.Errorf("a Failed pod of a set with nothing to roll out is not replaced (Pause holds it): pod writes %v, want delete Pod web-3", w)
	}
}

// Kubernetes' API conventions (and Deployment's SetDeploymentCondition): lastTransitionTime is when the
// condition's status last changed. Available False carries the pod counts in its message and setCondition
// counts a message change as a transition, so a set that stays unavailable has its Available
// lastTransitionTime restamped at every change of count ("unavailable for how long" is lost).
func TestProbeAvailableTransitionTimeWhileStayingFalse(t *testing.T) {
	in := annotate(t, readCase(t, "status", "ordered-consistent-rollingupdate"), annotationProgressDeadline, "600")
	if !extendedOnly(t, in) {
		return
	}
	var v map[string]any
	_ = json.Unmarshal(in, &v)
	now, _ := time.Parse(time.RFC3339, v["now"].(string))
	st0 := decodeDeadlinePlan(t, Reconcile(in)).status(t)
	// web-2 and web-3 not Ready: 2 of 4 available, 3 needed
	s1 := setPod(t, setPod(t, nextSync(t, in, st0, 0), 2, "False", now, ""), 3, "False", now, "")
	st1 := decodeDeadlinePlan(t, Reconcile(s1)).status(t)
	a1 := conditionOf(t, st1, conditionAvailable)
	if a1 == nil || a1.Status != "False" {
		t.Fatalf("Available %+v, want False", a1)
	}
	// 10 s later web-1 too: still False
	s2 := setPod(t, setPod(t, setPod(t, nextSync(t, in, st1, 10*time.Second), 1, "False", now, ""), 2, "False", now, ""), 3, "False", now, "")
	st2 := decodeDeadlinePlan(t, Reconcile(s2)).status(t)
	if st2 == nil {
		t.Fatal("no status write")
	}
	a2 := conditionOf(t, st2, conditionAvailable)
	if a2 == nil || a2.Status != "False" || a2.LastTransitionTime != a1.LastTransitionTime {
		t.Errorf("Available stayed False but its lastTransitionTime moved from %s to %s (%q)", a1.LastTransitionTime, a2.LastTransitionTime, a2.Message)
	}
}
