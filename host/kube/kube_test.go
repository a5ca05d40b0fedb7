package kube

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestSortNatural(t *testing.T) {
	got := []string{"web-10", "web-2", "data-web-1", "web-1", "web-02b", "web-0"}
	SortNatural(got)
	want := []string{"data-web-1", "web-0", "web-1", "web-2", "web-02b", "web-10"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

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
