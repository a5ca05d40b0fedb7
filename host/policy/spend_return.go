package policy

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
)

// returnSpent gives back the disruptions spent for this set's in-place updates that are over, before the
// policies decide from the budgets: each budget of the context whose disruptedPods names a pod of the
// snapshot that was updated in place, runs its new spec (kube.InPlace: the module's own rule), is Ready, and
// whose containers started at or after the spend (the restart the disruption was spent for). The eviction
// API's disruption is over when its pod is deleted, and the disruption controller drops it then; a pod
// updated in place is never deleted, so the controller would count it disrupted for its two-minute
// timeout, and under a tight budget each pod of an in-place rollout would wait that long.
//
// The budget's status is written without those pods and with them counted healthy again, as its controller
// counts (currentHealthy up, disruptionsAllowed its currentHealthy - desiredHealthy), under the
// resourceVersion the context carries; the context's copy is replaced, so this sync's policies decide from
// it. A write that fails is left to the next sync, and the controller's timeout still returns it.
func (r *Run) returnSpent(ctx context.Context) {
	if r.Budgets == nil || r.returned {
		return
	}
	r.returned = true
	for i, raw := range r.PodDisruptionBudgets {
		var b policyv1.PodDisruptionBudget
		if json.Unmarshal(raw, &b) != nil || len(b.Status.DisruptedPods) == 0 || b.Status.ObservedGeneration < b.Generation {
			continue
		}
		next := b.DeepCopy()
		for pod, at := range b.Status.DisruptedPods {
			if r.disruptionOver(pod, at.Time) {
				delete(next.Status.DisruptedPods, pod)
				next.Status.CurrentHealthy++
			}
		}
		if len(next.Status.DisruptedPods) == len(b.Status.DisruptedPods) {
			continue
		}
		next.Status.DisruptionsAllowed = max(next.Status.CurrentHealthy-next.Status.DesiredHealthy, 0)
		got, err := r.Budgets.UpdateBudgetStatus(ctx, next)
		if err != nil || got == nil {
			continue
		}
		got = got.DeepCopy()
		got.APIVersion, got.Kind = policyv1.SchemeGroupVersion.String(), "PodDisruptionBudget"
		got.ManagedFields = nil
		if out, err := json.Marshal(got); err == nil {
			r.PodDisruptionBudgets[i] = out
		}
	}
}

// disruptionOver: the snapshot's pod of that name, spent for at spent, is one this set updated in place
// that is back: not being deleted, running its spec, Ready, its containers started since the spend (a
// budget's times are whole seconds).
func (r *Run) disruptionOver(name string, spent time.Time) bool {
	raw := r.pod(name)
	if !raw.Exists() {
		return false
	}
	var p corev1.Pod
	if json.Unmarshal([]byte(raw.Raw), &p) != nil || p.DeletionTimestamp != nil || p.Annotations[abi.AnnotationInPlaceUpdate] == "" {
		return false
	}
	v, ok := kube.InPlace(&p)
	return ok && !v.Pending && kube.PodReady(&p) && !v.LastStart.Before(spent.Truncate(time.Second))
}
