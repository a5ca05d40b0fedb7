package statefulset

import (
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// controllerRefValue is metav1.NewControllerRef(owner, kind) as JSON.
func controllerRefValue(apiVersion, kind, name, uid string) jsonv.Value {
	return jsonv.Obj(
		jsonv.M("apiVersion", jsonv.Str(apiVersion)),
		jsonv.M("kind", jsonv.Str(kind)),
		jsonv.M("name", jsonv.Str(name)),
		jsonv.M("uid", jsonv.Str(uid)),
		jsonv.M("controller", jsonv.BoolV(true)),
		jsonv.M("blockOwnerDeletion", jsonv.BoolV(true)),
	)
}

func (s *syncer) setControllerRef() jsonv.Value {
	return controllerRefValue(s.set.APIVersion, kindStatefulSet, s.set.Meta.Name, s.set.Meta.UID)
}

// adoptPatch is the strategic merge patch that makes the set the controller of an object.
func (s *syncer) adoptPatch(uid string) jsonv.Value {
	return jsonv.Obj(jsonv.M("metadata", jsonv.Obj(
		jsonv.M("ownerReferences", jsonv.Arr(s.setControllerRef())),
		jsonv.M("uid", jsonv.Str(uid)),
	)))
}

// releasePatch is the strategic merge patch that removes the set's owner reference.
func (s *syncer) releasePatch(uid string) jsonv.Value {
	return jsonv.Obj(jsonv.M("metadata", jsonv.Obj(
		jsonv.M("uid", jsonv.Str(uid)),
		jsonv.M("ownerReferences", jsonv.Arr(jsonv.Obj(
			jsonv.M("$patch", jsonv.Str("delete")),
			jsonv.M("uid", jsonv.Str(s.set.Meta.UID)),
		))),
	)))
}

// deletedAtError is RecheckDeletionTimestamp's error for a set being deleted.
func (s *syncer) deletedAtError() string {
	return s.set.Meta.Namespace + "/" + s.set.Meta.Name + " has just been deleted at " + s.set.Meta.DeletionTimestamp.UTC().String()
}

// adoptOrphanRevisions patches every selected revision without a controller to be controlled by
// the set (before anything else happens in the sync).
func (s *syncer) adoptOrphanRevisions() error {
	var orphans []*revision
	for _, r := range s.listRevisions() {
		if r.Meta.controllerRef() == nil {
			orphans = append(orphans, r)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	if s.set.Meta.Deleting {
		return simpleError("can't adopt ControllerRevisions: " + s.deletedAtError())
	}
	sortByName(orphans, func(r *revision) string { return r.Meta.Name })
	for _, r := range orphans {
		p := s.adoptPatch(r.Meta.UID)
		a := action{Verb: verbPatch, Kind: kindRevision, Namespace: s.set.Meta.Namespace, Name: r.Meta.Name, PatchType: patchTypeSMP, Patch: &p}
		if err := s.issue(a, nil); err != nil { // AdoptOrphanRevisions stops at the first error, and so does the sync
			return err
		}
		// The API server applies a strategic merge patch through a map: its copy's data is
		// re-marshalled in canonical form (what a later AlreadyExists GET compares).
		patched := *r
		patched.memo = nil // its data is re-marshalled below: a template of its own, not the held one's
		if data, err := jsonv.Parse(r.DataRaw); err == nil && len(r.DataRaw) > 0 {
			if c, ok := jsonv.Canonical(data); ok {
				patched.DataRaw = c
			}
		}
		s.revByKey[key(r.Meta.Namespace, r.Meta.Name)] = &patched
	}
	return nil
}

// claimPods mirrors getPodsForStatefulSet: list the set's pods and the namespace's orphans,
// keep the set's pods that still match, release those that do not, adopt matching orphans.
func (s *syncer) claimPods() ([]*pod, error) {
	if s.set.Meta.UID == "" {
		return nil, simpleError("no owner uid provided")
	}
	if pods, ok := s.claimedFromIndex(); ok {
		return pods, nil
	}
	candidates := podList(&s.maps.candidates, len(s.snap.Pods))
	clean := true // every candidate is the set's and matches it: nothing to adopt or release (pod_index.go)
	for _, p := range s.snap.Pods {
		if f := s.factsOf(p); f != nil && f.candidate || f == nil && s.listedFor(&p.Meta) {
			candidates = append(candidates, p)
			clean = clean && indexable(p, f)
		}
	}
	sortPodsByName(candidates)
	match := func(p *pod) bool {
		if f := s.factsOf(p); f != nil {
			return f.match
		}
		return s.selectsPod(p)
	}
	claimed := podList(&s.maps.claimed, len(candidates))
	var errs []error
	for _, p := range candidates {
		if p.Meta.controllerRef() != nil {
			if match(p) {
				claimed = append(claimed, p)
				continue
			}
			if s.set.Meta.Deleting || s.paused() { // paused: no pod written (extension pause)
				continue
			}
			patch := s.releasePatch(p.Meta.UID)
			// ReleasePod ignores NotFound and Invalid (the pod is gone or no longer ours); ClaimObject keeps
			// any other error for the end
			if err := s.patchPod(p, patch); err != nil && !isNotFound(err) && !isInvalid(err) {
				errs = append(errs, err)
			}
			continue
		}
		if s.set.Meta.Deleting || s.paused() || !match(p) || p.Meta.Deleting {
			continue
		}
		patch := s.adoptPatch(p.Meta.UID)
		// an adoption that failed leaves the pod unclaimed: NotFound is ignored, any other error kept
		if err := s.patchPod(p, patch); err != nil {
			if !isNotFound(err) {
				errs = append(errs, err)
			}
			continue
		}
		claimed = append(claimed, p)
	}
	s.maps.podIndex.build(s, claimed, clean)
	// ClaimPods returns the pods it claimed and the aggregate of its errors; the sync stops on the error
	return claimed, newAggregate(errs)
}

// listedFor: the object is listed for the set (its namespace) and is the set's or nobody's (indexed by the
// controller ref: kind, name and uid must all be the set's).
func (s *syncer) listedFor(m *objectMeta) bool {
	if m.Namespace != s.set.Meta.Namespace {
		return false
	}
	ref := m.controllerRef()
	return ref == nil || ref.Kind == kindStatefulSet && ref.Name == s.set.Meta.Name && ref.UID == s.set.Meta.UID
}

// selectsPod: the set's selector matches the pod, and the pod's name makes it one of the set's.
func (s *syncer) selectsPod(p *pod) bool {
	return s.sel.matches(p.Meta.Labels) && p.Parent == s.set.Meta.Name
}

// patchPod sends an adoption or release patch and returns the API server's answer (the host's report).
func (s *syncer) patchPod(p *pod, patch jsonv.Value) error {
	err := s.issue(action{Verb: verbPatch, Kind: kindPod, Namespace: p.Meta.Namespace, Name: p.Meta.Name, PatchType: patchTypeSMP, Patch: &patch}, nil)
	if isNotFound(err) {
		s.setPodExists(key(p.Meta.Namespace, p.Meta.Name), false) // gone: a create of its name will succeed
	}
	return err
}
