package controller

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// BenchmarkCachedPodBytes (make bench) is the heap one cached pod costs the controller: cachedPods pods
// decoded from protobuf, as the informers receive them (every string its own copy), put through a
// transform into a store with the controller's pod indexes; B/pod is the heap after a GC, less the empty
// store's, per pod. "kcm" is kube-controller-manager's transform (managedFields dropped whole), "trim" the
// controller's before issue 34 (managedFields without their field sets), "ordinal" informerTransform. The
// pod is testdata/pod-kwok.json; "statefulset" pods are a set's, "replicaset" pods a ReplicaSet's (most of
// a cluster's pods, which the controller caches without ever syncing them).
func BenchmarkCachedPodBytes(b *testing.B) {
	kcm := func(obj any) (any, error) { obj.(*corev1.Pod).ManagedFields = nil; return obj, nil }
	transforms := []struct {
		name string
		fn   cache.TransformFunc
	}{{"kcm", kcm}, {"trim", snapshot.TrimManagedFields}, {"ordinal", informerTransform([]snapshot.Target{snapshot.StatefulSetTarget, snapshot.CRDTarget})}}
	yes := true
	owners := map[string]metav1.OwnerReference{
		"statefulset": kwokPod(b).OwnerReferences[0],
		"replicaset":  {APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5f7c9d8b6", UID: "rs-uid", Controller: &yes},
	}
	for _, owner := range []string{"statefulset", "replicaset"} {
		for _, tr := range transforms {
			b.Run(owner+"/"+tr.name, func(b *testing.B) {
				var per float64
				for b.Loop() {
					per = cachedPodBytes(b, owners[owner], tr.fn)
				}
				b.ReportMetric(per, "B/pod")
			})
		}
	}
}

const cachedPods = 2000

func cachedPodBytes(b *testing.B, owner metav1.OwnerReference, transform cache.TransformFunc) float64 {
	tmpl := kwokPod(b)
	tmpl.OwnerReferences = []metav1.OwnerReference{owner}
	wire := make([][]byte, cachedPods)
	for i := range wire {
		name := fmt.Sprintf("web-%d", i)
		if owner.Kind != "StatefulSet" {
			name = fmt.Sprintf("web-5f7c9d8b6-x%04x", i)
		}
		tmpl.Name, tmpl.UID, tmpl.ResourceVersion = name, types.UID(fmt.Sprintf("uid-%08d", i)), strconv.Itoa(1000+i)
		raw, err := tmpl.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		wire[i] = raw
	}
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{indexControllerUID: controllerUIDIndex, indexParent: parentIndex})
	before := heapAfterGC()
	for i := range wire {
		p := &corev1.Pod{}
		if err := p.Unmarshal(wire[i]); err != nil {
			b.Fatal(err)
		}
		obj, err := transform(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := store.Add(obj); err != nil {
			b.Fatal(err)
		}
	}
	after := heapAfterGC()
	if n := len(store.List()); n != cachedPods {
		b.Fatalf("store holds %d pods, want %d", n, cachedPods)
	}
	runtime.KeepAlive(store)
	runtime.KeepAlive(wire) // alive across both measures: only the cached pods differ
	return float64(int64(after)-int64(before)) / cachedPods
}

func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
