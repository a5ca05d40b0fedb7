package kube

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// Issue 32, finding 6: the set's pods are those upstream's controller claims (controlled by the set, or
// orphans it adopts) named <set>-<ordinal>; the typed and the JSON reading agree.
func TestMembersAreTheSetsClaimedPods(t *testing.T) {
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "set-uid"},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	yes, no := true, false
	owner := func(uid types.UID, controller *bool) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", UID: uid, Controller: controller}}
	}
	mine, theirs := owner("set-uid", &yes), owner("other-uid", &yes)
	now := metav1.Now()
	for _, tc := range []struct {
		name     string
		labels   map[string]string
		refs     []metav1.OwnerReference
		deleting bool
		ordinal  int
		member   bool
	}{
		{"web-2", map[string]string{"app": "web"}, mine, false, 2, true},
		{"web-0", map[string]string{"app": "web"}, nil, false, 0, true},                   // an orphan: adopted
		{"web-0", map[string]string{"app": "web"}, owner("set-uid", &no), false, 0, true}, // a reference that is not a controller's
		{"web-0", map[string]string{"app": "web"}, nil, true, 0, false},                   // a terminating orphan is not adopted
		{"web-0", map[string]string{"app": "web"}, mine, true, 0, true},                   // the set's own, terminating
		{"web-1", map[string]string{"app": "web"}, theirs, false, 0, false},               // another controller's
		{"web-1", map[string]string{"app": "db"}, mine, false, 0, false},                  // released: the selector no longer matches
		{"web-1", nil, nil, false, 0, false},
		{"db-0", map[string]string{"app": "web"}, nil, false, 0, false},
		{"db-0", map[string]string{"app": "web"}, mine, false, 0, false},
		{"web--1", map[string]string{"app": "web"}, nil, false, 0, false},
		{"web-99999999999999999999", map[string]string{"app": "web"}, mine, false, 0, false}, // ordinal -1: ignored by the sync
		{"web", map[string]string{"app": "web"}, mine, false, 0, false},
	} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: "default", Labels: tc.labels, OwnerReferences: tc.refs}}
		if tc.deleting {
			p.DeletionTimestamp = &now
		}
		o, ok := MembersOf(set).Pod(p)
		oj, okj := MembersOfJSON(jsonObj(t, set)).PodJSON(jsonObj(t, p))
		if ok != tc.member || ok && o != tc.ordinal || okj != ok || oj != o {
			t.Errorf("%s %v %v deleting=%v: typed (%d, %v), JSON (%d, %v); want (%d, %v)", tc.name, tc.labels, tc.refs, tc.deleting, o, ok, oj, okj, tc.ordinal, tc.member)
		}
	}
	deleting := set.DeepCopy()
	deleting.DeletionTimestamp = &now
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", Labels: map[string]string{"app": "web"}}}
	if _, ok := MembersOf(deleting).Pod(orphan); ok {
		t.Error("a set being deleted adopts no orphan")
	}
}

func jsonObj(t *testing.T, v any) jsonobj.Obj {
	t.Helper()
	o, err := jsonobj.DecodeObj(kubetest.JSON(t, v))
	if err != nil {
		t.Fatal(err)
	}
	return o
}
