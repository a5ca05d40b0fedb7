package controller

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Another controller is one that wrote the set's status after this one started (and after this one last
// did), or created a pod of the set since; what came before the start is the set's history.
func TestOtherController(t *testing.T) {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(start.Add(d)); return &t }
	status := func(manager string, d time.Duration) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: at(d)}
	}
	set := func(mf ...metav1.ManagedFieldsEntry) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "set-uid", ManagedFields: mf}}
	}
	pod := func(name, manager string, created time.Duration, owner types.UID) *corev1.Pod {
		yes := true
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: *at(created),
			OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: "web", UID: owner, Controller: &yes}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Time: at(created)},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: at(created + time.Second)},
			}}}
	}
	for _, tc := range []struct {
		name string
		set  *appsv1.StatefulSet
		pods []*corev1.Pod
		want string // "" for none
	}{
		{"kube-controller-manager's status from before the start: history", set(status("kube-controller-manager", -time.Hour)), nil, ""},
		{"our status, then kube-controller-manager's", set(status(FieldManager, time.Minute), status("kube-controller-manager", 2*time.Minute)), nil,
			`its status was written by "kube-controller-manager"`},
		{"kube-controller-manager's status, then ours (migration)", set(status("kube-controller-manager", time.Minute), status(FieldManager, 2*time.Minute)), nil, ""},
		{"the status a migration carried over since the start", set(status(MigrateFieldManager, time.Minute)), nil, ""},
		{"another's status since the start, none of ours", set(status("kube-controller-manager", time.Second)), nil, `"kube-controller-manager"`},
		{"a pod of ours", set(), []*corev1.Pod{pod("web-0", FieldManager, time.Minute, "set-uid")}, ""},
		{"a pod another manager created since the start", set(), []*corev1.Pod{pod("web-1", "kube-controller-manager", time.Minute, "set-uid")},
			`pod web-1 was created by "kube-controller-manager"`},
		{"a pod another manager created before the start", set(), []*corev1.Pod{pod("web-1", "kube-controller-manager", -time.Minute, "set-uid")}, ""},
		{"another set's pod", set(), []*corev1.Pod{pod("db-0", "kube-controller-manager", time.Minute, "other-uid")}, ""},
	} {
		why, ok := otherController(tc.set, tc.pods, start)
		if ok != (tc.want != "") || !strings.Contains(why, tc.want) {
			t.Errorf("%s: %v %q, want %q", tc.name, ok, why, tc.want)
		}
	}
}
