package controller

import (
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// Revision events (a trigger beyond upstream) do not enqueue a set being deleted: resyncing it when the
// garbage collector deletes its revisions would create them again and hold a foreground deletion
// forever. A pod's deletion still enqueues it, as upstream; a live set's revision events enqueue it.
func TestRevisionEventsSkipADeletingSet(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	now := metav1.Now()
	live := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "live", Namespace: "ns", UID: "u-live"}}
	deleting := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "deleting", Namespace: "ns", UID: "u-deleting", DeletionTimestamp: &now}}
	for _, s := range []*appsv1.StatefulSet{live, deleting} {
		if err := idx.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer q.ShutDown()
	all := &cacheGroup{setListers: map[schema.GroupResource]appslisters.StatefulSetLister{
		snapshot.StatefulSetTarget.GroupResource(): appslisters.NewStatefulSetLister(idx)}}
	c := &Controller{shared: &shared{caches: &caches{all: all}}, target: snapshot.StatefulSetTarget, queue: q}
	owned := func(s *appsv1.StatefulSet) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: s.Name + "-x", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "StatefulSet", Name: s.Name, UID: s.UID, Controller: ptr.To(true)}}}
	}
	drain := func() []string { // the queue holds a key once however often it was added
		var got []string
		for q.Len() > 0 {
			k, _ := q.Get()
			got = append(got, k)
			q.Done(k)
		}
		sort.Strings(got)
		return got
	}
	c.deleteOwned(&appsv1.ControllerRevision{ObjectMeta: owned(deleting)})
	c.enqueueOwnerOrMatching(&appsv1.ControllerRevision{ObjectMeta: owned(deleting)})
	c.deleteOwned(cache.DeletedFinalStateUnknown{Key: "ns/deleting-x", Obj: &appsv1.ControllerRevision{ObjectMeta: owned(deleting)}})
	if got := drain(); len(got) != 0 {
		t.Errorf("revision events enqueued %v", got)
	}
	c.deleteOwned(&corev1.Pod{ObjectMeta: owned(deleting)})
	c.deleteOwned(&appsv1.ControllerRevision{ObjectMeta: owned(live)})
	if got := drain(); len(got) != 2 || got[0] != "ns/deleting" || got[1] != "ns/live" {
		t.Errorf("enqueued %v, want ns/deleting (its pod's deletion) and ns/live (its revision's)", got)
	}
}
