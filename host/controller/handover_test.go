package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// rvIndexer is an indexer whose last processed resourceVersion is set by the test.
type rvIndexer struct {
	cache.Indexer
	rv string
}

func (r *rvIndexer) LastStoreSyncResourceVersion() string { return r.rv }

func pod(ns, name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
}

// A taken shard's namespace is caught up when the informer processed an event at the read's revision or
// later, or holds exactly the read's objects; not while it lacks an object or has an older version.
func TestHandoverCaughtUp(t *testing.T) {
	store := &rvIndexer{Indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}
	read := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "100"},
		Items: []corev1.Pod{*pod("team", "db-0", "90"), *pod("team", "db-1", "95")}}
	p := newPending(cacheCheck{what: "pods", store: store}, "team", read)

	store.rv = "80"
	_ = store.Add(pod("team", "db-0", "90"))
	_ = store.Add(pod("other", "x", "60"))
	if p.done() {
		t.Error("done without db-1 (the previous owner's last create)")
	}
	_ = store.Add(pod("team", "db-1", "93"))
	if p.done() {
		t.Error("done with db-1 at an older version")
	}
	_ = store.Update(pod("team", "db-1", "95"))
	if !p.done() {
		t.Error("not done holding exactly the read's objects")
	}
	_ = store.Add(pod("team", "db-2", "101"))
	if p.done() {
		t.Error("done with an object the read lacks while the store's revision is behind it")
	}
	store.rv = "101"
	if !p.done() {
		t.Error("not done at a revision past the read's")
	}
}
