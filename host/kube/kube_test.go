package kube

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

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

// Upstream's IsPodAvailable: Ready for strictly longer than minReadySeconds; 0 needs only Ready.
func TestPodAvailable(t *testing.T) {
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(s corev1.ConditionStatus, at time.Time) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: s, LastTransitionTime: metav1.NewTime(at)}}}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		min  int32
		now  time.Time
		want bool
	}{
		{"ready, no minReadySeconds", pod(corev1.ConditionTrue, since), 0, since, true},
		{"not ready", pod(corev1.ConditionFalse, since), 0, since.Add(time.Hour), false},
		{"ready for less", pod(corev1.ConditionTrue, since), 10, since.Add(9 * time.Second), false},
		{"ready for exactly minReadySeconds", pod(corev1.ConditionTrue, since), 10, since.Add(10 * time.Second), false},
		{"ready for longer", pod(corev1.ConditionTrue, since), 10, since.Add(11 * time.Second), true},
		{"no transition time", pod(corev1.ConditionTrue, time.Time{}), 10, since, false},
	} {
		if got := PodAvailable(tc.pod, tc.min, tc.now); got != tc.want {
			t.Errorf("%s: available %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Upstream's getStatefulSetMaxUnavailable: an integer, or a percentage of replicas rounded down; never
// below 1; 1 when unset or unreadable.
func TestMaxUnavailable(t *testing.T) {
	i, s := intstr.FromInt32, intstr.FromString
	for _, tc := range []struct {
		v        *intstr.IntOrString
		replicas int32
		want     int
	}{
		{nil, 10, 1}, {ptr(i(3)), 10, 3}, {ptr(s("25%")), 10, 2}, {ptr(s("10%")), 5, 1}, {ptr(i(0)), 10, 1}, {ptr(s("abc")), 10, 1},
	} {
		if got := MaxUnavailable(tc.v, tc.replicas); got != tc.want {
			t.Errorf("MaxUnavailable(%v, %d) = %d, want %d", tc.v, tc.replicas, got, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
