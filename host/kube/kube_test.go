package kube

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// ParentAndOrdinal parses as upstream's getParentNameAndOrdinal: "(.*)-([0-9]+)$", the number an int32.
func TestParentAndOrdinal(t *testing.T) {
	for _, c := range []struct {
		name   string
		parent string
		ord    int
		ok     bool
	}{
		{"web-0", "web", 0, true},
		{"web-10", "web", 10, true},
		{"my-db-3", "my-db", 3, true},
		{"data-web-2", "data-web", 2, true},
		{"web-007", "web", 7, true},
		{"web-2147483647", "web", 2147483647, true},
		{"web-2147483648", "web", -1, false}, // beyond int32: upstream's ParseInt fails, ordinal -1
		{"web", "", -1, false},
		{"web-", "", -1, false},
		{"web-x", "", -1, false},
		{"web-+1", "", -1, false},
		{"web--1", "web-", 1, true}, // the pattern's greedy (.*) keeps the first dash in the parent
		{"-1", "", 1, true},         // (.*) may be empty: upstream reads parent "" and ordinal 1
		{"web-1a", "", -1, false},
		{"1", "", -1, false},
	} {
		p, o, ok := ParentAndOrdinal(c.name)
		if ok && p != c.parent || o != c.ord || ok != c.ok {
			t.Errorf("%q: (%q, %d, %v), want (%q, %d, %v)", c.name, p, o, ok, c.parent, c.ord, c.ok)
		}
	}
	if o, ok := OrdinalOf("web-3", "web"); !ok || o != 3 {
		t.Error("OrdinalOf(web-3, web)")
	}
	if _, ok := OrdinalOf("webx-3", "web"); ok {
		t.Error("OrdinalOf(webx-3, web) accepted another set's pod")
	}
}

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
