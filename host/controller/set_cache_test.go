package controller

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/module"
)

// A set's cache (its objects' JSON and module session) is kept while it syncs and dropped once it has not
// synced for the idle time: the next sync starts a new one, sends the module the whole snapshot again, and
// writes what it would have written with the cache.
func TestSetCacheIdle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := loadModule(ctx, embedded.Module())
	if err != nil {
		t.Fatal(err)
	}
	ref := &module.Ref{}
	ref.Install(m, module.InfoOf(m), func() { m.Close(ctx) })
	o := rolloutObjects(3) // a template edit: the sync writes a revision, deletes a pod, writes status
	objs := []runtime.Object{o.Set, o.Revisions[0]}
	for _, p := range o.Pods {
		objs = append(objs, p)
	}
	api := &fakeAPI{}
	c := newFakeController(t, ctx, ref, api, objs...)
	now := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	const idle = time.Minute

	// sync runs one sync and returns its requests and the set's cache. The fake API server's answers never
	// reach the informers: each sync plans from the same objects, so plans the same writes.
	sync := func() ([]recorded, *setCache) {
		t.Helper()
		api.mu.Lock()
		api.reqs = nil
		api.mu.Unlock()
		c.consistency.Clear(types.NamespacedName{Namespace: "ns", Name: "web"}, "")
		if _, err := c.sync(ctx, "ns/web"); err != nil {
			t.Fatal(err)
		}
		v, ok := c.setCaches.Load("ns/web")
		if !ok {
			t.Fatal("no cache kept after the set's sync")
		}
		api.mu.Lock()
		defer api.mu.Unlock()
		return api.reqs, v.(*setCache)
	}
	kept := func() float64 { return metricValue(c.metrics.setCaches) }

	first, sc := sync()
	if len(first) == 0 {
		t.Fatal("the sync of an edited set wrote nothing")
	}
	if st := sc.session.Stats(); st.Calls != 1 || st.Whole != 1 || kept() != 1 {
		t.Fatalf("first sync: session %+v, ordinal_set_caches %v", st, kept())
	}

	now = now.Add(idle / 2)
	c.dropIdleSetCaches(now, idle)
	second, again := sync()
	if again != sc || sc.session.Stats().Calls != 2 || sc.session.Stats().References == 0 {
		t.Fatalf("synced %s ago, within %s: cache kept %v, session %+v", idle/2, idle, again == sc, sc.session.Stats())
	}
	if !slices.Equal(first, second) {
		t.Fatalf("with the cache, the sync wrote\n%v\nwithout it\n%v", second, first)
	}

	now = now.Add(idle) // the last sync started exactly idle ago: kept until a moment later
	c.dropIdleSetCaches(now.Add(-time.Nanosecond), idle)
	if _, ok := c.setCaches.Load("ns/web"); !ok {
		t.Fatal("dropped a set that synced exactly the idle time ago")
	}
	c.dropIdleSetCaches(now.Add(time.Nanosecond), idle)
	if _, ok := c.setCaches.Load("ns/web"); ok || kept() != 0 {
		t.Fatalf("idle for longer than %s: cache kept %v, ordinal_set_caches %v", idle, ok, kept())
	}

	third, fresh := sync()
	if fresh == sc || fresh.session.Stats().Calls != 1 || fresh.session.Stats().Whole != 1 || kept() != 1 {
		t.Fatalf("the sync after the drop: new cache %v, session %+v, ordinal_set_caches %v", fresh != sc, fresh.session.Stats(), kept())
	}
	if !slices.Equal(first, third) {
		t.Fatalf("after the drop, the sync wrote\n%v\nwith a fresh cache before\n%v", third, first)
	}

	// The set is gone: its cache goes with it.
	c.dropSetCache("ns/web")
	c.dropSetCache("ns/web")
	if kept() != 0 {
		t.Fatalf("ordinal_set_caches %v after the set's cache was dropped twice", kept())
	}
}
