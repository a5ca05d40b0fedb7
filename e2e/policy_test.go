//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/policies"
)

// The shipped handoff policy on the real control plane: a set naming it (ordinal.dev/policies: handoff)
// rolls out until the pod labelled role=primary is next; its delete is held (upstream's FailedDelete event
// carries the policy's message, the pod is not touched, the status is written), and once the operator
// removes the label the rollout finishes, with a PolicyReleased event.
func TestHandoffPolicyHoldsThePrimarysDelete(t *testing.T) {
	t.Parallel()
	requireHookEnv(t)
	ctx, ns, _, tr := begin(t, "ho", true)
	set := newSet("ho", 3)
	set.Annotations = map[string]string{"ordinal.dev/policies": "handoff", "handoff.ordinal.dev/timeout": "0"}
	createSet(t, ctx, ns, set)
	before := waitRolledOut(t, ctx, ns, "ho", 3)
	labelPod := func(patch string) {
		t.Helper()
		if _, err := cfg.kc.CoreV1().Pods(ns).Patch(ctx, "ho-1", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("label ho-1: %v", err)
		}
	}
	labelPod(`{"metadata":{"labels":{"role":"primary"}}}`)
	uids := tr.uidsByName(ctx)
	mark := tr.mark()

	patchSet(t, ctx, ns, "ho", setVersion("v2"))
	waitFor(t, ctx, "a FailedDelete event for ho-1 naming the handoff policy", 2*time.Minute, func() bool {
		l, err := eventsOf(ctx, ns, "ho", "FailedDelete")
		return err == nil && len(l.Items) > 0 && strings.Contains(l.Items[0].Message, `pods "ho-1" is forbidden: policy handoff holds this write: pod ho-1 still carries role=primary`)
	})
	// the set's status says what is held (condition PolicyHold), beside upstream's counts
	held := waitSet(t, ctx, ns, "ho", "the status written after the held delete: ho-2 updated, PolicyHold True", time.Minute, func(s *appsv1.StatefulSet) bool {
		c := holdCondition(s)
		return s.Status.ObservedGeneration == s.Generation && s.Status.UpdatedReplicas == 1 && s.Status.UpdateRevision != before.Status.UpdateRevision &&
			c != nil && c.Status == corev1.ConditionTrue && c.Reason == "RoleNotHandedOff" &&
			strings.HasPrefix(c.Message, "policy handoff holds delete Pod ho-1: pod ho-1 still carries role=primary")
	})
	samePods(t, ctx, ns, uids, "while the primary's delete is held", "ho-0", "ho-1")
	wantOrdinals(t, "pods replaced while held", ordinals(tr.stepsOf(stepTerminating, mark)), 2)
	// kubectl ordinal status says what holds the rollout (the same policy, run on the next sync's plan).
	out, perr, code := plugin(t, ctx, "status", "statefulset/ho", "-n", ns)
	if code != 0 || !strings.Contains(out, "state: waiting") || !strings.Contains(out, "policy handoff holds delete Pod ho-1: pod ho-1 still carries role=primary") {
		t.Errorf("kubectl ordinal status while held: exit %d\n%s%s", code, out, perr)
	}

	labelPod(`{"metadata":{"labels":{"role":null}}}`)
	after := waitRolledOut(t, ctx, ns, "ho", 3)
	if after.Status.UpdateRevision != held.Status.UpdateRevision {
		t.Errorf("rolled out to %s, want %s", after.Status.UpdateRevision, held.Status.UpdateRevision)
	}
	if c := holdCondition(after); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "NothingHeld" {
		t.Errorf("PolicyHold after the rollout: %+v, want False (NothingHeld)", c)
	}
	l, err := eventsOf(ctx, ns, "ho", "PolicyReleased")
	if err != nil || len(l.Items) == 0 || !strings.Contains(l.Items[0].Message, "policy handoff no longer holds delete Pod ho-1") {
		t.Errorf("PolicyReleased events: %v %v; all events:\n%s", l, err, eventLog(ns))
	}
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 2, 1, 0)
	tr.checkInvariants()
}

// What a policy remembers survives the controller's restarts: the shipped handoff policy holds the
// primary's delete with a 75s timeout while the controller is killed and started again every 30 s (each
// after it has held the set once). Each new controller restores since when the delete has been held from
// the set (its ordinal.dev/policy-held annotation and PolicyHold condition), so the delete goes through at
// the timeout; a controller that timed the hold afresh at each start would hold it forever.
func TestHandoffTimeoutSurvivesControllerRestarts(t *testing.T) {
	t.Parallel()
	ctx, ns, c, tr := begin(t, "hr", true)
	set := newSet("hr", 2)
	set.Annotations = map[string]string{"ordinal.dev/policies": "handoff", "handoff.ordinal.dev/timeout": "75s"}
	createSet(t, ctx, ns, set)
	waitRolledOut(t, ctx, ns, "hr", 2)
	if _, err := cfg.kc.CoreV1().Pods(ns).Patch(ctx, "hr-0", types.MergePatchType, []byte(`{"metadata":{"labels":{"role":"primary"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("label hr-0: %v", err)
	}
	mark := tr.mark()
	patchSet(t, ctx, ns, "hr", setVersion("v2"))
	held := waitSet(t, ctx, ns, "hr", "hr-0's delete held (PolicyHold True) and recorded in the set", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		c := holdCondition(s)
		return c != nil && c.Status == corev1.ConditionTrue && c.Reason == "RoleNotHandedOff" && strings.Contains(s.Annotations[policy.AnnotationHeld], `"name":"hr-0"`)
	})
	released := func() bool {
		l, err := eventsOf(ctx, ns, "hr", policy.EventReleased)
		return err == nil && len(l.Items) > 0
	}
	const maxRestarts = 8 // 4 minutes of 30 s lives, more than three times the timeout
	restarts := 0
	for ; !released(); restarts++ {
		if restarts == maxRestarts {
			t.Fatalf("hr-0's delete still held after %d controller restarts, %s after it was first held (timeout 75s); record %s",
				restarts, time.Since(holdCondition(held).LastTransitionTime.Time).Round(time.Second), held.Annotations[policy.AnnotationHeld])
		}
		born := time.Now()
		waitFor(t, ctx, fmt.Sprintf("controller %d to hold the set and live 30 s, or the hold released", restarts+1), 3*time.Minute, func() bool {
			return released() || strings.Contains(c.log(), `"result":"held"`) && time.Since(born) >= 30*time.Second
		})
		if released() {
			break
		}
		c.kill()
		c = startController(t, ns, ctrlOpts{identity: fmt.Sprintf("ordinal-%d", restarts+2)})
		c.waitReady(ctx)
	}
	if restarts == 0 {
		t.Fatalf("the hold was released before any restart: the test restarted nothing")
	}
	waitRolledOut(t, ctx, ns, "hr", 2)
	l, err := eventsOf(ctx, ns, "hr", policy.EventReleased)
	if err != nil || len(l.Items) == 0 || !strings.Contains(l.Items[0].Message, "policy handoff no longer holds delete Pod hr-0") {
		t.Fatalf("PolicyReleased events: %v %v", l, err)
	}
	after, err := cfg.kc.AppsV1().StatefulSets(ns).Get(ctx, "hr", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := holdCondition(after); c == nil || c.Status != corev1.ConditionFalse || after.Annotations[policy.AnnotationHeld] != "" {
		t.Errorf("after the release: PolicyHold %+v, record %q; want False and no record", c, after.Annotations[policy.AnnotationHeld])
	}
	t.Logf("released after %d restarts: %s", restarts, l.Items[0].Message)
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 1, 0)
	tr.checkInvariants()
}

// The shipped pdb policy against kube-controller-manager's disruption controller: a 4-replica set rolled
// with maxUnavailable 2 under a PodDisruptionBudget of maxUnavailable 1. Upstream's controller deletes two
// pods together; with the policy the second delete of each pair is held (upstream's FailedDelete event
// carries the budget's numbers) until the budget's status allows it, and the rollout completes; each delete
// spends its disruption in the budget's status before it is sent, as an eviction does.
func TestPDBPolicyRespectsTheBudget(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "pb", true)
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pb"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pb"}}}}
	if _, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	set := newSet("pb", 4, maxUnavailable(2))
	set.Annotations = map[string]string{"ordinal.dev/policies": "pdb"}
	createSet(t, ctx, ns, set)
	before := waitRolledOut(t, ctx, ns, "pb", 4)
	waitFor(t, ctx, "the disruption controller allows one disruption", time.Minute, func() bool {
		p, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "pb", metav1.GetOptions{})
		return err == nil && p.Status.DisruptionsAllowed == 1 && p.Status.ObservedGeneration == p.Generation
	})
	// a live preview of the edit gives the policy the cluster's budgets, as the controller's sync does
	out := livePreview(t, ctx, ns, set, "v2")
	if !strings.Contains(out, "held by policy pdb (DisruptionBudget): PodDisruptionBudget pb allows no more disruptions") {
		t.Errorf("kubectl ordinal preview does not show the budget's hold:\n%s", out)
	}
	// and the pace its delays model took from the set's own four pods (issue 30 item 3)
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "learned from 4 of the set's pods") {
		t.Errorf("kubectl ordinal preview does not say it learned the pace from the set's pods:\n%s", out)
	}
	mark := tr.mark()
	// Each delete the policy allows spends its disruption in the budget's status first, as an eviction does.
	spent := watchSpends(t, ctx, ns, "pb")
	patchSet(t, ctx, ns, "pb", setVersion("v2"))
	after := waitRolledOut(t, ctx, ns, "pb", 4)
	if seen := spent(); len(seen) != 4 || !seen["pb-0"] || !seen["pb-3"] {
		t.Errorf("pods whose delete spent a disruption in the budget's status: %v, want pb-0 to pb-3", seen)
	}
	if after.Status.UpdateRevision == before.Status.UpdateRevision {
		t.Fatal("no new revision")
	}
	l, err := eventsOf(ctx, ns, "pb", "FailedDelete")
	if err != nil || len(l.Items) == 0 || !strings.Contains(l.Items[0].Message, "policy pdb holds this write: PodDisruptionBudget pb allows no more disruptions") {
		t.Errorf("FailedDelete events: %v %v; all events:\n%s", l, err, eventLog(ns))
	}
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 3, 2, 1, 0)
	tr.checkInvariants()
}

// The shipped window policy with a signal the controller reads from a ConfigMap (--signals-configmap): a
// rollout's deletes wait while db-healthy is false (upstream's FailedDelete event says why, no pod is
// replaced), and the rollout completes once the ConfigMap says true.
func TestWindowPolicyWaitsForTheSignal(t *testing.T) {
	t.Parallel()
	requireController(t)
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	signals := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "signals"}, Data: map[string]string{"db-healthy": "false"}}
	if _, err := cfg.kc.CoreV1().ConfigMaps(ns).Create(ctx, signals, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := startController(t, ns, ctrlOpts{extraArgs: []string{"--signals-configmap", ns + "/signals"}})
	c.waitReady(ctx)
	tr := trackPods(t, ctx, ns, "wi", true)
	set := newSet("wi", 3)
	set.Annotations = map[string]string{"ordinal.dev/policies": "window", "window.ordinal.dev/signal": "db-healthy"}
	createSet(t, ctx, ns, set)
	waitRolledOut(t, ctx, ns, "wi", 3) // creations are never held
	uids := tr.uidsByName(ctx)
	mark := tr.mark()
	// a live preview reads the controller's signals ConfigMap and shows the hold before the edit is made
	if out := livePreview(t, ctx, ns, set, "v2", "--signals-configmap", ns+"/signals"); !strings.Contains(out, `held by policy window (`) || !strings.Contains(out, `signal "db-healthy" is false`) {
		t.Errorf("kubectl ordinal preview --signals-configmap does not show the signal's hold:\n%s", out)
	}

	patchSet(t, ctx, ns, "wi", setVersion("v2"))
	waitFor(t, ctx, "a FailedDelete event naming the signal", 2*time.Minute, func() bool {
		l, err := eventsOf(ctx, ns, "wi", "FailedDelete")
		return err == nil && len(l.Items) > 0 && strings.Contains(l.Items[0].Message, `policy window holds this write: signal "db-healthy" is false`)
	})
	samePods(t, ctx, ns, uids, "while the signal is false", "wi-0", "wi-1", "wi-2")

	signals.Data["db-healthy"] = "true"
	if _, err := cfg.kc.CoreV1().ConfigMaps(ns).Update(ctx, signals, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSet(t, ctx, ns, "wi", "rolled out once the signal is true (the hold's retry, 30s)", 3*time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.UpdatedReplicas == 3 && s.Status.ReadyReplicas == 3 && s.Status.CurrentRevision == s.Status.UpdateRevision
	})
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 2, 1, 0)
	tr.checkInvariants()
}

// The shipped zones policy with kube-scheduler spreading a Parallel set over three kwok nodes in three
// zones: rolled with maxUnavailable 3, upstream takes all three pods down at once; with the policy one zone
// (one pod) is down at a time, and upstream's FailedDelete event names the zone it waits for.
func TestZonesPolicyTakesOneZoneDownAtATime(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "zo", false) // Parallel: no ordering invariants
	taint := corev1.Taint{Key: "e2e.ordinal.dev/zones", Value: ns, Effect: corev1.TaintEffectNoSchedule}
	for _, z := range []string{"a", "b", "c"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-zone-" + z,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{"type": "kwok", "kubernetes.io/hostname": ns + "-zone-" + z, "topology.kubernetes.io/zone": "zone-" + z,
				"e2e.ordinal.dev/zones": ns}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{taint}}}
		if _, err := cfg.kc.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cfg.kc.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	}
	set := newSet("zo", 3, parallel, maxUnavailable(3))
	set.Annotations = map[string]string{"ordinal.dev/policies": "zones"}
	spec := &set.Spec.Template.Spec
	spec.NodeSelector = map[string]string{"e2e.ordinal.dev/zones": ns}
	spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: taint.Key, Operator: corev1.TolerationOpEqual, Value: ns, Effect: taint.Effect})
	spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
		WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: set.Spec.Selector}}
	createSet(t, ctx, ns, set)
	waitRolledOut(t, ctx, ns, "zo", 3)
	mark := tr.mark()

	peak := tr.armMaxUnavailable(ctx, 3, 1)
	patchSet(t, ctx, ns, "zo", setVersion("v2"))
	s := waitRolledOut(t, ctx, ns, "zo", 3)
	tr.waitFor(ctx, "3 pods ready at v2", time.Minute, func(v podView) bool { return v.readyAt(3, s.Status.UpdateRevision) })
	if p := peak(); p != 1 {
		t.Errorf("peak unavailable %d, want 1: one zone at a time", p)
	}
	l, err := eventsOf(ctx, ns, "zo", "FailedDelete")
	if err != nil || len(l.Items) == 0 || !strings.Contains(l.Items[0].Message, "policy zones holds this write: zone zone-") {
		t.Errorf("FailedDelete events: %v %v; all events:\n%s", l, err, eventLog(ns))
	}
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 2, 1, 0)
	tr.checkInvariants()
}

// livePreview runs `kubectl ordinal preview` of set with the template at version v, through the real kubectl.
func livePreview(t *testing.T, ctx context.Context, ns string, set *appsv1.StatefulSet, v string, args ...string) string {
	t.Helper()
	requireHookEnv(t)
	edit := set.DeepCopy()
	edit.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}
	edit.Namespace = ns
	edit.Spec.Template.Annotations[annVersion] = v
	f := writeManifest(t, edit)
	out, perr, code := plugin(t, ctx, append([]string{"preview", "-f", f, "-n", ns}, args...)...)
	if code != 0 && code != 6 && code != 8 {
		t.Fatalf("kubectl ordinal preview: exit %d\n%s%s", code, out, perr)
	}
	return out
}

// watchSpends watches the budget's status from now on; the function it returns stops the watch and gives
// every pod seen among its disruptedPods (the disruption controller only ever removes entries: each one
// seen is a spend).
func watchSpends(t *testing.T, ctx context.Context, ns, budget string) func() map[string]bool {
	t.Helper()
	w, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + budget})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	spent := make(chan map[string]bool, 1)
	go func() {
		seen := map[string]bool{}
		defer func() { spent <- seen }()
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*policyv1.PodDisruptionBudget); ok {
				for name := range p.Status.DisruptedPods {
					seen[name] = true
				}
			}
		}
	}()
	return func() map[string]bool {
		w.Stop()
		return <-spent
	}
}

// An in-place rollout under a budget of one, the pdb policy spending a disruption for each pod's update:
// the host gives each back once its pod runs the new image and is Ready again, so the pods go one at a
// time without the disruption controller's two-minute timeout for a spent pod that is never deleted (after
// which kube-controller-manager records a NotDeleted warning on the pod), and the budget ends with nothing
// disrupted and its disruption allowed again.
func TestPDBInPlaceSpendIsGivenBack(t *testing.T) {
	t.Parallel()
	ctx, ns, _, tr := begin(t, "pi", true)
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pi"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pi"}}}}
	if _, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	set := newSet("pi", 3, inPlace("InPlaceIfPossible"), maxUnavailable(2))
	set.Annotations["ordinal.dev/policies"] = "pdb"
	createSet(t, ctx, ns, set)
	first := waitRolledOut(t, ctx, ns, "pi", 3)
	budgetIsBack := func() bool {
		p, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "pi", metav1.GetOptions{})
		return err == nil && p.Status.DisruptionsAllowed == 1 && len(p.Status.DisruptedPods) == 0 && p.Status.ObservedGeneration == p.Generation
	}
	waitFor(t, ctx, "the disruption controller allows one disruption", time.Minute, budgetIsBack)
	before := podFactsOf(t, ctx, ns, "pi", 3)
	peak := tr.armMaxUnavailable(ctx, 3, 1)
	spent := watchSpends(t, ctx, ns, "pi")
	patchContainer(t, ctx, ns, "pi", `{"name":"app","image":"`+inPlaceImage+`"}`)
	waitSet(t, ctx, ns, "pi", "rolled out to the new revision", 3*time.Minute, func(s *appsv1.StatefulSet) bool {
		return rolledOut(3)(s) && s.Status.UpdateRevision != first.Status.CurrentRevision
	})
	waitFor(t, ctx, "the last pod's disruption given back", time.Minute, budgetIsBack)
	if seen := spent(); len(seen) != 3 {
		t.Errorf("pods whose in-place update spent a disruption in the budget's status: %v, want pi-0 to pi-2", seen)
	}
	if p := peak(); p != 1 {
		t.Errorf("at most %d pods unavailable at once, want 1 (the budget's)", p)
	}
	wantInPlace(t, ctx, ns, "pi", before, inPlaceImage)
	l, err := cfg.kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=NotDeleted"})
	if err != nil || len(l.Items) != 0 {
		t.Errorf("the disruption controller timed out a spend (NotDeleted events: %v, %v); all events:\n%s", l, err, eventLog(ns))
	}
	tr.checkInvariants()
}

// An in-place update that restarts no container is no disruption: under a budget that allows none, the pdb
// policy lets a CPU-only rollout (resized live: resizePolicy NotRequired, the default) go through, and spends
// nothing, where it holds, and would hold for good, any write that takes a pod down.
func TestPDBLetsALiveResizeThrough(t *testing.T) {
	t.Parallel()
	ctx, ns, _, _ := begin(t, "pr", true)
	all := intstr.FromInt32(3)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pr"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &all, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pr"}}}}
	if _, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	set := newSet("pr", 3, inPlace("InPlaceIfPossible"), cpuRequest("10m"))
	set.Annotations["ordinal.dev/policies"] = "pdb"
	createSet(t, ctx, ns, set)
	first := waitRolledOut(t, ctx, ns, "pr", 3)
	waitFor(t, ctx, "the disruption controller to allow no disruption of 3 healthy pods", time.Minute, func() bool {
		p, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "pr", metav1.GetOptions{})
		return err == nil && p.Status.CurrentHealthy == 3 && p.Status.DisruptionsAllowed == 0 && p.Status.ObservedGeneration == p.Generation
	})
	before := podFactsOf(t, ctx, ns, "pr", 3)
	spent := watchSpends(t, ctx, ns, "pr")
	patchContainer(t, ctx, ns, "pr", `{"name":"app","resources":{"requests":{"cpu":"20m"}}}`)
	waitSet(t, ctx, ns, "pr", "rolled out to the new revision", 3*time.Minute, func(s *appsv1.StatefulSet) bool {
		return rolledOut(3)(s) && s.Status.UpdateRevision != first.Status.CurrentRevision
	})
	if seen := spent(); len(seen) != 0 {
		t.Errorf("pods whose live resize spent a disruption: %v, want none", seen)
	}
	after := podFactsOf(t, ctx, ns, "pr", 3)
	for name, b := range before {
		if after[name].uid != b.uid {
			t.Errorf("%s: uid %s, was %s: want the pod resized in place", name, after[name].uid, b.uid)
		}
	}
}

// The webhook previews an edit of a set naming the pdb policy with the cluster's budget, as the controller's
// sync and `kubectl ordinal preview` give it: maxUnavailable 2 under a budget of 1, a server-side dry run of
// the edit (nothing changes) is previewed with the second delete held. The webhook runs as the deployed
// ServiceAccount under exactly the deployed RBAC (which lists PodDisruptionBudgets and nodes for this): a
// permission it lacks shows as "forbidden" in its log, and as a preview without the hold.
func TestWebhookPreviewsThePDBPolicysHold(t *testing.T) {
	t.Parallel()
	requireHookEnv(t)
	ctx, ns, _, _ := begin(t, "wb", true)
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "wb"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "wb"}}}}
	if _, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	set := newSet("wb", 4, maxUnavailable(2))
	set.Annotations = map[string]string{"ordinal.dev/policies": "pdb"}
	createSet(t, ctx, ns, set)
	waitRolledOut(t, ctx, ns, "wb", 4)
	waitFor(t, ctx, "the disruption controller allows one disruption", time.Minute, func() bool {
		p, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "wb", metav1.GetOptions{})
		return err == nil && p.Status.DisruptionsAllowed == 1 && p.Status.ObservedGeneration == p.Generation
	})
	hook := startWebhook(t, ctx, ns, "--kubeconfig", serviceAccountKubeconfig(t, ctx, "examples/deploy/webhook", "ordinal-webhook"))
	t.Cleanup(func() {
		if b, _ := os.ReadFile(hook.logPath); strings.Contains(string(b), "forbidden") {
			t.Errorf("the webhook was refused something under the deployed RBAC:\n%s", lastLines(string(b), 30))
		}
	})
	edit := getSet(t, ctx, ns, "wb")
	edit.Spec.Template.Annotations[annVersion] = "v2"
	if _, err := cfg.kc.AppsV1().StatefulSets(ns).Update(ctx, edit, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("dry-run update: %v", err)
	}
	if out := hook.get(t, "/preview/"+ns+"/wb"); !strings.Contains(out, "held by policy pdb (DisruptionBudget): PodDisruptionBudget wb allows no more disruptions") {
		t.Errorf("the webhook's preview does not show the budget's hold:\n%s", out)
	}
	if got := getSet(t, ctx, ns, "wb"); got.Generation != edit.Generation {
		t.Errorf("the dry run changed the set: generation %d, was %d", got.Generation, edit.Generation)
	}
}

// Two sets under one PodDisruptionBudget, each with a sync deciding from the budget as the API server lists
// it with one disruption left: the shipped pdb policy allows both deletes (each alone is within the budget),
// and only the host's commit of the spend, the eviction API's write of the budget's status under its
// resourceVersion, keeps them from taking the budget below its minimum. Against the real kube-apiserver: the
// first spend is written (one disruption less, the pod among disruptedPods), the second is refused with 409
// Conflict, the budget read again has nothing left, and its delete is held; kube-controller-manager's disruption controller then recounts the budget
// with the spent pod as disrupted, and a new sync's policy holds the second delete from the budget as it is.
func TestPDBBudgetIsSpentOnceAcrossSets(t *testing.T) {
	t.Parallel()
	ctx, ns, _, _ := begin(t, "sa", false)
	shared := map[string]string{"tier": "db"}
	for _, name := range []string{"sa", "sb"} {
		set := newSet(name, 2)
		set.Spec.Template.Labels["tier"] = "db"
		createSet(t, ctx, ns, set)
	}
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: shared}}}
	if _, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRolledOut(t, ctx, ns, "sa", 2)
	waitRolledOut(t, ctx, ns, "sb", 2)
	waitFor(t, ctx, "the disruption controller allows one disruption of the four pods", time.Minute, func() bool {
		p, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "db", metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == 4 && p.Status.DisruptionsAllowed == 1
	})
	list, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "tier=db"})
	if err != nil || len(list.Items) != 4 {
		t.Fatalf("pods: %v %v", list, err)
	}
	var pods []*corev1.Pod
	for i := range list.Items {
		pods = append(pods, &list.Items[i])
	}
	pdbPolicy, err := wasm.LoadPolicy(ctx, policies.Builtin()["pdb"], wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer pdbPolicy.Close(context.Background())
	// One sync of each set, each planning to delete its pod 1, as a rollout's sync would.
	syncOf := func(set string) (*policy.Run, *abi.Plan) {
		budgets, err := policy.Budgets(ctx, cfg.kc, ns, pods)
		if err != nil || len(budgets) != 1 {
			t.Fatalf("budgets %d, %v", len(budgets), err)
		}
		var podJSON []string
		for _, p := range pods {
			if p.Labels["app"] == set {
				b, _ := json.Marshal(p)
				podJSON = append(podJSON, string(b))
			}
		}
		snapshot := `{"abi":1,"now":"` + time.Now().UTC().Format(time.RFC3339) + `","statefulSet":{"metadata":{"name":"` + set +
			`","namespace":"` + ns + `"}},"pods":[` + strings.Join(podJSON, ",") + `]}`
		r := &policy.Run{Policies: []policy.Module{pdbPolicy}, Snapshot: []byte(snapshot), PodDisruptionBudgets: budgets,
			Budgets: policy.ClientBudgets{Client: cfg.kc, FieldManager: "ordinal"},
			Failed:  func(f policy.Failure) { t.Errorf("policy failed: %v", f) }}
		return r, &abi.Plan{ABI: 1, Actions: []abi.Action{{Verb: abi.VerbDelete, Kind: abi.KindPod, Namespace: ns, Name: set + "-1"}}}
	}
	ra, pa := syncOf("sa")
	rb, pb := syncOf("sb")
	if h := ra.Judge(ctx, pa, 0); len(h) != 0 {
		t.Fatalf("set sa's delete held by the policy: %+v", h)
	}
	if h := rb.Judge(ctx, pb, 0); len(h) != 0 {
		t.Fatalf("set sb's delete held by the policy: %+v (each delete alone is within the budget)", h)
	}
	if h := ra.Admit(ctx, pa, 0); h != nil {
		t.Fatalf("set sa's spend: %+v", h)
	}
	// sb's write is refused (409: sa's spend changed the budget); the budget read again has none left
	h := rb.Admit(ctx, pb, 0)
	if h == nil || h.Reason != policy.ReasonBudgetChanged || !strings.Contains(h.Message, "no disruption left to spend (disruptionsAllowed 0)") {
		t.Fatalf("set sb's spend of the same disruption: %+v, want its delete held: the budget has none left", h)
	}
	got, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Status.DisruptedPods["sa-1"]; !ok || len(got.Status.DisruptedPods) != 1 || got.Status.DisruptionsAllowed != 0 {
		t.Fatalf("the budget after the spends: %+v, want sa-1 alone disrupted and none allowed", got.Status)
	}
	// kube-controller-manager's disruption controller takes the spend as an eviction's: sa-1, healthy and
	// not deleted, counts as disrupted.
	waitFor(t, ctx, "the disruption controller counts sa-1 as disrupted", time.Minute, func() bool {
		p, err := cfg.kc.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "db", metav1.GetOptions{})
		_, spent := p.Status.DisruptedPods["sa-1"]
		return err == nil && spent && p.Status.CurrentHealthy == 3 && p.Status.DisruptionsAllowed == 0
	})
	rb, pb = syncOf("sb")
	held := rb.Judge(ctx, pb, 0)
	if h, ok := held[0]; !ok || !strings.Contains(h.Message, "PodDisruptionBudget db allows no more disruptions") {
		t.Fatalf("set sb's next sync: holds %+v, want its delete held by the budget as it is now", held)
	}
}

// holdCondition is the set's PolicyHold condition (host/policy.ConditionPolicyHold), nil when it has none.
func holdCondition(s *appsv1.StatefulSet) *appsv1.StatefulSetCondition {
	for i := range s.Status.Conditions {
		if s.Status.Conditions[i].Type == policy.ConditionPolicyHold {
			return &s.Status.Conditions[i]
		}
	}
	return nil
}

// writeManifest writes obj as a JSON manifest into the test's temporary directory and returns its path (no
// comma in it: kubectl reads -f a,b as two files).
func writeManifest(t *testing.T, obj any) string {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "edit.json")
	if strings.Contains(f, ",") {
		t.Fatalf("the manifest's path %s has a comma, which kubectl -f reads as two files", f)
	}
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
