package controller

import (
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// A set migrated (deleted with orphan propagation, created again under its name) whose caches have not yet
// seen the garbage collector orphan its predecessor's objects: its first sync waits (chaos seeds 16, 156).
func TestAwaitPredecessor(t *testing.T) {
	labels := map[string]string{"app": "web"}
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "new", ResourceVersion: "200"},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	yes := true
	ownedBy := func(apiVersion, name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: "StatefulSet", Name: name, UID: uid, Controller: &yes}}
	}
	pod := func(refs []metav1.OwnerReference, l map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0", Labels: l, OwnerReferences: refs}}
	}
	rev := func(refs []metav1.OwnerReference) *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-6d4f9c", Labels: labels, OwnerReferences: refs}}
	}

	cases := []struct {
		name  string
		cands snapshot.Objects
		hold  schema.GroupResource // zero: goes ahead
	}{
		{"nothing of another set", snapshot.Objects{Pods: []*corev1.Pod{pod(ownedBy("apps/v1", "web", "new"), labels), pod(nil, labels)}}, schema.GroupResource{}},
		{"a pod of the replaced set", snapshot.Objects{Pods: []*corev1.Pod{pod(ownedBy("apps/v1", "web", "old"), labels)}}, podResource},
		{"a revision of the replaced set, other group", snapshot.Objects{Revisions: []*appsv1.ControllerRevision{rev(ownedBy("ordinal.dev/v1", "web", "old"))}}, revisionResource},
		{"a pod of another set's name", snapshot.Objects{Pods: []*corev1.Pod{pod(ownedBy("apps/v1", "web-0", "old"), labels)}}, schema.GroupResource{}},
		{"a pod the set does not select", snapshot.Objects{Pods: []*corev1.Pod{pod(ownedBy("apps/v1", "web", "old"), map[string]string{"app": "db"})}}, schema.GroupResource{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pods, revs := &fakeRV{"150"}, &fakeRV{"150"} // both behind the set's 200
			now := time.Unix(1000, 0)
			c := &Controller{shared: &shared{cfg: Config{StaleTimeout: 30 * time.Second}, now: func() time.Time { return now }}}
			c.consistency = newConsistencyStore(storesByResource(map[schema.GroupResource]rvGetter{podResource: pods, revisionResource: revs}), 0)
			err := c.awaitPredecessor(klog.Background(), "ns/web", set, tc.cands)
			if tc.hold.Empty() {
				if err != nil {
					t.Fatalf("held: %v", err)
				}
				return
			}
			var se *staleError
			if !errors.As(err, &se) || se.Resource != tc.hold || !strings.Contains(err.Error(), "the set this one replaced") {
				t.Fatalf("want a stale skip on %v, got %v", tc.hold, err)
			}
			// Still held at 199; at the set's own resourceVersion the cache is as current as the set: go ahead.
			pods.rv, revs.rv = "199", "199"
			if err := c.awaitPredecessor(klog.Background(), "ns/web", set, tc.cands); err == nil {
				t.Fatal("went ahead at 199 < 200")
			}
			pods.rv, revs.rv = "200", "200"
			if err := c.awaitPredecessor(klog.Background(), "ns/web", set, tc.cands); err != nil {
				t.Fatalf("caught up, still held: %v", err)
			}
			// Only the first sync: behind again later, it goes ahead.
			pods.rv, revs.rv = "150", "150"
			if err := c.awaitPredecessor(klog.Background(), "ns/web", set, tc.cands); err != nil {
				t.Fatalf("held after the first sync went ahead: %v", err)
			}
			// The set replaced again (a new uid): checked again; past --stale-timeout it goes ahead anyway.
			again := set.DeepCopy()
			again.UID = "newer"
			if err := c.awaitPredecessor(klog.Background(), "ns/web", again, tc.cands); err == nil {
				t.Fatal("a new uid went ahead without the check")
			}
			now = now.Add(31 * time.Second)
			if err := c.awaitPredecessor(klog.Background(), "ns/web", again, tc.cands); err != nil {
				t.Fatalf("held past the stale timeout: %v", err)
			}
		})
	}

	// The orphaning seen (the pod has no controller any more): no wait even while the informer is behind.
	c := &Controller{shared: &shared{cfg: Config{StaleTimeout: 30 * time.Second}, now: time.Now}}
	c.consistency = newConsistencyStore(storesByResource(map[schema.GroupResource]rvGetter{podResource: &fakeRV{"1"}}), 0)
	if err := c.awaitPredecessor(klog.Background(), "ns/web", set, snapshot.Objects{Pods: []*corev1.Pod{pod(nil, labels)}}); err != nil {
		t.Fatalf("orphaned pods held the sync: %v", err)
	}
}
