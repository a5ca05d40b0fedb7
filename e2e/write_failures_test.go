//go:build e2e

package e2e

// Writes the real kube-apiserver refuses (abi/README.md, "Writes that failed"). Upstream's sync goes on after
// a refused write: the rest of its slow-start batch, and the set's status ("make sure to update the latest
// status even if there is an error"). The controller reports the refusal to its module and carries out the
// rest of the sync the module plans with it; conformance group write-failures holds those plans to
// upstream's.

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A ResourceQuota of two pods refuses the third pod of a Parallel set of four ("exceeded quota"): the status
// still says what exists (2 replicas, both Ready), each refusal is a FailedCreate event, and once the quota
// is raised the set completes. Before the applier asked its module again, it stopped at the refused create
// and never wrote the status.
func TestStatusAfterARefusedWrite(t *testing.T) {
	t.Parallel()
	ctx, ns, c, tr := begin(t, "quota", false)
	quotas := cfg.kc.CoreV1().ResourceQuotas(ns)
	q, err := quotas.Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// kube-apiserver admits pods against a quota only once the quota controller has filled in its status
	waitFor(t, ctx, "the quota controller to observe the quota", time.Minute, func() bool {
		got, err := quotas.Get(ctx, q.Name, metav1.GetOptions{})
		return err == nil && got.Status.Hard.Pods().Value() == 2
	})

	createSet(t, ctx, ns, newSet("quota", 4, parallel))
	s := waitSet(t, ctx, ns, "quota", "a status of 2 Ready replicas while the other 2 are refused", 2*time.Minute, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration >= s.Generation && s.Status.Replicas == 2 && s.Status.ReadyReplicas == 2 && s.Status.UpdateRevision != ""
	})
	t.Logf("status with the quota exhausted: %s", statusString(s))
	refused, err := eventsOf(ctx, ns, "quota", "FailedCreate")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range refused.Items {
		found = found || ev.Type == corev1.EventTypeWarning && strings.Contains(ev.Message, "exceeded quota")
	}
	if !found {
		t.Fatalf("no Warning FailedCreate event naming the quota; events: %s", eventLog(ns))
	}
	if l, err := cfg.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=quota"}); err != nil {
		t.Fatal(err)
	} else if len(l.Items) != 2 {
		t.Fatalf("%d pods exist with a quota of 2: %s", len(l.Items), podsNow(ns))
	}

	q, err = quotas.Get(ctx, q.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard[corev1.ResourcePods] = resource.MustParse("4")
	if _, err := quotas.Update(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRolledOut(t, ctx, ns, "quota", 4)
	failed := false
	for _, l := range c.logLines("exceeded quota") {
		failed = failed || strings.Contains(l, "Sync failed")
	}
	if !failed {
		t.Errorf("the controller logged no failed sync naming the quota")
	}
	tr.checkInvariants()
}
