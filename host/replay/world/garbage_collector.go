package world

import (
	"fmt"
	"slices"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// CollectGarbage deletes every object whose ownerReferences all point at UIDs that no longer
// exist, as kube-controller-manager's garbage collector does (background propagation). The
// controller never deletes a PVC itself: a retention policy of Delete only points the claim's
// owner reference at the set or at the condemned pod, and this collector removes it once that
// owner is gone. Pods are deleted gracefully (they terminate like any other deleted pod).
// OrphanSet deletes the set with propagationPolicy Orphan (kubectl delete --cascade=orphan): the garbage
// collector removes the set's owner references from its pods, revisions and claims, which stay.
func (s *APIServer) OrphanSet() {
	if s.set == nil {
		return
	}
	uid := jsonobj.GetStr(s.set, "metadata.uid")
	s.set = nil
	s.ownersChanged = true
	for _, kind := range []string{KindPod, KindRevision, KindClaim} {
		for _, n := range s.Names(kind) {
			o := s.objs[kind][n]
			refs := jsonobj.GetArr(o, "metadata.ownerReferences")
			kept := make([]any, 0, len(refs))
			for _, r := range refs {
				if jsonobj.GetStr(r, "uid") != uid {
					kept = append(kept, r)
				}
			}
			if len(kept) == len(refs) {
				continue
			}
			if len(kept) == 0 {
				delete(jsonobj.Ensure(o, "metadata"), "ownerReferences")
			} else {
				jsonobj.Ensure(o, "metadata")["ownerReferences"] = kept
			}
			s.bump(kind, o)
		}
	}
}

// suspect is an object written since the collector last looked: its owners may be gone.
type suspect struct{ kind, name string }

func (s *APIServer) suspect(kind, name string) { s.suspects = append(s.suspects, suspect{kind, name}) }

func (s *APIServer) CollectGarbage() {
	if !s.ownersChanged {
		// Nothing removed: only an object written since can be an orphan, and one whose owner reference names
		// an object that is there (kind, name and uid) is none. Anything else gets the whole look below.
		suspects := s.suspects
		s.suspects = s.suspects[:0]
		for _, x := range suspects {
			if o := s.objs[x.kind][x.name]; o != nil && !s.ownedByPresent(o) {
				s.ownersChanged = true
			}
		}
		if !s.ownersChanged {
			return
		}
	}
	s.ownersChanged, s.suspects = false, s.suspects[:0]
	// The objects whose owners may be gone since the last look (ownerGraph), judged against the world as it
	// is now: the look collects what a look at every object would.
	suspects := s.owners.update(s)
	if VerifyOwnerGraph {
		s.verifyOwnerGraph(suspects)
	}
	for _, kind := range []string{KindClaim, KindRevision} {
		for _, n := range suspects[kind] {
			if s.owners.orphan(objKey{kind, n}) {
				s.remove(kind, n)
				s.ownersChanged = true // its dependents may be orphans now
				s.Note("gc", ReasonDeleted, kind, n, "deleted %s %s (owners gone)", kind, n)
			}
		}
	}
	for _, n := range suspects[KindPod] {
		p := s.objs[KindPod][n]
		if s.owners.orphan(objKey{KindPod, n}) && jsonobj.Get(p, "metadata.deletionTimestamp") == nil {
			// A deletionTimestamp, as the collector's delete sets it (the pod has no finalizers to wait for)
			jsonobj.Ensure(p, "metadata")["deletionTimestamp"] = s.now()
			if s.HarnessCollector {
				s.changed(KindPod, n) // with no new resourceVersion, as the harness's collector
			} else {
				s.bump(KindPod, p) // a write, with a resourceVersion of its own: what informers and the encode cache go by
			}
			if s.onPodDeleted != nil {
				s.onPodDeleted(n)
			}
			s.Note("gc", ReasonDeleting, KindPod, n, "deleting Pod %s (owners gone)", n)
		}
	}
}

// AwaitingGC lists objects the collector will delete once it runs.
func (s *APIServer) AwaitingGC() []string {
	live := map[string]bool{}
	if s.set != nil {
		live[jsonobj.GetStr(s.set, "metadata.uid")] = true
	}
	for _, kind := range []string{KindPod, KindRevision, KindClaim} {
		for _, o := range s.objs[kind] {
			live[jsonobj.GetStr(o, "metadata.uid")] = true
		}
	}
	var out []string
	for _, n := range s.Names(KindClaim) {
		if orphaned(s.objs[KindClaim][n], live) {
			out = append(out, "claim "+n+" awaiting gc")
		}
	}
	return out
}

// ownedByPresent: o has no owner reference, or one to an object of the world with that kind, name and uid
// (an owner the collector's uid check would find live too): o is no orphan.
func (s *APIServer) ownedByPresent(o Obj) bool {
	refs := jsonobj.GetArr(o, "metadata.ownerReferences")
	if len(refs) == 0 {
		return true
	}
	for _, r := range refs {
		var owner Obj
		if kind := jsonobj.GetStr(r, "kind"); kind == KindSet {
			owner = s.set
		} else if m := s.objs[kind]; m != nil {
			owner = m[jsonobj.GetStr(r, "name")]
		}
		if owner != nil && jsonobj.GetStr(owner, "metadata.uid") == jsonobj.GetStr(r, "uid") {
			return true
		}
	}
	return false
}

// verifyOwnerGraph checks (tests) that the graph tells the orphans as a look at the whole world does, and
// that every orphan but a terminating pod (the collector is done with it) is among its suspects.
func (s *APIServer) verifyOwnerGraph(suspects map[string][]string) {
	live := s.liveUIDs()
	for _, kind := range collectedKinds {
		for n, o := range s.objs[kind] {
			want := orphaned(o, live)
			if s.owners.orphan(objKey{kind, n}) != want {
				panic(fmt.Sprintf("replay: the garbage collector's graph has %s %s wrong (orphan: %t)", kind, n, want))
			}
			if want && !slices.Contains(suspects[kind], n) && (kind != KindPod || jsonobj.Get(o, "metadata.deletionTimestamp") == nil) {
				panic(fmt.Sprintf("replay: the garbage collector's graph misses the orphan %s %s", kind, n))
			}
		}
	}
}

// liveUIDs is the uids of every object an owner reference can name: the set and the collected kinds.
func (s *APIServer) liveUIDs() map[string]bool {
	live := map[string]bool{}
	if s.set != nil {
		live[jsonobj.GetStr(s.set, "metadata.uid")] = true
	}
	for _, kind := range collectedKinds {
		for _, o := range s.objs[kind] {
			live[jsonobj.GetStr(o, "metadata.uid")] = true
		}
	}
	return live
}

func orphaned(o Obj, live map[string]bool) bool {
	refs := jsonobj.GetArr(o, "metadata.ownerReferences")
	if len(refs) == 0 {
		return false
	}
	for _, r := range refs {
		if live[jsonobj.GetStr(r, "uid")] {
			return false
		}
	}
	return true
}
