package kube

import corev1 "k8s.io/api/core/v1"

// PodReady is upstream's isRunningAndReady without the phase: the pod's Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
