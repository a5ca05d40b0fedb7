package rollout_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/rollout"
)

func setAt(rv string, annotations map[string]string, strategy appsv1.StatefulSetUpdateStrategy) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: rv, Annotations: annotations},
		Spec: appsv1.StatefulSetSpec{UpdateStrategy: strategy}}
}

func patchOf(t *testing.T, p rollout.Patch) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(p.Data, &m); err != nil {
		t.Fatalf("patch %s: %v", p.Data, err)
	}
	if rv, _ := m["metadata"].(map[string]any)["resourceVersion"].(string); rv == "" {
		t.Errorf("patch %s carries no resourceVersion: an edit in between would be overwritten", p.Data)
	}
	return m
}

func TestRestartSetsKubectlsAnnotation(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	p := rollout.Restart(setAt("7", nil, appsv1.StatefulSetUpdateStrategy{}), now)
	m := patchOf(t, p)
	got := m["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["annotations"].(map[string]any)[rollout.RestartedAtAnnotation]
	if got != "2026-11-26T10:00:00Z" || p.JSONPatch || p.Done != "restarted" {
		t.Errorf("restart patch %s (%q)", p.Data, p.Done)
	}
}

// apps/v1: pause raises the partition above every ordinal and keeps the old one; resume puts it back,
// or keeps a partition someone set meanwhile. ordinal.dev: the pause extension's annotation.
func TestPauseAndResume(t *testing.T) {
	three := int32(3)
	ru := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: &three}}
	p, err := rollout.Pause(setAt("7", nil, ru), "statefulsets.apps", false)
	if err != nil {
		t.Fatal(err)
	}
	m := patchOf(t, p)
	if m["metadata"].(map[string]any)["annotations"].(map[string]any)[rollout.PausedPartitionAnnotation] != "3" ||
		m["spec"].(map[string]any)["updateStrategy"].(map[string]any)["rollingUpdate"].(map[string]any)["partition"] != float64(2147483647) {
		t.Errorf("pause patch %s", p.Data)
	}
	if _, err := rollout.Pause(setAt("7", map[string]string{rollout.PausedPartitionAnnotation: "3"}, ru), "statefulsets.apps", false); err == nil ||
		err.Error() != `statefulsets.apps "web" is already paused` {
		t.Errorf("pausing a paused set: %v", err)
	}
	if _, err := rollout.Pause(setAt("7", nil, appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}), "statefulsets.apps", false); err == nil ||
		!strings.Contains(err.Error(), "OnDelete") {
		t.Errorf("pausing an OnDelete set: %v", err)
	}

	max := int32(2147483647)
	paused := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: &max}}
	p, err = rollout.Resume(setAt("8", map[string]string{rollout.PausedPartitionAnnotation: "3"}, paused), "statefulsets.apps", false)
	if err != nil {
		t.Fatal(err)
	}
	m = patchOf(t, p)
	if ann := m["metadata"].(map[string]any)["annotations"].(map[string]any); ann[rollout.PausedPartitionAnnotation] != nil ||
		m["spec"].(map[string]any)["updateStrategy"].(map[string]any)["rollingUpdate"].(map[string]any)["partition"] != float64(3) {
		t.Errorf("resume patch %s", p.Data)
	}
	// someone set partition 1 while paused: kept
	p, err = rollout.Resume(setAt("8", map[string]string{rollout.PausedPartitionAnnotation: "3"}, ru), "statefulsets.apps", false)
	if m = patchOf(t, p); err != nil || m["spec"] != nil || p.Note == "" {
		t.Errorf("resume after another partition: %s %q %v", p.Data, p.Note, err)
	}
	if _, err := rollout.Resume(setAt("8", nil, ru), "statefulsets.apps", false); err == nil || !strings.Contains(err.Error(), "is not paused") {
		t.Errorf("resuming a set not paused: %v", err)
	}

	p, err = rollout.Pause(setAt("9", nil, ru), "statefulsets.ordinal.dev", true)
	if m = patchOf(t, p); err != nil || m["metadata"].(map[string]any)["annotations"].(map[string]any)[abi.AnnotationPaused] != "true" || m["spec"] != nil || p.Note == "" {
		t.Errorf("pause of an ordinal.dev set: %s %q %v", p.Data, p.Note, err)
	}
	// hostile probe: "false" is not paused; a saved partition that is not one pause wrote is refused, saying
	// how to fix it; a restart of a paused set says it waits for the resume
	for _, off := range []string{"false", ""} { // "": no annotation, as the module reads it (abi.EnumAnnotation)
		if _, err := rollout.Resume(setAt("9", map[string]string{abi.AnnotationPaused: off}, ru), "statefulsets.ordinal.dev", true); err == nil {
			t.Errorf("resuming an ordinal.dev set whose pause annotation is %q succeeded", off)
		}
	}
	for _, bad := range []string{"+3", "-1", "abc", "99999999999", " 3", ""} {
		if _, err := rollout.Resume(setAt("8", map[string]string{rollout.PausedPartitionAnnotation: bad}, paused), "statefulsets.apps", false); err == nil ||
			!strings.Contains(err.Error(), "kubectl annotate statefulset web ordinal.dev/paused-partition-") {
			t.Errorf("resume with %s=%q: %v", rollout.PausedPartitionAnnotation, bad, err)
		}
	}
	if p := rollout.Restart(setAt("8", map[string]string{rollout.PausedPartitionAnnotation: "3"}, paused), time.Now()); !strings.Contains(p.Note, "paused") {
		t.Errorf("restart of a paused set: note %q", p.Note)
	}
	p, err = rollout.Resume(setAt("9", map[string]string{abi.AnnotationPaused: "true", abi.AnnotationModule: "extended"}, ru), "statefulsets.ordinal.dev", true)
	if m = patchOf(t, p); err != nil || m["metadata"].(map[string]any)["annotations"].(map[string]any)[abi.AnnotationPaused] != nil {
		t.Errorf("resume of an ordinal.dev set: %s %v", p.Data, err)
	}
}

// undo on a replayed canary (revision 1 image 0.27, revision 2 image 0.28, the set at 2): the previous
// revision's template, replaced whole, guarded by the set's resourceVersion; the current one is skipped.
func TestUndo(t *testing.T) {
	snap := finalSnapshot(t, "partition-canary")
	p, err := rollout.Undo(snap, "statefulsets.apps", 0)
	if err != nil {
		t.Fatal(err)
	}
	var ops []struct {
		Op, Path string
		Value    any
	}
	if err := json.Unmarshal(p.Data, &ops); err != nil || !p.JSONPatch || p.Done != "rolled back" || len(ops) != 2 {
		t.Fatalf("undo patch %s (%v)", p.Data, err)
	}
	if ops[0].Op != "test" || ops[0].Path != "/metadata/resourceVersion" || ops[0].Value == "" {
		t.Errorf("undo is not guarded by the set's resourceVersion: %+v", ops[0])
	}
	img := ops[1].Value.(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]
	if ops[1].Op != "replace" || ops[1].Path != "/spec/template" || img != "registry.k8s.io/nginx-slim:0.27" {
		t.Errorf("undo replaces %s with image %v, want the template of revision 1 (0.27)", ops[1].Path, img)
	}
	if _, has := ops[1].Value.(map[string]any)["$patch"]; has {
		t.Errorf("the revision's strategic-merge directive leaked into the template")
	}
	if p, err := rollout.Undo(snap, "statefulsets.apps", 2); err != nil || p.Data != nil || p.Done != "skipped rollback (current template already matches revision 2)" {
		t.Errorf("undo to the current revision: %q %s %v", p.Done, p.Data, err)
	}
	if _, err := rollout.Undo(snap, "statefulsets.apps", 9); err == nil || err.Error() != "unable to find specified revision 9 in history" {
		t.Errorf("undo to a revision that is not there: %v", err)
	}
}

// A user who undid a broken release of an OrderedReady set got "rolled back" and nothing else, and the set
// stayed where it was for good: web-2, at the broken revision and never Ready, is waited for and replaced
// only once Ready (upstream's forced-rollback trap). Undo now says so and how to get out; and that a paused
// set rolls back only once resumed, as restart says.
func TestUndoSaysWhatHoldsTheRollback(t *testing.T) {
	broken := snapshotAfter(t, "forced-rollback-trap", 1) // web-2 at revision B, never Ready
	p, err := rollout.Undo(broken, "statefulsets.apps", 0)
	if err != nil || p.Done != "rolled back" {
		t.Fatalf("undo: %q %v", p.Done, err)
	}
	if want := "web-2 not Ready and not at revision 1: under OrderedReady the controller waits for it before it rolls back any other pod"; !strings.Contains(p.Note, want) ||
		!strings.Contains(p.Note, "kubectl delete pod web-2 -n default") {
		t.Errorf("undo's note %q, want %q and the delete", p.Note, want)
	}
	recovering := edit(t, broken, func(set map[string]any) {
		set["metadata"].(map[string]any)["annotations"] = map[string]any{abi.AnnotationRecoverStuckAfter: "10m"}
	})
	if p, _ := rollout.Undo(recovering, "statefulsets.apps", 0); !strings.Contains(p.Note, "ordinal.dev/recover-stuck-after: 10m deletes such a pod") || strings.Contains(p.Note, "kubectl delete") {
		t.Errorf("undo's note with recover-stuck: %q", p.Note)
	}
	// A pod mid in-place update reads Ready to upstream, and not Ready to the module that waits for it.
	if p, _ := rollout.Undo(midInPlaceUpdate(t, extendedModule(t)), "statefulsets.apps", 0); !strings.Contains(p.Note, "web-2 not Ready and not at revision 1") {
		t.Errorf("undo mid in-place update notes %q, want web-2 named", p.Note)
	}
	parallel := edit(t, broken, func(set map[string]any) { spec(set)["podManagementPolicy"] = "Parallel" })
	if p, _ := rollout.Undo(parallel, "statefulsets.apps", 0); p.Note != "" {
		t.Errorf("a Parallel set replaces the broken pod itself, yet undo notes %q", p.Note)
	}
	paused := edit(t, finalSnapshot(t, "partition-canary"), func(set map[string]any) {
		set["metadata"].(map[string]any)["annotations"] = map[string]any{rollout.PausedPartitionAnnotation: "0"}
	})
	if p, _ := rollout.Undo(paused, "statefulsets.apps", 0); p.Note != "the set is paused: the rollback rolls out once it is resumed (kubectl ordinal resume)" {
		t.Errorf("undo of a paused set notes %q", p.Note)
	}
	if p, _ := rollout.Undo(finalSnapshot(t, "partition-canary"), "statefulsets.apps", 0); p.Note != "" {
		t.Errorf("undo of a settled set notes %q", p.Note)
	}
}

// kubectl ordinal restart of an OrderedReady set stalled on a broken pod printed "restarted", and no pod was
// restarted: the controller waits for the broken pod before it replaces any other, and replaces that one only
// once Ready. Restart now says so, as undo does.
func TestRestartSaysWhatHoldsIt(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	broken := snapshotAfter(t, "forced-rollback-trap", 1) // web-2 at revision B, never Ready
	p, err := rollout.RestartOf(broken, now)
	if err != nil || p.Done != "restarted" || p.Data == nil {
		t.Fatalf("restart: %q %s %v", p.Done, p.Data, err)
	}
	if want := "web-2 not Ready and not at the restart's new revision: under OrderedReady the controller waits for it before it restarts any other pod"; !strings.Contains(p.Note, want) ||
		!strings.Contains(p.Note, "kubectl delete pod web-2 -n default") {
		t.Errorf("restart's note %q, want %q and the delete", p.Note, want)
	}
	parallel := edit(t, broken, func(set map[string]any) { spec(set)["podManagementPolicy"] = "Parallel" })
	if p, _ := rollout.RestartOf(parallel, now); p.Note != "" {
		t.Errorf("a Parallel set replaces the broken pod itself, yet restart notes %q", p.Note)
	}
	if p, _ := rollout.RestartOf(finalSnapshot(t, "partition-canary"), now); p.Note != "" {
		t.Errorf("restart of a settled set notes %q", p.Note)
	}
}
