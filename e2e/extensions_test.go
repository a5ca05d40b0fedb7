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
