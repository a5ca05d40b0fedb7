package kube

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// Every case is checked on the typed pod and on the same pod as generic JSON: the two must agree.
func TestPodReadiness(t *testing.T) {
	cond := func(typ corev1.PodConditionType, s corev1.ConditionStatus) corev1.PodCondition {
		return corev1.PodCondition{Type: typ, Status: s}
	}
	for _, tc := range []struct {
		name                   string
		phase                  corev1.PodPhase
		conds                  []corev1.PodCondition
		ready, runningAndReady bool
	}{
		{"no conditions", corev1.PodRunning, nil, false, false},
		{"Ready False", corev1.PodRunning, []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionFalse)}, false, false},
		{"only ContainersReady", corev1.PodRunning, []corev1.PodCondition{cond(corev1.ContainersReady, corev1.ConditionTrue)}, false, false},
		{"Ready True", corev1.PodRunning, []corev1.PodCondition{cond(corev1.PodScheduled, corev1.ConditionTrue), cond(corev1.PodReady, corev1.ConditionTrue)}, true, true},
		{"Ready True, Pending", corev1.PodPending, []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue)}, true, false},
		{"first Ready decides", corev1.PodRunning, []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionFalse), cond(corev1.PodReady, corev1.ConditionTrue)}, false, false},
	} {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: tc.phase, Conditions: tc.conds}}
		b, _ := json.Marshal(p)
		o, err := jsonobj.DecodeObj(b)
		if err != nil {
			t.Fatal(err)
		}
		if PodReady(p) != tc.ready || PodReadyJSON(o) != tc.ready {
			t.Errorf("%s: ready %v / JSON %v, want %v", tc.name, PodReady(p), PodReadyJSON(o), tc.ready)
		}
		if PodRunningAndReady(p) != tc.runningAndReady || PodRunningAndReadyJSON(o) != tc.runningAndReady {
			t.Errorf("%s: running and ready %v / JSON %v, want %v", tc.name, PodRunningAndReady(p), PodRunningAndReadyJSON(o), tc.runningAndReady)
		}
	}
}
