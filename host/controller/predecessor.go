package controller

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// A set deleted with propagationPolicy=Orphan and created again under its name (`kubectl ordinal migrate`
// does this, so can a user) takes over its predecessor's pods and revisions once the garbage collector has
// removed their owner references, which it does before the old set is gone, so before the new one exists.
// A cache that has not yet seen those removals shows them still controlled by the old set: a sync from it
// ignores them, sees no history and numbers the new revision 1 (found by make chaos, seeds 16 and 156:
// the fault proxy delayed the watches). So a set's first sync waits until either its caches show nothing
// it selects controlled by another set of its name, or the informer of what they still show has processed
// the set's own resourceVersion (then the cache is as current as the set: those objects really are the
// other set's, e.g. a background deletion in progress, and the sync goes ahead as upstream's would).
// Bounded by --stale-timeout, as the consistency store's waits are.

// predecessorWait is a set's first-sync check (by key): its uid, since when it waits, and whether it passed.
type predecessorWait struct {
	uid    types.UID
	since  time.Time
	passed bool
}

// awaitPredecessor returns a *staleError while the set's first sync must wait (see above), nil once it
// may go ahead (then never again for this uid).
func (c *Controller) awaitPredecessor(logger klog.Logger, key string, set *appsv1.StatefulSet, cands snapshot.Objects) error {
	w, _ := c.predecessors.Load(key)
	wait, _ := w.(*predecessorWait)
	if wait != nil && wait.uid == set.UID && wait.passed {
		return nil
	}
	if wait == nil || wait.uid != set.UID {
		wait = &predecessorWait{uid: set.UID, since: c.now()}
		c.predecessors.Store(key, wait) // the work queue syncs a key on one worker at a time
	}
	if gr, name, found := predecessorObject(set, cands); found {
		if read, behind := c.consistency.Behind(gr, set.Namespace, set.ResourceVersion); behind {
			err := &staleError{Resource: gr, Wrote: set.ResourceVersion, ReadAt: read, Replaced: name}
			if c.cfg.StaleTimeout <= 0 || c.now().Sub(wait.since) <= c.cfg.StaleTimeout {
				return err
			}
			logger.Info("Gave up waiting for the informers to observe the replaced set's orphaning; syncing anyway",
				"set", key, "timeout", c.cfg.StaleTimeout.String(), "reason", err.Error())
		}
	}
	wait.passed = true
	return nil
}

// predecessorObject finds, among the candidates of set's snapshot, a pod or revision the set selects that
// is controlled by another StatefulSet (either group) of the set's name: its resource and name.
func predecessorObject(set *appsv1.StatefulSet, cands snapshot.Objects) (schema.GroupResource, string, bool) {
	sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil || sel.Empty() {
		return schema.GroupResource{}, "", false
	}
	replaced := func(m metav1.Object) bool {
		ref := metav1.GetControllerOfNoCopy(m)
		return ref != nil && ref.Kind == "StatefulSet" && ref.Name == set.Name && ref.UID != set.UID &&
			sel.Matches(labels.Set(m.GetLabels()))
	}
	for _, p := range cands.Pods {
		if replaced(p) {
			return podResource, "pod " + p.Name, true
		}
	}
	for _, r := range cands.Revisions {
		if replaced(r) {
			return revisionResource, "controllerrevision " + r.Name, true
		}
	}
	return schema.GroupResource{}, "", false
}
