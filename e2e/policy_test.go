//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The shipped handoff policy on the real control plane: a set naming it (ordinal.dev/policies: handoff)
// rolls out until the pod labelled role=primary is next; its delete is held (upstream's FailedDelete event
// carries the policy's message, the pod is not touched, the status is written), and once the operator
// removes the label the rollout finishes, with a PolicyReleased event.
func TestHandoffPolicyHoldsThePrimarysDelete(t *testing.T) {
	t.Parallel()
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
	uids := tr.uidsByName()
	mark := tr.mark()

	patchSet(t, ctx, ns, "ho", setVersion("v2"))
	waitFor(t, ctx, "a FailedDelete event for ho-1 naming the handoff policy", 2*time.Minute, func() bool {
		l, err := eventsOf(ctx, ns, "ho", "FailedDelete")
		return err == nil && len(l.Items) > 0 && strings.Contains(l.Items[0].Message, `pods "ho-1" is forbidden: policy handoff holds this write: pod ho-1 still carries role=primary`)
	})
	held := waitSet(t, ctx, ns, "ho", "the status written after the held delete: ho-2 updated", time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.UpdatedReplicas == 1 && s.Status.UpdateRevision != before.Status.UpdateRevision
	})
	samePods(t, ctx, ns, uids, "while the primary's delete is held", "ho-0", "ho-1")
	wantOrdinals(t, "pods replaced while held", ordinals(tr.stepsOf(stepTerminating, mark)), 2)

	labelPod(`{"metadata":{"labels":{"role":null}}}`)
	after := waitRolledOut(t, ctx, ns, "ho", 3)
	if after.Status.UpdateRevision != held.Status.UpdateRevision {
		t.Errorf("rolled out to %s, want %s", after.Status.UpdateRevision, held.Status.UpdateRevision)
	}
	l, err := eventsOf(ctx, ns, "ho", "PolicyReleased")
	if err != nil || len(l.Items) == 0 || !strings.Contains(l.Items[0].Message, "policy handoff no longer holds delete Pod ho-1") {
		t.Errorf("PolicyReleased events: %v %v; all events:\n%s", l, err, eventLog(ns))
	}
	wantOrdinals(t, "pods replaced", ordinals(tr.stepsOf(stepTerminating, mark)), 2, 1, 0)
	tr.checkInvariants()
}
