package replay

import "github.com/ordinal-dev/ordinal/internal/jsonobj"

// collectGarbage deletes every object whose ownerReferences all point at UIDs that no longer
// exist, as kube-controller-manager's garbage collector does (background propagation). The
// controller never deletes a PVC itself: a retention policy of Delete only points the claim's
// owner reference at the set or at the condemned pod, and this collector removes it once that
// owner is gone. Pods are deleted gracefully (they terminate like any other deleted pod).
// orphanSet deletes the set with propagationPolicy Orphan (kubectl delete --cascade=orphan): the garbage
// collector removes the set's owner references from its pods, revisions and claims, which stay.
func (s *APIServer) orphanSet() {
	if s.set == nil {
		return
	}
	uid := jsonobj.GetStr(s.set, "metadata.uid")
	s.set = nil
	s.ownersChanged = true
	for _, kind := range []string{kindPod, kindRevision, kindClaim} {
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
			s.bump(o)
		}
	}
}

func (s *APIServer) collectGarbage() {
	if !s.ownersChanged { // no object's owners can have gone since the last look
		return
	}
	s.ownersChanged = false
	live := map[string]bool{}
	if s.set != nil {
		live[jsonobj.GetStr(s.set, "metadata.uid")] = true
	}
	for _, kind := range []string{kindPod, kindRevision, kindClaim} {
		for _, o := range s.objs[kind] {
			live[jsonobj.GetStr(o, "metadata.uid")] = true
		}
	}
	for _, kind := range []string{kindClaim, kindRevision} {
		for _, n := range s.Names(kind) {
			if orphaned(s.objs[kind][n], live) {
				delete(s.objs[kind], n)
				s.ownersChanged = true // its dependents may be orphans now
				s.note("gc", ReasonDeleted, kind, n, "deleted %s %s (owners gone)", kind, n)
			}
		}
	}
	for _, n := range s.Names(kindPod) {
		p := s.objs[kindPod][n]
		if orphaned(p, live) && jsonobj.Get(p, "metadata.deletionTimestamp") == nil {
			// Only a deletionTimestamp, as the reference harness's collector sets it.
			jsonobj.Ensure(p, "metadata")["deletionTimestamp"] = s.now()
			if s.onPodDeleted != nil {
				s.onPodDeleted(n)
			}
			s.note("gc", ReasonDeleting, kindPod, n, "deleting Pod %s (owners gone)", n)
		}
	}
}

// awaitingGC lists objects the collector will delete once it runs.
func (s *APIServer) awaitingGC() []string {
	live := map[string]bool{}
	if s.set != nil {
		live[jsonobj.GetStr(s.set, "metadata.uid")] = true
	}
	for _, kind := range []string{kindPod, kindRevision, kindClaim} {
		for _, o := range s.objs[kind] {
			live[jsonobj.GetStr(o, "metadata.uid")] = true
		}
	}
	var out []string
	for _, n := range s.Names(kindClaim) {
		if orphaned(s.objs[kindClaim][n], live) {
			out = append(out, "claim "+n+" awaiting gc")
		}
	}
	return out
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
