package controller

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/snapshot"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// setCache is what the controller keeps of a set between its syncs only to make the next one cheaper: the
// JSON of its objects (snapshot.EncodeCache: a sync encodes only what changed) and its module session (the
// module parses only what changed). Nothing in it changes a plan: a sync without it encodes and sends
// everything, and plans the same.
//
// It costs about as much as the informers' copy of the set's pods again, so it is kept only while the set
// is busy: dropped once the set has not synced for Config.SetCacheIdle (dropIdleSetCaches). A rollout
// syncs its set on every change of a pod, so it keeps its cache to the end; a set at rest costs its
// informer objects alone, and its next sync (an edit) encodes it once more.
type setCache struct {
	encode  snapshot.EncodeCache
	session *wasm.Session // on the module of the set's last sync (nil: none yet, or not a *wasm.Module)
	used    atomic.Int64  // the start of its last sync (unix nanoseconds)
}

// setCacheOf is the set's cache (made on its first sync, or again after it was dropped), marked used at now.
// The work queue never syncs one set on two workers at once, as both the encode cache and the session need.
func (c *Controller) setCacheOf(key string, now time.Time) *setCache {
	v, ok := c.setCaches.Load(key)
	if !ok {
		var loaded bool
		if v, loaded = c.setCaches.LoadOrStore(key, &setCache{}); !loaded {
			c.metrics.setCaches.Inc()
		}
	}
	sc := v.(*setCache)
	sc.used.Store(now.UnixNano())
	return sc
}

// reconciler is module with the set's session, where the module has sessions (a *wasm.Module: the set's
// syncs then pay to parse what changed, abi/README.md "Unchanged objects"); a module swapped in starts a
// new one.
func (sc *setCache) reconciler(module hostplan.Reconciler, snap *snapshot.Snapshot) hostplan.Reconciler {
	m, ok := module.(*wasm.Module)
	if !ok {
		return module
	}
	if sc.session == nil || sc.session.Module() != m {
		sc.session = m.NewSession()
	}
	return snap.LaidOut(sc.session)
}

// dropSetCache drops the set's cache (the set is gone, idle, or its shard given up).
func (c *Controller) dropSetCache(key string) {
	if _, ok := c.setCaches.LoadAndDelete(key); ok {
		c.metrics.setCaches.Dec()
	}
}

// dropIdleSetCaches drops the cache of every set whose last sync started before now - idle. A sync in
// flight keeps the cache it holds; the set's next sync starts a new one.
func (c *Controller) dropIdleSetCaches(now time.Time, idle time.Duration) {
	before := now.Add(-idle).UnixNano()
	c.setCaches.Range(func(key, v any) bool {
		if v.(*setCache).used.Load() < before && c.setCaches.CompareAndDelete(key, v) {
			c.metrics.setCaches.Dec()
		}
		return true
	})
}

// sweepSetCaches drops idle sets' caches every half Config.SetCacheIdle (at most once a second: each sweep
// reads every set's entry) until ctx is done (0: never).
func (m *Manager) sweepSetCaches(ctx context.Context, wg *sync.WaitGroup) {
	idle := m.cfg.SetCacheIdle
	if idle <= 0 {
		return
	}
	wg.Go(func() {
		wait.UntilWithContext(ctx, func(context.Context) {
			for _, c := range m.controllers {
				c.dropIdleSetCaches(m.now(), idle)
			}
		}, max(idle/2, time.Second))
	})
}
