package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/module"
	"github.com/ordinal-dev/ordinal/host/snapshot"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
)

type fakeRV struct{ rv string }

func (f *fakeRV) LastStoreSyncResourceVersion() string { return f.rv }

// storesByResource is a storeOf of one store per resource, whatever the namespace.
func storesByResource(m map[schema.GroupResource]rvGetter) storeOf {
	return func(gr schema.GroupResource, _ string) rvGetter {
		if s, ok := m[gr]; ok {
			return s
		}
		return nil
	}
}

func TestConsistencyStore(t *testing.T) {
	pods, sets := &fakeRV{"100"}, &fakeRV{"100"}
	now := time.Unix(1000, 0)
	c := newConsistencyStore(storesByResource(map[schema.GroupResource]rvGetter{
		podResource: pods, snapshot.StatefulSetTarget.GroupResource(): sets,
	}), 30*time.Second)
	c.now = func() time.Time { return now }
	owner := types.NamespacedName{Namespace: "ns", Name: "web"}

	if _, err := c.EnsureReady(owner); err != nil {
		t.Fatalf("no writes: %v", err)
	}
	c.WroteAt(owner, "uid1", podResource, "105")
	c.WroteAt(owner, "uid1", podResource, "103") // older: keeps 105
	c.WroteAt(owner, "uid1", snapshot.StatefulSetTarget.GroupResource(), "106")
	_, err := c.EnsureReady(owner)
	var se *staleError
	if !errors.As(err, &se) {
		t.Fatalf("want staleError, got %v", err)
	}
	pods.rv = "104"
	sets.rv = "200"
	if _, err := c.EnsureReady(owner); err == nil {
		t.Fatal("pods at 104 < 105: want stale")
	}
	pods.rv = "105"
	if _, err := c.EnsureReady(owner); err != nil {
		t.Fatalf("caught up: %v", err)
	}
	if c.Len() != 0 {
		t.Fatal("record not cleared once ready")
	}

	// A new owner UID (the set was recreated) replaces the old record.
	c.WroteAt(owner, "uid1", podResource, "300")
	c.WroteAt(owner, "uid2", podResource, "150")
	if _, err := c.EnsureReady(owner); err == nil {
		t.Fatal("150 > 105: want stale")
	}
	pods.rv = "150"
	if _, err := c.EnsureReady(owner); err != nil {
		t.Fatalf("uid2 record at 150: %v", err)
	}

	// Timeout: a write the informers never see stops blocking after the timeout.
	c.WroteAt(owner, "uid2", podResource, "999")
	now = now.Add(29 * time.Second)
	if exp, err := c.EnsureReady(owner); err == nil || exp {
		t.Fatalf("before timeout: expired=%v err=%v", exp, err)
	}
	now = now.Add(2 * time.Second)
	if exp, err := c.EnsureReady(owner); err == nil || !exp {
		t.Fatalf("after timeout: expired=%v err=%v", exp, err)
	}
	if _, err := c.EnsureReady(owner); err != nil {
		t.Fatalf("expired record must be gone: %v", err)
	}

	// Unknown store version ("" = AtomicFIFO off) or unparsable: cannot tell, go ahead (as upstream).
	c.WroteAt(owner, "uid2", podResource, "5000")
	pods.rv = ""
	if _, err := c.EnsureReady(owner); err != nil {
		t.Fatalf("unknown read version: %v", err)
	}
	// Clear.
	c.WroteAt(owner, "uid2", podResource, "6000")
	pods.rv = "1"
	c.Clear(owner, "other-uid")
	if c.Len() != 1 {
		t.Fatal("Clear with another uid must keep the record")
	}
	c.Clear(owner, "")
	if c.Len() != 0 {
		t.Fatal("Clear with empty uid must drop the record")
	}
}

// TestStaleSkipsDoNotGrowTheErrorBackoff: a set skipped because an informer is behind its own writes is
// retried on the stale limiter (at most staleRetryMax apart), and its skips are not counted as failures.
// Counted as failures, 20 skips while a watch was down put the next try minutes away (make chaos seed 63).
func TestStaleSkipsDoNotGrowTheErrorBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, err := loadModule(ctx, embedded.Module())
	if err != nil {
		t.Fatal(err)
	}
	ref := &module.Ref{}
	ref.Install(base, module.InfoOf(base), func() { base.Close(ctx) })
	c := newFakeController(t, ctx, ref, &fakeAPI{}, kubetest.Set())
	// a queue on a clock that never moves: delayed adds stay delayed, so each round's Add is the only copy
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Clock: clocktesting.NewFakeClock(time.Unix(0, 0))})
	defer c.queue.ShutDown()
	pods := &fakeRV{"100"}
	c.consistency.stores = storesByResource(map[schema.GroupResource]rvGetter{podResource: pods})
	c.consistency.timeout = 0
	owner := types.NamespacedName{Namespace: "ns", Name: "web"}
	c.consistency.WroteAt(owner, "set-uid", podResource, "105")

	const key = "ns/web"
	for range 20 {
		c.queue.Add(key)
		c.processNextWorkItem(ctx)
	}
	if n := c.queue.NumRequeues(key); n != 0 {
		t.Errorf("after 20 stale skips the error backoff counts %d failures, want 0", n)
	}
	if got := metricValue(c.metrics.syncs.WithLabelValues(resultStale)); got != 20 {
		t.Fatalf("stale syncs = %v, want 20 (the skips this test is about did not happen)", got)
	}
	if d := c.staleRetry.When(key); d > staleRetryMax {
		t.Errorf("next stale retry in %v, want at most %v", d, staleRetryMax)
	}

	// once the informer catches up the sync runs, and the stale limiter starts again from its floor
	pods.rv = "105"
	c.queue.Add(key)
	c.processNextWorkItem(ctx)
	if got := metricValue(c.metrics.syncs.WithLabelValues(resultStale)); got != 20 {
		t.Errorf("stale syncs = %v after the informer caught up, want still 20", got)
	}
	if n := c.staleRetry.NumRequeues(key); n != 0 {
		t.Errorf("stale limiter still counts %d skips after a sync that was not skipped", n)
	}
}
