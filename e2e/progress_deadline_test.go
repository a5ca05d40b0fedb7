//go:build e2e

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"

	"github.com/ordinal-dev/ordinal/host/rollout"
)

// progressDeadline: the annotations of extension progress-deadline on the extended module.
func progressDeadline(seconds string) setOpt {
	return func(s *appsv1.StatefulSet) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations["ordinal.dev/module"] = "extended"
		s.Annotations["ordinal.dev/progress-deadline-seconds"] = seconds
	}
}

func setCondition(s *appsv1.StatefulSet, typ string) *appsv1.StatefulSetCondition {
	for i := range s.Status.Conditions {
		if string(s.Status.Conditions[i].Type) == typ {
			return &s.Status.Conditions[i]
		}
	}
	return nil
}

// Extension progress-deadline on the real control plane, as a pipeline uses it: `kubectl wait
// --for=condition=Available` returns once the set is rolled out, Progressing says RolloutComplete; a
// rollout to an image that cannot be pulled (an OrderedReady set: it stalls on its top pod) turns
// Progressing False, ProgressDeadlineExceeded, once no pod became updated and available for the 30 s
// deadline and not before, which `kubectl wait --for=condition=Progressing=False` sees, with a warning event
// and `kubectl ordinal status` saying the same. `kubectl ordinal status --wait`, as a CI step waits on a
// rollout, exits 0 once the set is rolled out and 6 once the deadline has passed.
func TestProgressDeadlineConditions(t *testing.T) {
	requireHookEnv(t) // the real kubectl
	t.Parallel()
	ctx, ns, _, _ := begin(t, "pd", true)
	createSet(t, ctx, ns, newSet("pd", 3, progressDeadline("30")))
	if out, errOut, code := statusWait(t, ctx, ns, "sts/pd"); code != 0 ||
		!strings.Contains(out, "state: complete") || !strings.Contains(out, "3 pods Ready at revision A") {
		t.Fatalf("kubectl ordinal status --wait of the set's creation: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := kubectl(t, ctx, "", "wait", "-n", ns, "--for=condition=Available", "statefulset/pd", "--timeout=3m"); code != 0 {
		t.Fatalf("kubectl wait --for=condition=Available: exit %d\n%s%s", code, out, errOut)
	}
	s := waitSet(t, ctx, ns, "pd", "rolled out, Progressing RolloutComplete", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		c := setCondition(s, "Progressing")
		return rolledOut(3)(s) && c != nil && c.Status == "True" && c.Reason == "RolloutComplete"
	})
	good := s.Status.UpdateRevision

	patched := time.Now().Truncate(time.Second)
	patchSet(t, ctx, ns, "pd", `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.invalid/app:broken"}]}}}}`)
	// started right after the edit: the Progressing=True of the previous generation does not end the wait
	out, errOut, code := statusWait(t, ctx, ns, "sts/pd")
	if code != 6 || !strings.Contains(errOut, "the rollout is stuck: Progressing=False ProgressDeadlineExceeded") || strings.Count(out, "StatefulSet "+ns+"/pd") != 2 {
		t.Fatalf("kubectl ordinal status --wait of a rollout that passes its deadline: exit %d, want 6 saying why, "+
			"with the first and last views (a line per change between):\n%s%s", code, out, errOut)
	}
	if out, errOut, code := kubectl(t, ctx, "", "wait", "-n", ns, "--for=condition=Progressing=False", "statefulset/pd", "--timeout=3m"); code != 0 {
		t.Fatalf("kubectl wait --for=condition=Progressing=False: exit %d\n%s%s", code, out, errOut)
	}
	s = getSet(t, ctx, ns, "pd")
	c := setCondition(s, "Progressing")
	if c == nil || c.Reason != "ProgressDeadlineExceeded" || !strings.Contains(c.Message, s.Status.UpdateRevision) || s.Status.UpdateRevision == good {
		t.Fatalf("Progressing %+v (update revision %s, was %s), want ProgressDeadlineExceeded naming the new revision", c, s.Status.UpdateRevision, good)
	}
	if after := c.LastTransitionTime.Sub(patched); after < 30*time.Second {
		t.Errorf("the deadline passed %s after the edit, before the 30 s deadline", after)
	} else {
		t.Logf("ProgressDeadlineExceeded %s after the edit (deadline 30 s from the last progress)", after)
	}
	if s.Status.UpdatedReplicas != 1 || s.Status.ReadyReplicas != 2 {
		t.Errorf("status %s: want the rollout stalled on pd-2 (1 updated, 2 ready)", statusString(s))
	}
	if a := setCondition(s, "Available"); a == nil || a.Status != "True" {
		t.Errorf("Available %+v: want True (2 of 3 available, maxUnavailable 1)", a)
	}
	// the event is recorded asynchronously (client-go's recorder), so it may come after the condition
	var l *corev1.EventList
	var err error
	waitFor(t, ctx, "the ProgressDeadlineExceeded event", time.Minute, func() bool {
		l, err = eventsOf(ctx, ns, "pd", "ProgressDeadlineExceeded")
		return err == nil && len(l.Items) > 0
	})
	if len(l.Items) != 1 || l.Items[0].Type != "Warning" || !strings.Contains(l.Items[0].Message, "1 of 3 pods updated") {
		t.Errorf("ProgressDeadlineExceeded events: %v %v; all events:\n%s", l, err, eventLog(ns))
	}
	out, errOut, code = plugin(t, ctx, "status", "sts/pd", "-n", ns, "-o", "json")
	var st rollout.Status
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("kubectl ordinal status -o json: exit %d\n%s%s", code, out, errOut)
	}
	found := false
	for _, pc := range st.Conditions {
		found = found || pc.Type == "Progressing" && pc.Status == "False" && pc.Reason == "ProgressDeadlineExceeded"
	}
	if !found {
		t.Errorf("kubectl ordinal status conditions %+v: want Progressing False ProgressDeadlineExceeded", st.Conditions)
	}
}

// The same conditions on Ordinal's own kind: `kubectl wait --for=condition=Available` on an ordinal.dev/v1 set.
func TestProgressDeadlineConditionsOrdinalKind(t *testing.T) {
	requireHookEnv(t)
	t.Parallel()
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	dyn, err := dynamic.NewForConfig(cfg.rest)
	if err != nil {
		t.Fatal(err)
	}
	c := startController(t, ns, ctrlOpts{crdOnly: true})
	c.waitReady(ctx)
	createOrdinalSet(t, ctx, dyn, ns, newSet("pdo", 2, progressDeadline("30")))
	if out, errOut, code := kubectl(t, ctx, "", "wait", "-n", ns, "--for=condition=Available", "statefulsets.ordinal.dev/pdo", "--timeout=3m"); code != 0 {
		t.Fatalf("kubectl wait --for=condition=Available: exit %d\n%s%s", code, out, errOut)
	}
	waitOrdinalRolledOut(t, ctx, dyn, ns, "pdo", 2)
	if out, errOut, code := kubectl(t, ctx, "", "wait", "-n", ns, "--for=jsonpath={.status.conditions[?(@.type==\"Progressing\")].reason}=RolloutComplete",
		"statefulsets.ordinal.dev/pdo", "--timeout=3m"); code != 0 {
		t.Fatalf("kubectl wait for Progressing RolloutComplete: exit %d\n%s%s", code, out, errOut)
	}
	// kubectl ordinal status --wait watches Ordinal's kind through its own informer
	if out, errOut, code := statusWait(t, ctx, ns, "osts/pdo", "-o", "json"); code != 0 || !strings.Contains(out, `"state": "complete"`) {
		t.Errorf("kubectl ordinal status osts/pdo --wait: exit %d, want 0 and the complete view\n%s%s", code, out, errOut)
	}
}

// ordinal.dev/on-progress-deadline: Rollback on the real control plane: a broken-image rollout of a 5-pod
// OrderedReady set stalls on rb-4; once the 10 s deadline passes the module puts back the old template (a
// JSON patch of the set the firewall allows only as that), and the set returns to the old revision with
// every pod Ready, rb-4 (never Ready) replaced without anyone deleting it: the forced-rollback trap of
// kubernetes/kubernetes#67250 recovered with no manual step. `kubectl ordinal status --wait` of the edit exits 6:
// the set heals, but the edit failed.
func TestProgressDeadlineRollback(t *testing.T) {
	requireHookEnv(t) // the real kubectl
	t.Parallel()
	ctx, ns, _, tr := begin(t, "rb", true)
	set := newSet("rb", 5, progressDeadline("10"))
	set.Annotations["ordinal.dev/on-progress-deadline"] = "Rollback"
	createSet(t, ctx, ns, set)
	good := waitRolledOut(t, ctx, ns, "rb", 5)
	uids := tr.uidsByName(ctx)
	image := good.Spec.Template.Spec.Containers[0].Image

	patchSet(t, ctx, ns, "rb", `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.invalid/app:broken"}]}}}}`)
	if out, errOut, code := statusWait(t, ctx, ns, "sts/rb"); code != 6 || !strings.Contains(errOut, "the rollout is stuck: RolledBack=True ProgressDeadlineExceeded") {
		t.Errorf("kubectl ordinal status --wait of an edit rolled back at its deadline: exit %d, want 6 naming RolledBack\n%s%s", code, out, errOut)
	}
	s := waitSet(t, ctx, ns, "rb", "rolled back: 5 pods Ready at the old revision", 3*time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Generation >= 3 && rolledOut(5)(s) && s.Status.UpdateRevision == good.Status.UpdateRevision
	})
	if got := s.Spec.Template.Spec.Containers[0].Image; got != image {
		t.Errorf("template image %q after the rollback, want the old %q", got, image)
	}
	if c := setCondition(s, "RolledBack"); c == nil || c.Status != "True" || !strings.Contains(c.Message, "to revision "+good.Status.UpdateRevision) {
		t.Errorf("RolledBack condition %+v", c)
	}
	if l, err := eventsOf(ctx, ns, "rb", "RollingBack"); err != nil || len(l.Items) != 1 {
		t.Errorf("RollingBack events: %v %v; all events:\n%s", l, err, eventLog(ns))
	}
	if l, err := eventsOf(ctx, ns, "rb", "RecoveredStuckPod"); err != nil || len(l.Items) != 1 || !strings.Contains(l.Items[0].Message, "rb-4") {
		t.Errorf("RecoveredStuckPod events: %v %v", l, err)
	}
	tr.waitFor(ctx, "5 pods Ready at the old revision", time.Minute, func(v podView) bool { return v.readyAt(5, good.Status.UpdateRevision) })
	samePods(t, ctx, ns, uids, "the rollback replaces only the pod the broken revision reached", "rb-0", "rb-1", "rb-2", "rb-3")
	if n := tr.podsPerOrdinal()[4]; n != 3 {
		t.Errorf("rb-4 had %d pods, want 3 (old, broken, old again)", n)
	}
	tr.checkInvariants()
}
