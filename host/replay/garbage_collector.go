package replay

import "github.com/ordinal-dev/ordinal/internal/jsonobj"

// collectGarbage deletes every object whose ownerReferences all point at UIDs that no longer
// exist, as kube-controller-manager's garbage collector does (background propagation). The
// controller never deletes a PVC itself: a retention policy of Delete only points the claim's
// owner reference at the set or at the condemned pod, and this collector removes it once that
// owner is gone. Pods are deleted gracefully (they terminate like any other deleted pod).
func (s *APIServer) collectGarbage() {
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
