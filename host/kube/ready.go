package kube

import (
	"iter"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// The readiness rules upstream's StatefulSet controller uses (podutil.IsPodReady, isRunningAndReady),
// for the typed pods of the controller, the webhook and the plugin, and for the generic-JSON pods of
// the replay: one rule over the pod's (type, status) conditions.

// PodReady is upstream's podutil.IsPodReady: the pod's Ready condition is True.
func PodReady(p *corev1.Pod) bool { return ready(typedConditions(p)) }

// PodRunningAndReady is upstream's isRunningAndReady: phase Running and Ready.
func PodRunningAndReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && PodReady(p)
}

// PodReadyJSON is PodReady for a pod held as generic JSON.
func PodReadyJSON(p jsonobj.Obj) bool { return ready(jsonConditions(p)) }

// PodRunningAndReadyJSON is PodRunningAndReady for a pod held as generic JSON.
func PodRunningAndReadyJSON(p jsonobj.Obj) bool {
	return jsonobj.GetStr(p, "status.phase") == string(corev1.PodRunning) && PodReadyJSON(p)
}

// ready: the first condition of type Ready decides; without one the pod is not ready.
func ready(conditions iter.Seq2[string, string]) bool {
	for typ, status := range conditions {
		if typ == string(corev1.PodReady) {
			return status == string(corev1.ConditionTrue)
		}
	}
	return false
}

func typedConditions(p *corev1.Pod) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, c := range p.Status.Conditions {
			if !yield(string(c.Type), string(c.Status)) {
				return
			}
		}
	}
}

func jsonConditions(p jsonobj.Obj) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, c := range jsonobj.GetArr(p, "status.conditions") {
			if !yield(jsonobj.GetStr(c, "type"), jsonobj.GetStr(c, "status")) {
				return
			}
		}
	}
}

// PodAvailable is upstream's podutil.IsPodAvailable: Ready, and Ready for longer than minReadySeconds
// at now (strictly: a pod Ready for exactly minReadySeconds is not yet available).
func PodAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	if !PodReady(p) {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	return ReadyLongEnough(ReadySince(p, time.Time{}), minReadySeconds, now)
}

// ReadySince is when a Ready pod became Ready: its Ready condition's lastTransitionTime, or restarted if later
// (extension in-place-update: a pod the module updated in place is Ready only since its containers
// restarted, inplaceready.Verdict.LastStart). Zero when the pod has no Ready condition or its time.
func ReadySince(p *corev1.Pod, restarted time.Time) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			if c.LastTransitionTime.IsZero() {
				return time.Time{}
			}
			if restarted.After(c.LastTransitionTime.Time) {
				return restarted
			}
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// ReadyLongEnough: a pod Ready since since is available at now under minReadySeconds (PodAvailable's rule,
// strictly longer; a zero since never is).
func ReadyLongEnough(since time.Time, minReadySeconds int32, now time.Time) bool {
	return !since.IsZero() && since.Add(time.Duration(minReadySeconds)*time.Second).Before(now)
}
