package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestPodReady(t *testing.T) {
	pod := func(conds ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Conditions: conds}}
	}
	if PodReady(pod()) || PodReady(pod(corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse})) ||
		PodReady(pod(corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue})) {
		t.Error("a pod without Ready=True is ready")
	}
	if !PodReady(pod(corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})) {
		t.Error("Ready=True is not ready")
	}
}
