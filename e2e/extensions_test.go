//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The pause extension on the real control plane, chosen per set (ordinal.dev/module: extended): a paused
// set's template edit makes a new revision and no pod change; moving the set back to the active (faithful)
// module mid-rollout, with the pause annotation still on it, lets the rollout finish.
func TestPauseExtensionPerSet(t *testing.T) {
	t.Parallel()
	requireController(t)
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	c := startController(t, ns, ctrlOpts{})
	c.waitReady(ctx)
	tr := trackPods(t, ctx, ns, "pz", true)
	set := newSet("pz", 3)
	set.Annotations = map[string]string{"ordinal.dev/module": "extended"}
	createSet(t, ctx, ns, set)
	before := waitRolledOut(t, ctx, ns, "pz", 3)
	uids := tr.uidsByName()

	mark := tr.mark()
	patchSet(t, ctx, ns, "pz", `{"metadata":{"annotations":{"ordinal.dev/paused":"true"}},"spec":{"template":{"metadata":{"annotations":{"`+annVersion+`":"v2"}}}}}`)
	paused := waitSet(t, ctx, ns, "pz", "the edit observed, nothing updated (paused)", time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.UpdateRevision != before.Status.UpdateRevision && s.Status.UpdatedReplicas == 0
	})
	waitFor(t, ctx, "a Paused event on pz", time.Minute, func() bool {
		l, err := cfg.kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=Paused,involvedObject.name=pz"})
		return err == nil && len(l.Items) > 0 && strings.Contains(l.Items[0].Message, "no pod is created, deleted or updated")
	})
	// The sync that wrote that status issued every write it planned before it: no pod was touched.
	samePods(t, ctx, ns, uids, "while paused", "pz-0", "pz-1", "pz-2")
	wantNoPodChange(t, tr, mark)
	if paused.Status.CurrentRevision != before.Status.CurrentRevision || paused.Status.CurrentReplicas != 3 {
		t.Errorf("paused status: %s", statusString(paused))
	}

	// Back to the active module mid-rollout: the faithful module knows no pause, and rolls the set out.
	patchSet(t, ctx, ns, "pz", `{"metadata":{"annotations":{"ordinal.dev/module":null}}}`)
	after := waitRolledOut(t, ctx, ns, "pz", 3)
	if after.Status.UpdateRevision != paused.Status.UpdateRevision {
		t.Errorf("the rollout made another revision: %s, paused at %s", after.Status.UpdateRevision, paused.Status.UpdateRevision)
	}
	tr.checkInvariants()
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 2, 1, 0)
}

// The forced-rollback trap of kubernetes/kubernetes#67250 on the real control plane, and the
// recover-stuck extension's way out: a revision whose pod never becomes Ready stops the rollout at the
// top ordinal; reverting the template makes the old revision the update revision again, and upstream would
// wait forever for the stuck pod. With ordinal.dev/recover-stuck-after the extended module deletes it once it
// has not been Ready for that long, it comes back at the old revision, and the set is rolled out.
func TestRecoverStuckExtension(t *testing.T) {
	t.Parallel()
	requireController(t)
	ctx := testContext(t)
	ns := newNamespace(t, ctx)
	c := startController(t, ns, ctrlOpts{})
	c.waitReady(ctx)
	tr := trackPods(t, ctx, ns, "st", true)
	set := newSet("st", 3)
	set.Annotations = map[string]string{"ordinal.dev/module": "extended", "ordinal.dev/recover-stuck-after": "2s"}
	createSet(t, ctx, ns, set)
	good := waitRolledOut(t, ctx, ns, "st", 3)
	uids := tr.uidsByName()

	patchSet(t, ctx, ns, "st", `{"spec":{"template":{"metadata":{"annotations":{"`+annVersion+`":"v2","`+annNeverReady+`":"true"}}}}}`)
	waitSet(t, ctx, ns, "st", "stuck: st-2 at the bad revision, not Ready", time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.UpdatedReplicas == 1 && s.Status.UpdateRevision != good.Status.UpdateRevision
	})
	mark := tr.mark()
	patchSet(t, ctx, ns, "st", `{"spec":{"template":{"metadata":{"annotations":{"`+annVersion+`":"v1","`+annNeverReady+`":null}}}}}`)
	after := waitRolledOut(t, ctx, ns, "st", 3)
	if after.Status.UpdateRevision != good.Status.UpdateRevision {
		t.Errorf("rolled out to %s, want the reverted template's revision %s", after.Status.UpdateRevision, good.Status.UpdateRevision)
	}
	l, err := cfg.kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=RecoveredStuckPod,involvedObject.name=st"})
	if err != nil || len(l.Items) != 1 || !strings.Contains(l.Items[0].Message, "st-2") {
		t.Errorf("RecoveredStuckPod events: %v %v; all events:\n%s", l, err, eventLog(ns))
	}
	wantOrdinals(t, "pods replaced after the revert", ordinals(tr.stepsOf(stepTerminating, mark)), 2)
	samePods(t, ctx, ns, uids, "the pods that were never stuck", "st-0", "st-1")
	tr.checkInvariants()
}
