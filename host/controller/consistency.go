package controller

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// The consistency store is this host's version of upstream's (v1.36+,
// StaleControllerConsistencyStatefulSet, pkg/controller/util/consistency): after
// each successful write the controller records, for the set that caused it, the
// resourceVersion the API server returned, per resource. Before the next sync
// of that set it compares each recorded version with the version the informer's
// store has processed (cache.Store.LastStoreSyncResourceVersion, client-go's
// AtomicFIFO); while any informer is behind, the sync is skipped and the set
// requeued with backoff. So a sync never plans from a cache that lacks the
// controller's own earlier writes (the pod it just created, the status it just
// wrote), which is what would otherwise make it create or delete twice.
//
// Differences from upstream: it also tracks ControllerRevisions and deletes
// (the DELETE response carries the deletion's resourceVersion), and a record
// older than the timeout is dropped with a warning, so a lost watch event or a
// write the informers cannot see (an object outside --selector) delays a set
// by at most the timeout instead of wedging it.

// rvGetter is what an informer's store offers (cache.Store implements it).
type rvGetter interface {
	LastStoreSyncResourceVersion() string
}

// storeOf returns the store of resource gr's informer caching namespace ns (nil: none).
type storeOf func(gr schema.GroupResource, ns string) rvGetter

type consistencyStore struct {
	mu      sync.Mutex
	stores  storeOf
	writes  map[types.NamespacedName]*writeRecord
	timeout time.Duration
	now     func() time.Time
}

type writeRecord struct {
	ownerUID types.UID
	first    time.Time // oldest write still waited for
	versions map[schema.GroupResource]string
}

// staleError says the sync was skipped because an informer is behind.
type staleError struct {
	Resource      schema.GroupResource
	Wrote, ReadAt string
	// Replaced, when set, names the object the cache still shows controlled by the set this one replaced
	// (awaitPredecessor): then Wrote is the set's own resourceVersion, not a write of the controller.
	Replaced string
}

func (e *staleError) Error() string {
	if e.Replaced != "" {
		return fmt.Sprintf("informer for %s still shows %s controlled by the set this one replaced and has seen resourceVersion %q, not yet the set's %q",
			e.Resource, e.Replaced, e.ReadAt, e.Wrote)
	}
	return fmt.Sprintf("informer for %s has seen resourceVersion %q, not yet the controller's write at %q", e.Resource, e.ReadAt, e.Wrote)
}

func newConsistencyStore(stores storeOf, timeout time.Duration) *consistencyStore {
	return &consistencyStore{stores: stores, writes: map[types.NamespacedName]*writeRecord{}, timeout: timeout, now: time.Now}
}

// WroteAt records a write for owner at resourceVersion rv of resource gr.
func (c *consistencyStore) WroteAt(owner types.NamespacedName, ownerUID types.UID, gr schema.GroupResource, rv string) {
	if rv == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.writes[owner]
	if r == nil || r.ownerUID != ownerUID {
		r = &writeRecord{ownerUID: ownerUID, first: c.now(), versions: map[schema.GroupResource]string{}}
		c.writes[owner] = r
	}
	if old, ok := r.versions[gr]; ok {
		if cmp, err := resourceversion.CompareResourceVersion(old, rv); err == nil && cmp >= 0 {
			return
		}
	}
	r.versions[gr] = rv
}

// Clear forgets owner's writes (uid "" = whatever the uid).
func (c *consistencyStore) Clear(owner types.NamespacedName, ownerUID types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.writes[owner]; r != nil && (ownerUID == "" || r.ownerUID == ownerUID) {
		delete(c.writes, owner)
	}
}

// forget drops the writes of the sets whose namespace drop says.
func (c *consistencyStore) forget(drop func(ns string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for owner := range c.writes {
		if drop(owner.Namespace) {
			delete(c.writes, owner)
		}
	}
}

// EnsureReady returns nil when every informer has processed owner's recorded
// writes (and forgets them), a *staleError otherwise. expired is true when the
// record was older than the timeout and was dropped instead: the caller goes
// ahead and logs it.
func (c *consistencyStore) EnsureReady(owner types.NamespacedName) (expired bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.writes[owner]
	if r == nil {
		return false, nil
	}
	for gr, wrote := range r.versions {
		read, behind := c.behind(gr, owner.Namespace, wrote)
		if !behind {
			continue
		}
		if c.timeout > 0 && c.now().Sub(r.first) > c.timeout {
			delete(c.writes, owner)
			return true, &staleError{Resource: gr, Wrote: wrote, ReadAt: read}
		}
		return false, &staleError{Resource: gr, Wrote: wrote, ReadAt: read}
	}
	delete(c.writes, owner)
	return false, nil
}

// Behind reports whether the informer of gr caching namespace ns has not yet processed resourceVersion rv,
// and what it has.
func (c *consistencyStore) Behind(gr schema.GroupResource, ns, rv string) (read string, behind bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.behind(gr, ns, rv)
}

func (c *consistencyStore) behind(gr schema.GroupResource, ns, rv string) (read string, behind bool) {
	store := c.stores(gr, ns)
	if store == nil {
		return "", false
	}
	read, seen, known := processed(store, rv)
	return read, known && !seen
}

// processed reports whether store has processed resourceVersion rv, and what it has processed; known is
// false when it cannot tell (nothing processed yet or AtomicFIFO off, as upstream; rv not comparable).
// The one comparison of an informer with a resourceVersion: the consistency store's and the handover's.
func processed(store rvGetter, rv string) (read string, seen, known bool) {
	read = store.LastStoreSyncResourceVersion()
	if read == "" {
		return read, false, false
	}
	cmp, err := resourceversion.CompareResourceVersion(rv, read)
	return read, err == nil && cmp <= 0, err == nil
}

// Len is the number of sets with writes waited for (a metric).
func (c *consistencyStore) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.writes)
}
