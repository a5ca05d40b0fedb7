//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/host/rollout"
)

// kubectl rollout's verbs through the real kubectl on a set the controller rolls out (issue 31): restart
// replaces every pod; pause holds an edit (the controller observes it and updates no pod), resume lets it
// roll; undo brings the previous template back; undo to the current revision writes nothing.
func TestPluginRolloutVerbs(t *testing.T) {
	requireHookEnv(t)
	ctx, ns, _, _ := begin(t, "rv", false)
	createSet(t, ctx, ns, newSet("rv", 2))
	first := waitRolledOut(t, ctx, ns, "rv", 2)

	verb := func(want string, args ...string) {
		t.Helper()
		out, perr, code := plugin(t, ctx, append(args, "-n", ns)...)
		if code != 0 || strings.TrimSpace(out) != want {
			t.Fatalf("kubectl ordinal %v: exit %d, want %q\n%s%s", args, code, want, out, perr)
		}
	}
	verb("statefulset.apps/rv restarted", "restart", "statefulset/rv")
	restarted := waitSet(t, ctx, ns, "rv", "rolled out at a new revision", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		return rolledOut(2)(s) && s.Status.UpdateRevision != first.Status.UpdateRevision
	})
	if restarted.Spec.Template.Annotations[rollout.RestartedAtAnnotation] == "" {
		t.Errorf("restart did not set %s: %v", rollout.RestartedAtAnnotation, restarted.Spec.Template.Annotations)
	}

	verb("statefulset.apps/rv paused", "pause", "statefulset/rv")
	if _, perr, code := plugin(t, ctx, "pause", "statefulset/rv", "-n", ns); code != 1 || !strings.Contains(perr, `statefulsets.apps "rv" is already paused`) {
		t.Errorf("pause twice: exit %d, %s", code, perr)
	}
	edited := patchSet(t, ctx, ns, "rv", setVersion("v2"))
	held := waitSet(t, ctx, ns, "rv", "the edit observed", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration >= edited.Generation && s.Status.UpdateRevision != restarted.Status.UpdateRevision
	})
	if held.Status.UpdatedReplicas != 0 || held.Status.CurrentReplicas != 2 {
		t.Errorf("paused, the controller updated pods: %+v", held.Status)
	}
	for _, p := range listPodsOf(t, ctx, ns, "rv") {
		if rev := p.Labels[appsv1.ControllerRevisionHashLabelKey]; rev != restarted.Status.UpdateRevision {
			t.Errorf("paused, pod %s moved to revision %s", p.Name, rev)
		}
	}

	verb("statefulset.apps/rv resumed", "resume", "statefulset/rv")
	resumed := waitRolledOut(t, ctx, ns, "rv", 2)
	if p := resumed.Spec.UpdateStrategy.RollingUpdate; p != nil && p.Partition != nil && *p.Partition != 0 {
		t.Errorf("resume left partition %d, want the 0 it had", *p.Partition)
	}
	if _, ok := resumed.Annotations[rollout.PausedPartitionAnnotation]; ok || resumed.Spec.Template.Annotations[annVersion] != "v2" {
		t.Errorf("after resume: annotations %v, template %v", resumed.Annotations, resumed.Spec.Template.Annotations)
	}

	// undo's dry runs write nothing; the client one's manifest (-o yaml) is one kubectl ordinal preview takes, and
	// its preview is the rollback's: the pods back to the revision before
	before := getSet(t, ctx, ns, "rv")
	verb("statefulset.apps/rv rolled back (server dry run)", "undo", "statefulset/rv", "--dry-run=server")
	manifest, perr, code := plugin(t, ctx, "undo", "statefulset/rv", "-n", ns, "--dry-run=client", "-o", "yaml")
	if code != 0 || !strings.Contains(manifest, "kind: StatefulSet") || strings.Contains(manifest, "managedFields") {
		t.Fatalf("kubectl ordinal undo --dry-run=client -o yaml: exit %d\n%s%s", code, manifest, perr)
	}
	undoFile := filepath.Join(t.TempDir(), "undo.yaml")
	if err := os.WriteFile(undoFile, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, perr, code := plugin(t, ctx, "preview", "--replace", "-f", undoFile, "-n", ns); code != 0 ||
		!strings.Contains(out, "rolling update of 2 pods to revision "+restarted.Status.UpdateRevision) {
		t.Errorf("kubectl ordinal preview of undo's dry run: exit %d, want the rollback to %s\n%s%s", code, restarted.Status.UpdateRevision, out, perr)
	}
	if after := getSet(t, ctx, ns, "rv"); after.Generation != before.Generation || after.Spec.Template.Annotations[annVersion] != "v2" {
		t.Fatalf("undo's dry runs wrote the set: generation %d -> %d, template %v", before.Generation, after.Generation, after.Spec.Template.Annotations)
	}

	verb("statefulset.apps/rv rolled back", "undo", "statefulset/rv")
	undone := waitSet(t, ctx, ns, "rv", "rolled back", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		return rolledOut(2)(s) && s.Status.UpdateRevision == restarted.Status.UpdateRevision // upstream reuses the revision, renumbered
	})
	if undone.Spec.Template.Annotations[annVersion] != "v1" {
		t.Errorf("undo: template annotations %v, want version v1 back", undone.Spec.Template.Annotations)
	}
	revs := listRevisions(t, ctx, ns, "rv")
	newest := revs[len(revs)-1].Revision
	verb(fmt.Sprintf("statefulset.apps/rv skipped rollback (current template already matches revision %d)", newest), "undo", "statefulset/rv", fmt.Sprintf("--to-revision=%d", newest))
	if after := getSet(t, ctx, ns, "rv"); after.Generation != undone.Generation {
		t.Errorf("a skipped rollback wrote the set: generation %d -> %d", undone.Generation, after.Generation)
	}

	// A set created with kubectl apply and restarted since: its undo's manifest previewed as kubectl apply
	// would apply it keeps the restart's annotation (in neither the last-applied record nor the file) and
	// shows nothing; previewed as what undo does, the whole template put back (--replace), it is the rollback.
	if _, perr, code := kubectl(t, ctx, webManifest(2, "Parallel", "v1", 0, false), "apply", "-n", ns, "-f", "-"); code != 0 {
		t.Fatalf("kubectl apply: %s", perr)
	}
	applied := waitRolledOut(t, ctx, ns, "web", 2)
	verb("statefulset.apps/web restarted", "restart", "statefulset/web")
	waitSet(t, ctx, ns, "web", "restarted", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		return rolledOut(2)(s) && s.Status.UpdateRevision != applied.Status.UpdateRevision
	})
	manifest, perr, code = plugin(t, ctx, "undo", "statefulset/web", "-n", ns, "--dry-run=client", "-o", "yaml")
	if code != 0 {
		t.Fatalf("kubectl ordinal undo --dry-run=client: exit %d\n%s", code, perr)
	}
	if err := os.WriteFile(undoFile, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, perr, code := plugin(t, ctx, "preview", "--replace", "-f", undoFile, "-n", ns); code != 0 ||
		!strings.Contains(out, "rolling update of 2 pods to revision "+applied.Status.UpdateRevision) {
		t.Errorf("kubectl ordinal preview --replace of an applied, restarted set's undo: exit %d, want the rollback to %s\n%s%s",
			code, applied.Status.UpdateRevision, out, perr)
	}
}

// listPodsOf lists the pods of the set named name (label app=name).
func listPodsOf(t *testing.T, ctx context.Context, ns, name string) []corev1.Pod {
	t.Helper()
	l, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}
