package statefulset

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/abi"
)

// The conditions hosts read to tell a rollout that will not end by itself (abi) are the module's.
func TestProgressDeadlineNamesAreABIs(t *testing.T) {
	if conditionProgressing != abi.ConditionProgressing || conditionRolledBack != abi.ConditionRolledBack ||
		reasonProgressDeadlineExceeded != abi.ReasonProgressDeadlineExceeded ||
		!abi.ProgressDeadlineExceeded(conditionProgressing, "False", reasonProgressDeadlineExceeded) {
		t.Error("progress-deadline's condition names differ from abi's")
	}
}

// deadlinePlan is what these tests read of a plan.
type deadlinePlan struct {
	Actions []struct {
		Verb, Kind, Name string
		Object           json.RawMessage
	}
	Events  []struct{ Type, Reason, Message string }
	Requeue float64 `json:"requeueAfterSeconds"`
	Error   *struct{ Code, Message string }
}

type testCondition struct {
	Type, Status, Reason, Message string
	LastTransitionTime            string `json:"lastTransitionTime"`
}

// The reason hosts count (abi) is the module's.
func TestProgressDeadlineEventReason(t *testing.T) {
	if reasonProgressDeadlineExceeded != abi.EventProgressDeadlineExceeded {
		t.Errorf("reason %q, abi's %q", reasonProgressDeadlineExceeded, abi.EventProgressDeadlineExceeded)
	}
}

func decodeDeadlinePlan(t *testing.T, b []byte) deadlinePlan {
	t.Helper()
	var p deadlinePlan
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.Error != nil {
		t.Fatalf("plan error %s: %s", p.Error.Code, p.Error.Message)
	}
	return p
}

// status is the plan's status write (nil: none).
func (p deadlinePlan) status(t *testing.T) map[string]any {
	t.Helper()
	for _, a := range p.Actions {
		if a.Verb == verbUpdateStatus {
			var o struct{ Status map[string]any }
			if err := json.Unmarshal(a.Object, &o); err != nil {
				t.Fatal(err)
			}
			return o.Status
		}
	}
	return nil
}

func (p deadlinePlan) podWrites() []string {
	var out []string
	for _, a := range p.Actions {
		if a.Kind == kindPod || a.Kind == kindPVC {
			out = append(out, a.Verb+" "+a.Kind+" "+a.Name)
		}
	}
	return out
}

func (p deadlinePlan) hasEvent(typeReason string) bool {
	for _, e := range p.Events {
		if e.Type+" "+e.Reason == typeReason {
			return true
		}
	}
	return false
}

func conditionOf(t *testing.T, status map[string]any, typ string) *testCondition {
	t.Helper()
	b, _ := json.Marshal(status["conditions"])
	var cs []testCondition
	_ = json.Unmarshal(b, &cs)
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

// nextSync is the snapshot of the sync after one whose plan wrote status: the set's status replaced by
// it, now moved on by d (the pods as they were: nothing happened in between).
func nextSync(t *testing.T, snapshot []byte, status map[string]any, d time.Duration) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(snapshot, &v); err != nil {
		t.Fatal(err)
	}
	if status != nil {
		v["statefulSet"].(map[string]any)["status"] = status
	}
	now, err := time.Parse(time.RFC3339, v["now"].(string))
	if err != nil {
		t.Fatal(err)
	}
	v["now"] = now.Add(d).Format(time.RFC3339)
	out, _ := json.Marshal(v)
	return out
}

// Extension progress-deadline over every conformance case: the faithful module ignores the annotation;
// the extended module writes the same pods, claims and revisions as upstream (only the status and the
// requeue may differ), and every status it writes carries Available, and Progressing but for Recreate.
func TestProgressDeadlineKeepsUpstreamsWrites(t *testing.T) {
	withConditions := 0
	for _, c := range conformanceSnapshots(t) {
		in := annotate(t, c.in, annotationProgressDeadline, "600")
		if in == nil {
			continue
		}
		got, want := Reconcile(in), Reconcile(c.in)
		if !extendedBuild {
			if d := diffJSON(withoutKey(t, want, annotationProgressDeadline), withoutKey(t, got, annotationProgressDeadline)); d != "" {
				t.Errorf("%s: the faithful module's plan changed:\n%s", c.name, d)
			}
			continue
		}
		var g, w planActions
		if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
			t.Fatalf("%s: a plan is not JSON", c.name)
		}
		var gw, ww []string
		for _, a := range g.Actions {
			if a.Verb != verbUpdateStatus {
				gw = append(gw, a.Verb+" "+a.Kind)
			}
		}
		for _, a := range w.Actions {
			if a.Verb != verbUpdateStatus {
				ww = append(ww, a.Verb+" "+a.Kind)
			}
		}
		if strings.Join(gw, ",") != strings.Join(ww, ",") || (g.Error == nil) != (w.Error == nil) {
			t.Errorf("%s: writes %v (error %v), upstream's %v (error %v)", c.name, gw, g.Error, ww, w.Error)
			continue
		}
		p := decodeDeadlinePlanLoose(got)
		st := p.status(t)
		if st == nil || strings.Contains(string(c.in), `"deletionTimestamp"`) && deleting(t, c.in) {
			continue // no status, or a set being deleted: its conditions are left as they are
		}
		withConditions++
		if conditionOf(t, st, conditionAvailable) == nil {
			t.Errorf("%s: status without Available: %v", c.name, st["conditions"])
		}
		if pr := conditionOf(t, st, conditionProgressing); pr == nil || pr.Reason == reasonRecreateInProgress {
			if !strings.Contains(string(in), `"Recreate"`) {
				t.Errorf("%s: status without the extension's Progressing: %v", c.name, st["conditions"])
			}
		}
	}
	if extendedBuild && withConditions < 50 {
		t.Errorf("only %d cases wrote a status: the test proves little", withConditions)
	}
}

func deleting(t *testing.T, snapshot []byte) bool {
	t.Helper()
	var v struct {
		StatefulSet struct {
			Metadata struct {
				DeletionTimestamp string `json:"deletionTimestamp"`
			} `json:"metadata"`
		} `json:"statefulSet"`
	}
	_ = json.Unmarshal(snapshot, &v)
	return v.StatefulSet.Metadata.DeletionTimestamp != ""
}

// extendedOnly reports whether the extended module's assertions apply (go test -tags ordinal_extended, which
// make test runs besides the plain build). In the faithful build it checks instead that the module ignores
// the extension's annotations on in: its plan is the plan for in without them.
func extendedOnly(t *testing.T, in []byte) bool {
	t.Helper()
	if extendedBuild {
		return true
	}
	plain := withoutKey(t, withoutKey(t, in, annotationProgressDeadline), annotationOnProgressDeadline)
	strip := func(b []byte) []byte {
		return withoutKey(t, withoutKey(t, b, annotationProgressDeadline), annotationOnProgressDeadline)
	}
	if d := diffJSON(strip(Reconcile(plain)), strip(Reconcile(in))); d != "" {
		t.Errorf("the faithful module's plan changed with the extension's annotations:\n%s", d)
	}
	return false
}

// decodeDeadlinePlanLoose decodes a plan that may carry a sync error (a conformance case's).
func decodeDeadlinePlanLoose(b []byte) deadlinePlan {
	var p deadlinePlan
	_ = json.Unmarshal(b, &p)
	return p
}

// A rolling update stuck on a pod that never becomes Ready: Progressing True from the first sync, a sync
// asked for one second past the deadline, nothing before it, ProgressDeadlineExceeded (with a warning) at
// it; progress (a pod more updated than the status read) restarts the measure.
func TestProgressDeadlineExceeded(t *testing.T) {
	stuck := annotate(t, stuckSnapshot(t, ""), annotationProgressDeadline, "30")
	if !extendedOnly(t, stuck) {
		return
	}
	p1 := decodeDeadlinePlan(t, Reconcile(stuck))
	st1 := p1.status(t)
	pr := conditionOf(t, st1, conditionProgressing)
	if pr == nil || pr.Status != "True" || pr.Reason != reasonNewRevisionProgressing || !strings.Contains(pr.Message, st1["updateRevision"].(string)) {
		t.Fatalf("first sync: Progressing %+v, want True NewRevisionProgressing naming the update revision", pr)
	}
	if av := conditionOf(t, st1, conditionAvailable); av == nil || av.Status != "True" {
		t.Errorf("first sync: Available %+v, want True (4 of 5 available, maxUnavailable 1)", av)
	}
	if math.Abs(p1.Requeue-31) > 0.5 {
		t.Errorf("first sync: requeueAfterSeconds %v, want 31 (one second past the deadline)", p1.Requeue)
	}

	p2 := decodeDeadlinePlan(t, Reconcile(nextSync(t, stuck, st1, 20*time.Second)))
	if p2.status(t) != nil || p2.hasEvent("Warning "+reasonProgressDeadlineExceeded) {
		t.Errorf("20s in: status %v, events %+v; want nothing new", p2.status(t), p2.Events)
	}
	if math.Abs(p2.Requeue-11) > 0.5 {
		t.Errorf("20s in: requeueAfterSeconds %v, want 11", p2.Requeue)
	}

	p3 := decodeDeadlinePlan(t, Reconcile(nextSync(t, stuck, st1, 31*time.Second)))
	st3 := p3.status(t)
	pr = conditionOf(t, st3, conditionProgressing)
	if pr == nil || pr.Status != "False" || pr.Reason != reasonProgressDeadlineExceeded {
		t.Fatalf("31s in: Progressing %+v, want False ProgressDeadlineExceeded", pr)
	}
	if !p3.hasEvent("Warning " + reasonProgressDeadlineExceeded) {
		t.Errorf("31s in: events %+v, want a ProgressDeadlineExceeded warning", p3.Events)
	}
	p4 := decodeDeadlinePlan(t, Reconcile(nextSync(t, stuck, st3, time.Minute)))
	if p4.status(t) != nil || p4.hasEvent("Warning "+reasonProgressDeadlineExceeded) || p4.Requeue != 0 {
		t.Errorf("after the deadline: status %v, events %+v, requeue %v; want it to stay as it is", p4.status(t), p4.Events, p4.Requeue)
	}

	// progress: the status read shows one pod fewer ready than the pods do
	behind := map[string]any{}
	for k, v := range st3 {
		behind[k] = v
	}
	ready, _ := st3["readyReplicas"].(float64)
	if ready < 1 {
		t.Fatalf("the stuck case has %v pods ready, want some", ready)
	}
	behind["readyReplicas"] = ready - 1
	p5 := decodeDeadlinePlan(t, Reconcile(nextSync(t, stuck, behind, 2*time.Minute)))
	pr = conditionOf(t, p5.status(t), conditionProgressing)
	if pr == nil || pr.Status != "True" || pr.Reason != reasonNewRevisionProgressing {
		t.Errorf("after progress: Progressing %+v, want True NewRevisionProgressing again", pr)
	}
}

// on-progress-deadline: Pause holds every pod write of a set past its deadline, for that update revision
// only; without it the set is rolled as upstream rolls it.
func TestProgressDeadlinePause(t *testing.T) {
	in := readCase(t, "rolling-update", "ordered-p0-mu-unset")
	in = annotate(t, in, annotationProgressDeadline, "30")
	if !extendedOnly(t, in) {
		return
	}
	first := decodeDeadlinePlan(t, Reconcile(in))
	if len(first.podWrites()) == 0 {
		t.Fatal("the case's rolling update writes no pod: it proves nothing")
	}
	st := first.status(t)
	rev := st["updateRevision"].(string)
	exceeded := map[string]any{}
	for k, v := range st {
		exceeded[k] = v
	}
	exceeded["conditions"] = []any{map[string]any{"type": conditionProgressing, "status": "False", "reason": reasonProgressDeadlineExceeded,
		"message": `StatefulSet "web" has timed out progressing to revision ` + rev + ".", "lastTransitionTime": "2026-11-22T10:00:00Z"}}
	past := nextSync(t, in, exceeded, 0)

	if w := decodeDeadlinePlan(t, Reconcile(past)).podWrites(); len(w) == 0 {
		t.Errorf("past the deadline without Pause: no pod written, want upstream's %v", first.podWrites())
	}
	paused := annotate(t, past, annotationOnProgressDeadline, onDeadlinePause)
	if w := decodeDeadlinePlan(t, Reconcile(paused)).podWrites(); len(w) != 0 {
		t.Errorf("past the deadline with Pause: pod writes %v, want none", w)
	}
	// another update revision (a new template) is a new rollout: Pause holds nothing
	exceeded["conditions"].([]any)[0].(map[string]any)["message"] = `StatefulSet "web" has timed out progressing to revision web-other.`
	other := annotate(t, nextSync(t, in, exceeded, 0), annotationOnProgressDeadline, onDeadlinePause)
	if w := decodeDeadlinePlan(t, Reconcile(other)).podWrites(); len(w) == 0 {
		t.Errorf("Pause past another revision's deadline: no pod written, want upstream's")
	}
	// a value it cannot read is warned of and holds nothing
	bad := decodeDeadlinePlan(t, Reconcile(annotate(t, past, annotationOnProgressDeadline, "pause")))
	if len(bad.podWrites()) == 0 || !bad.hasEvent("Warning InvalidAnnotation") {
		t.Errorf(`on-progress-deadline "pause": pod writes %v, events %+v; want upstream's writes and a warning`, bad.podWrites(), bad.Events)
	}
}

// A rollout completed in this sync: Progressing True RolloutComplete, Available True. A deadline it cannot
// read is a warning and no condition.
func TestProgressDeadlineCompleteAndInvalid(t *testing.T) {
	in := readCase(t, "status", "ordered-rolling-update-completion")
	if !extendedOnly(t, annotate(t, in, annotationProgressDeadline, "30")) {
		return
	}
	st := decodeDeadlinePlan(t, Reconcile(annotate(t, in, annotationProgressDeadline, "30"))).status(t)
	if st == nil || st["currentRevision"] != st["updateRevision"] {
		t.Fatalf("the case no longer completes its rollout: status %v", st)
	}
	if pr := conditionOf(t, st, conditionProgressing); pr == nil || pr.Status != "True" || pr.Reason != reasonRolloutComplete {
		t.Errorf("Progressing %+v, want True RolloutComplete", pr)
	}
	if av := conditionOf(t, st, conditionAvailable); av == nil || av.Status != "True" || av.Reason != reasonMinimumReplicasAvailable {
		t.Errorf("Available %+v, want True MinimumReplicasAvailable", av)
	}
	for _, bad := range []string{"0", "-5", "10m", "1e3", ""} {
		q := decodeDeadlinePlan(t, Reconcile(annotate(t, in, annotationProgressDeadline, bad)))
		if s := q.status(t); s != nil && (conditionOf(t, s, conditionProgressing) != nil || conditionOf(t, s, conditionAvailable) != nil) {
			t.Errorf("deadline %q: conditions %v, want none", bad, s["conditions"])
		}
		if !q.hasEvent("Warning InvalidAnnotation") {
			t.Errorf("deadline %q: events %+v, want an InvalidAnnotation warning", bad, q.Events)
		}
	}
}

// Removing the annotation removes the extension's conditions and keeps any other.
func TestProgressDeadlineRemoved(t *testing.T) {
	in := readCase(t, "status", "ordered-rolling-update-completion")
	if !extendedOnly(t, annotate(t, in, annotationProgressDeadline, "30")) {
		return
	}
	st := decodeDeadlinePlan(t, Reconcile(annotate(t, in, annotationProgressDeadline, "30"))).status(t)
	conds := st["conditions"].([]any)
	st["conditions"] = append(conds, map[string]any{"type": "PolicyHold", "status": "False", "reason": "NoHold", "lastTransitionTime": "2026-11-22T10:00:00Z"})
	after := decodeDeadlinePlan(t, Reconcile(nextSync(t, in, st, time.Second))).status(t)
	if after == nil {
		t.Fatal("no status written once the annotation is gone")
	}
	if conditionOf(t, after, conditionProgressing) != nil || conditionOf(t, after, conditionAvailable) != nil || conditionOf(t, after, "PolicyHold") == nil {
		t.Errorf("conditions %v, want only PolicyHold", after["conditions"])
	}
}

func readCase(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(conformanceDir, dir, name+".snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// on-progress-deadline: Rollback. Past the deadline the sync writes the status (with a RolledBack condition)
// and then a JSON patch of the set putting back its current revision's template, guarded by the generation
// it saw. The sync after that rollback (the old template back, its revision the update revision again)
// replaces the pod left at the broken revision once it has not been Ready for the deadline, where upstream
// waits for it forever (kubernetes/kubernetes#67250); without Rollback it waits as upstream does.
func TestProgressDeadlineRollback(t *testing.T) {
	in := annotate(t, readCase(t, "rolling-update", "ordered-p0-mu-unset"), annotationProgressDeadline, "30")
	in = annotate(t, in, annotationOnProgressDeadline, onDeadlineRollback)
	if !extendedOnly(t, in) {
		return
	}
	var snap map[string]any
	if err := json.Unmarshal(in, &snap); err != nil {
		t.Fatal(err)
	}
	good := snap["revisions"].([]any)[0].(map[string]any)
	goodTemplate := map[string]any{}
	for k, v := range good["data"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any) {
		if k != "$patch" {
			goodTemplate[k] = v
		}
	}

	first := decodeDeadlinePlan(t, Reconcile(in))
	st := first.status(t)
	bad := st["updateRevision"].(string)
	var badRevision json.RawMessage
	for _, a := range first.Actions {
		if a.Verb == verbCreate && a.Kind == kindRevision {
			badRevision = a.Object
		}
	}
	if badRevision == nil || bad == good["metadata"].(map[string]any)["name"] {
		t.Fatalf("the case no longer starts a rollout to a new revision: %+v", first.Actions)
	}
	exceeded := map[string]any{}
	for k, v := range st {
		exceeded[k] = v
	}
	exceeded["conditions"] = []any{map[string]any{"type": conditionProgressing, "status": "False", "reason": reasonProgressDeadlineExceeded,
		"message": `StatefulSet "web" has timed out progressing to revision ` + bad + ".", "lastTransitionTime": "2026-11-22T10:00:00Z"}}
	pastRaw := Reconcile(nextSync(t, in, exceeded, 0))
	past := decodeDeadlinePlan(t, pastRaw)
	n := len(past.Actions)
	if n < 2 || past.Actions[n-2].Verb != verbUpdateStatus || past.Actions[n-1].Verb != verbPatch || past.Actions[n-1].Kind != kindStatefulSet {
		t.Fatalf("past the deadline: actions %+v, want the status then a patch of the set", past.Actions)
	}
	var raw struct {
		Actions []struct {
			Patch     []map[string]any
			PatchType string
		}
	}
	if err := json.Unmarshal(pastRaw, &raw); err != nil {
		t.Fatal(err)
	}
	patch := raw.Actions[n-1]
	want := []map[string]any{
		{"op": "test", "path": "/metadata/generation", "value": float64(2)},
		{"op": "replace", "path": "/spec/template", "value": goodTemplate},
	}
	if patch.PatchType != patchTypeJSONPatch || diffJSON(mustJSON(t, want), mustJSON(t, patch.Patch)) != "" {
		t.Errorf("rollback patch %s %s, want %s", patch.PatchType, mustJSON(t, patch.Patch), mustJSON(t, want))
	}
	if rb := conditionOf(t, past.status(t), conditionRolledBack); rb == nil || rb.Status != "True" || !strings.Contains(rb.Message, "to revision "+good["metadata"].(map[string]any)["name"].(string)+" from revision "+bad) {
		t.Errorf("RolledBack condition %+v", rb)
	}
	if !past.hasEvent("Normal " + eventRollingBack) {
		t.Errorf("events %+v, want RollingBack", past.Events)
	}

	// The sync after the rollback: the status the rollback's sync wrote (RolledBack), the old template back
	// (generation 3), web-4 at the broken revision and not Ready for 40 s.
	var v map[string]any
	_ = json.Unmarshal(nextSync(t, in, past.status(t), 40*time.Second), &v)
	set := v["statefulSet"].(map[string]any)
	set["metadata"].(map[string]any)["generation"] = float64(3)
	set["spec"].(map[string]any)["template"] = goodTemplate
	var rev any
	_ = json.Unmarshal(badRevision, &rev)
	v["revisions"] = append(v["revisions"].([]any), rev)
	web4 := v["pods"].([]any)[4].(map[string]any)
	web4["metadata"].(map[string]any)["labels"].(map[string]any)["controller-revision-hash"] = bad
	for _, c := range web4["status"].(map[string]any)["conditions"].([]any) {
		c := c.(map[string]any)
		if c["type"] == "Ready" || c["type"] == "ContainersReady" {
			c["status"], c["lastTransitionTime"] = "False", "2026-11-22T10:01:20Z" // 50 s before now+40s
		}
	}
	after, _ := json.Marshal(v)
	w := decodeDeadlinePlan(t, Reconcile(after)).podWrites()
	if len(w) != 1 || w[0] != "delete Pod web-4" {
		t.Errorf("after the rollback: pod writes %v, want web-4 (broken revision, not Ready past the deadline) deleted", w)
	}
	upstream := decodeDeadlinePlan(t, Reconcile(withoutKey(t, after, annotationOnProgressDeadline))).podWrites()
	if len(upstream) != 0 {
		t.Errorf("after a rollback by hand, without Rollback: pod writes %v, want none (upstream waits for web-4)", upstream)
	}
	// Without the RolledBack condition (no rollback of this extension's), a pod not Ready is the rollout's
	// business: not replaced
	var nv map[string]any
	_ = json.Unmarshal(after, &nv)
	nst := nv["statefulSet"].(map[string]any)["status"].(map[string]any)
	var keep []any
	for _, c := range nst["conditions"].([]any) {
		if c.(map[string]any)["type"] != conditionRolledBack {
			keep = append(keep, c)
		}
	}
	nst["conditions"] = keep
	noRollback, _ := json.Marshal(nv)
	if w := decodeDeadlinePlan(t, Reconcile(noRollback)).podWrites(); len(w) != 0 {
		t.Errorf("Rollback configured, no rollback made: pod writes %v, want none", w)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A partition above every ordinal (kubectl ordinal pause's on apps/v1) holds the rollout as a pause does: no
// deadline is measured, so on-progress-deadline Rollback never rewrites the template of a set its user paused
// mid-rollout (it did, and replaced the broken pod the user had paused to look at).
func TestProgressDeadlineNotMeasuredWhileAPartitionHoldsEveryPod(t *testing.T) {
	stuck := annotate(t, stuckSnapshot(t, ""), annotationProgressDeadline, "30")
	stuck = annotate(t, stuck, annotationOnProgressDeadline, onDeadlineRollback)
	var v map[string]any
	if err := json.Unmarshal(stuck, &v); err != nil {
		t.Fatal(err)
	}
	spec := v["statefulSet"].(map[string]any)["spec"].(map[string]any)
	spec["updateStrategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": float64(math.MaxInt32)}}
	held, _ := json.Marshal(v)
	if !extendedOnly(t, held) {
		return
	}
	p1 := decodeDeadlinePlan(t, Reconcile(held))
	st1 := p1.status(t)
	if pr := conditionOf(t, st1, conditionProgressing); pr == nil || pr.Status != "Unknown" || pr.Reason != reasonRolloutPaused ||
		!strings.Contains(pr.Message, "held by its partition 2147483647") {
		t.Fatalf("Progressing %+v, want Unknown RolloutPaused naming the partition", pr)
	}
	p2 := decodeDeadlinePlan(t, Reconcile(nextSync(t, held, st1, time.Hour)))
	if p2.hasEvent("Warning"+" "+reasonProgressDeadlineExceeded) || p2.hasEvent("Normal "+eventRollingBack) {
		t.Errorf("an hour later: events %+v, want no deadline passed and no rollback", p2.Events)
	}
	for _, a := range p2.Actions {
		if a.Verb == verbPatch && a.Kind == kindStatefulSet {
			t.Errorf("an hour later: the set is patched (%s), want its template left as the user holds it", a.Object)
		}
	}
	// The partition lowered again (kubectl ordinal resume): a rollout, measured from then.
	spec["updateStrategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": float64(0)}}
	resumed, _ := json.Marshal(v)
	p3 := decodeDeadlinePlan(t, Reconcile(nextSync(t, resumed, st1, time.Hour)))
	if pr := conditionOf(t, p3.status(t), conditionProgressing); pr == nil || pr.Reason != reasonNewRevisionProgressing {
		t.Errorf("resumed: Progressing %+v, want NewRevisionProgressing", pr)
	}
}
