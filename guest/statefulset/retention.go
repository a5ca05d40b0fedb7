package statefulset

import (
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// claimRef is an owner reference of a claim, with its JSON.
type claimRef struct {
	ref ownerRef
	raw jsonv.Value
}

func claimRefs(c *claim) []claimRef {
	raws := c.obj().Path("metadata", "ownerReferences")
	out := make([]claimRef, len(c.Meta.OwnerRefs))
	for i := range c.Meta.OwnerRefs {
		out[i].ref = c.Meta.OwnerRefs[i]
		if i < len(raws.A) {
			out[i].raw = normalizeObject(raws.A[i])
		}
	}
	return out
}

func matchesRef(r *ownerRef, apiVersion, kind, name string) bool {
	return r.APIVersion == apiVersion && r.Kind == kind && r.Name == name
}

// hasStaleOwnerRef: the first reference naming the object (by apiVersion, kind and name) has
// another UID.
func hasStaleOwnerRef(c *claim, apiVersion, kind, name, uid string) bool {
	for i := range c.Meta.OwnerRefs {
		r := &c.Meta.OwnerRefs[i]
		if matchesRef(r, apiVersion, kind, name) {
			return r.UID != uid
		}
	}
	return false
}

func hasOwnerRef(c *claim, uid string) bool {
	for i := range c.Meta.OwnerRefs {
		if c.Meta.OwnerRefs[i].UID == uid {
			return true
		}
	}
	return false
}

// hasUnexpectedController: with a non-Retain policy, a stale reference to the set or pod or a
// foreign controller reference.
func (s *syncer) hasUnexpectedController(c *claim, p *pod) bool {
	if s.set.WhenScaled == policyRetain && s.set.WhenDeleted == policyRetain {
		return false
	}
	for i := range c.Meta.OwnerRefs {
		r := &c.Meta.OwnerRefs[i]
		if matchesRef(r, s.set.APIVersion, kindStatefulSet, s.set.Meta.Name) {
			if r.UID != s.set.Meta.UID {
				return true
			}
			continue
		}
		if matchesRef(r, "v1", kindPod, p.Meta.Name) {
			if r.UID != p.Meta.UID {
				return true
			}
			continue
		}
		if r.Controller {
			return true
		}
	}
	return false
}

func (s *syncer) hasNonControllerOwner(c *claim, p *pod) bool {
	for i := range c.Meta.OwnerRefs {
		r := &c.Meta.OwnerRefs[i]
		if (r.UID == s.set.Meta.UID || r.UID == p.Meta.UID) && !r.Controller {
			return true
		}
	}
	return false
}

// claimOwnerUpToDate is isClaimOwnerUpToDate: do the claim's owner references follow the
// retention policy for this pod?
func (s *syncer) claimOwnerUpToDate(c *claim, p *pod) bool {
	if hasStaleOwnerRef(c, s.set.APIVersion, kindStatefulSet, s.set.Meta.Name, s.set.Meta.UID) ||
		hasStaleOwnerRef(c, "v1", kindPod, p.Meta.Name, p.Meta.UID) {
		return true
	}
	if s.hasUnexpectedController(c, p) {
		if hasOwnerRef(c, s.set.Meta.UID) || hasOwnerRef(c, p.Meta.UID) {
			return false
		}
		return true
	}
	if s.hasNonControllerOwner(c, p) {
		return false
	}
	setRef, podRef := hasOwnerRef(c, s.set.Meta.UID), hasOwnerRef(c, p.Meta.UID)
	scaledDown := !s.slots.Contains(p.Ordinal)
	ws, wd := s.set.WhenScaled, s.set.WhenDeleted
	switch {
	case ws == policyRetain && wd == policyDelete:
		return setRef && !podRef
	case ws == policyDelete && wd == policyRetain:
		return !setRef && scaledDown == podRef
	case ws == policyDelete && wd == policyDelete:
		return scaledDown != setRef && scaledDown == podRef
	default: // Retain/Retain, and unknown policies treated as Retain
		return !setRef && !podRef
	}
}

// updatedClaimRefs is updateClaimOwnerRefForSetAndPod: the claim's owner references rewritten
// for the policy.
func (s *syncer) updatedClaimRefs(c *claim, p *pod) []jsonv.Value {
	unexpected := s.hasUnexpectedController(c, p)
	out := []jsonv.Value{}
	var uids []string
	for _, r := range claimRefs(c) {
		if matchesRef(&r.ref, s.set.APIVersion, kindStatefulSet, s.set.Meta.Name) || matchesRef(&r.ref, "v1", kindPod, p.Meta.Name) {
			continue
		}
		out = append(out, r.raw)
		uids = append(uids, r.ref.UID)
	}
	if unexpected {
		return out
	}
	add := func(apiVersion, kind, name, uid string) {
		for _, u := range uids {
			if u == uid {
				return
			}
		}
		out = append(out, controllerRefValue(apiVersion, kind, name, uid))
		uids = append(uids, uid)
	}
	scaledDown := !s.slots.Contains(p.Ordinal)
	ws, wd := s.set.WhenScaled, s.set.WhenDeleted
	switch {
	case ws == policyRetain && wd == policyRetain:
	case ws == policyRetain && wd == policyDelete:
		add(s.set.APIVersion, kindStatefulSet, s.set.Meta.Name, s.set.Meta.UID)
	case ws == policyDelete && wd == policyRetain:
		if scaledDown {
			add("v1", kindPod, p.Meta.Name, p.Meta.UID)
		}
	case ws == policyDelete && wd == policyDelete:
		if scaledDown {
			add("v1", kindPod, p.Meta.Name, p.Meta.UID)
		} else {
			add(s.set.APIVersion, kindStatefulSet, s.set.Meta.Name, s.set.Meta.UID)
		}
	}
	return out
}

// claimsMatchRetentionPolicy: every existing claim of the pod is up to date.
func (s *syncer) claimsMatchRetentionPolicy(p *pod) bool {
	if p.memo == nil || p.built || s.retentionGen == 0 {
		return s.claimsMatchRetentionPolicyNow(p)
	}
	m, inSlots := &p.memo.retention, s.slots.Contains(p.Ordinal)
	if m.gen != s.retentionGen || m.inSlots != inSlots {
		*m = retentionFacts{gen: s.retentionGen, inSlots: inSlots, match: s.claimsMatchRetentionPolicyNow(p)}
	}
	return m.match
}

func (s *syncer) claimsMatchRetentionPolicyNow(p *pod) bool {
	for _, name := range s.claimNamesOf(p) {
		c, ok := s.claimNamed(name)
		if !ok {
			continue
		}
		if !s.claimOwnerUpToDate(c, p) {
			return false
		}
	}
	return true
}

// updatePodClaimForRetentionPolicy updates the owner references of the pod's claims that are
// not up to date (warning about foreign controllers). It stops at the first update refused and returns
// its error, wrapped as upstream's.
func (s *syncer) updatePodClaimForRetentionPolicy(p *pod) error {
	for _, tmpl := range s.set.ClaimTemplateNames {
		name := claimName(tmpl, s.set.Meta.Name, p.Ordinal)
		c, ok := s.claimNamed(name)
		if !ok {
			continue
		}
		if s.hasUnexpectedController(c, p) {
			s.event(eventWarning, "ConflictingController", "PersistentVolumeClaim "+name+
				" has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim")
		}
		if s.claimOwnerUpToDate(c, p) {
			continue
		}
		refs := s.updatedClaimRefs(c, p)
		obj := withTypeMeta(*c.obj(), "v1", kindPVC, c.Meta.Namespace)
		meta := obj.G("metadata")
		if len(refs) == 0 {
			meta.Delete("ownerReferences")
		} else {
			meta.Set("ownerReferences", jsonv.Value{K: jsonv.Array, A: refs})
		}
		obj.Set("metadata", meta)
		a := action{Verb: verbUpdate, Kind: kindPVC, Namespace: c.Meta.Namespace, Name: c.Meta.Name, Object: &obj}
		if err := s.issue(a, nil); err != nil {
			if isNotFound(err) {
				s.setClaimExists(name, false) // gone from the API server; the lister still has it
			}
			return wrapf("could not update claim "+name+" for delete policy ownerRefs: ", err)
		}
	}
	return nil
}
