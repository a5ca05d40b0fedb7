package controller

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// Another controller is one that wrote what a controller computes into the set's status after this one
// started (and after this one last did), or created a pod as the set's since; what came before the start is
// the set's history, and a client adding a condition or a pod the set adopted are not another controller.
func TestOtherController(t *testing.T) {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(start.Add(d)); return &t }
	fields := func(raw string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(raw)} }
	// a controller's status write owns counts and revisions; a client's added condition owns that alone
	counts := fields(`{"f:status":{"f:observedGeneration":{},"f:readyReplicas":{},"f:updateRevision":{}}}`)
	condition := fields(`{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"StatusUpdate\"}":{".":{},"f:type":{}}}}}`)
	statusOf := func(manager string, d time.Duration, f *metav1.FieldsV1) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: at(d), FieldsV1: f}
	}
	status := func(manager string, d time.Duration) metav1.ManagedFieldsEntry { return statusOf(manager, d, counts) }
	asMember := fields(`{"f:metadata":{"f:labels":{},"f:ownerReferences":{".":{},"k:{\"uid\":\"set-uid\"}":{}}},"f:spec":{}}`)
	orphan := fields(`{"f:metadata":{"f:labels":{}},"f:spec":{}}`)
	set := func(mf ...metav1.ManagedFieldsEntry) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "set-uid", ManagedFields: mf}}
	}
	podOf := func(name, manager string, created time.Duration, owner types.UID, creation *metav1.FieldsV1) *corev1.Pod {
		yes := true
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: *at(created),
			OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: "web", UID: owner, Controller: &yes}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Time: at(created), FieldsV1: creation},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: at(created + time.Second)},
			}}}
	}
	pod := func(name, manager string, created time.Duration, owner types.UID) *corev1.Pod {
		return podOf(name, manager, created, owner, asMember)
	}
	adopted := podOf("web-2", "e2e.test", time.Minute, "set-uid", orphan)
	adopted.ManagedFields = append(adopted.ManagedFields, metav1.ManagedFieldsEntry{Manager: FieldManager,
		Operation: metav1.ManagedFieldsOperationUpdate, Time: at(2 * time.Minute), FieldsV1: fields(`{"f:metadata":{"f:ownerReferences":{}}}`)})
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
		{"a client adds a condition to the status since the start (upstream's Status endpoints spec)",
			set(status(FieldManager, time.Minute), statusOf("e2e.test", 2*time.Minute, condition)), nil, ""},
		{"a client's condition, then another controller's counts", set(status(FieldManager, time.Minute),
			statusOf("e2e.test", 2*time.Minute, condition), status("kube-controller-manager", 3*time.Minute)), nil, `"kube-controller-manager"`},
		{"another's status whose fields cannot be read counts", set(statusOf("kube-controller-manager", time.Minute, nil)), nil, `"kube-controller-manager"`},
		{"a pod a client created without the set as owner, adopted since", set(), []*corev1.Pod{adopted}, ""},
		{"another set's pod", set(), []*corev1.Pod{pod("db-0", "kube-controller-manager", time.Minute, "other-uid")}, ""},
	} {
		why, ok := otherController(tc.set, tc.pods, start)
		if ok != (tc.want != "") || !strings.Contains(why, tc.want) {
			t.Errorf("%s: %v %q, want %q", tc.name, ok, why, tc.want)
		}
		// the controller reads the informers' objects, their field sets trimmed: the same answer
		set, _ := snapshot.TrimManagedFields(tc.set.DeepCopy())
		var pods []*corev1.Pod
		for _, p := range tc.pods {
			trimmed, _ := snapshot.TrimManagedFields(p.DeepCopy())
			pods = append(pods, trimmed.(*corev1.Pod))
		}
		if why2, ok2 := otherController(set.(*appsv1.StatefulSet), pods, start); ok2 != ok || why2 != why {
			t.Errorf("%s, trimmed as the informers keep it: %v %q, want %v %q", tc.name, ok2, why2, ok, why)
		}
	}
}
