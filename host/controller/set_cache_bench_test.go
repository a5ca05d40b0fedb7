package controller

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// BenchmarkSetCacheBytes is the heap a busy set's cache (set_cache.go) keeps per pod beside the informers'
// copy (BenchmarkCachedPodBytes): each pod's JSON and digest (snapshot.EncodeCache) and what the set's
// module session holds of it, for 100 sets of 10 of the kwok pods of make bench-scale, after one sync
// each. A set idle for --set-cache-idle keeps none of it.
func BenchmarkSetCacheBytes(b *testing.B) {
	ctx := context.Background()
	m, err := wasm.Load(ctx, embedded.Module(), wasm.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(ctx)
	const sets, perSet = 100, 10
	now := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	worlds := make([]snapshot.Objects, sets)
	for i := range worlds {
		worlds[i] = rolloutObjects(perSet)
		for j, p := range worlds[i].Pods {
			kp := kwokPod(b)
			kp.ObjectMeta = p.ObjectMeta
			kp.UID = types.UID(fmt.Sprintf("pod-%d-%d", i, j))
			worlds[i].Pods[j] = kp
		}
	}
	var perPod, jsonPerPod float64
	for b.Loop() {
		before := heapAfterGC()
		caches := make([]*setCache, sets)
		jsonBytes := 0
		for i := range caches {
			caches[i] = &setCache{}
			snap, err := caches[i].encode.Build(worlds[i], snapshot.StatefulSetTarget, now, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := caches[i].reconciler(m, snap).Reconcile(ctx, snap.JSON); err != nil {
				b.Fatal(err)
			}
			for _, p := range worlds[i].Pods {
				raw, _ := snap.Object("Pod", p.Name)
				jsonBytes += len(raw)
			}
		}
		after := heapAfterGC()
		runtime.KeepAlive(caches)
		perPod = float64(int64(after)-int64(before)) / (sets * perSet)
		jsonPerPod = float64(jsonBytes) / (sets * perSet)
	}
	runtime.KeepAlive(worlds)
	b.ReportMetric(perPod, "B/pod")
	b.ReportMetric(jsonPerPod, "json-B/pod")
}
