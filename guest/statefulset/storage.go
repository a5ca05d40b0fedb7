package statefulset

import (
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// podClaimVolume is the pod volume for a claim template.
func podClaimVolume(tmpl, claim string) jsonv.Value {
	return jsonv.Obj(
		jsonv.M("name", jsonv.Str(tmpl)),
		jsonv.M("persistentVolumeClaim", jsonv.Obj(jsonv.M("claimName", jsonv.Str(claim)))),
	)
}

// storageMatches: every claim template has a pod volume backed by the right claim.
func (s *syncer) storageMatches(p *pod) bool {
	if f := s.factsOf(p); f != nil {
		return f.storage
	}
	return s.storageMatchesNow(p)
}

func (s *syncer) storageMatchesNow(p *pod) bool {
	if p.Ordinal < 0 {
		return false
	}
	vols := p.volumes()
	names := s.claimNamesOf(p)
	for i, tmpl := range s.set.ClaimTemplateNames {
		var found *podVolume
		for j := range vols {
			if vols[j].Name == tmpl {
				found = &vols[j] // last one wins (map semantics)
			}
		}
		if found == nil || !found.PVC || found.ClaimName != names[i] {
			return false
		}
	}
	return true
}

// volumes is spec.volumes: as decoded, or from the tree once the sync has built (and maybe changed) it.
func (p *pod) volumes() []podVolume {
	if !p.built {
		return p.vols
	}
	var out []podVolume
	for _, v := range p.tree.Path("spec", "volumes").A {
		pvc := v.G("persistentVolumeClaim")
		out = append(out, podVolume{Name: v.G("name").Str(), PVC: pvc.K == jsonv.Object, ClaimName: pvc.G("claimName").Str()})
	}
	return out
}

// updateStorage rebuilds the pod's volumes: one per claim template first (template order),
// then the pod's other volumes.
func (s *syncer) updateStorage(p *pod) {
	spec := p.obj().G("spec")
	if spec.K != jsonv.Object {
		spec = jsonv.EmptyObj()
	}
	cur := spec.G("volumes")
	isTmpl := make(map[string]bool, len(s.set.ClaimTemplateNames))
	var out []jsonv.Value
	for _, tmpl := range s.set.ClaimTemplateNames {
		if isTmpl[tmpl] {
			continue
		}
		isTmpl[tmpl] = true
		out = append(out, podClaimVolume(tmpl, claimName(tmpl, s.set.Meta.Name, p.Ordinal)))
	}
	for _, v := range cur.A {
		if !isTmpl[v.G("name").Str()] {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		spec.Delete("volumes")
	} else {
		spec.Set("volumes", jsonv.Value{K: jsonv.Array, A: out})
	}
	p.obj().Set("spec", spec)
}

// podClaim is one PVC the set wants for a pod: its name, and the claim template it is made from (its object,
// claimObject, only when it is created: built on every sync that looked at a pod's claims, it was a tenth of
// what a rollout's sync allocated in the module).
type podClaim struct {
	Template string
	Name     string
	index    int // in the set's ClaimTemplates
}

// podClaims is getPersistentVolumeClaims: the claims of the pod, built from the templates (a later template
// of the same name replaces an earlier one: upstream's map keyed by template name).
func (s *syncer) podClaims(p *pod) []podClaim {
	names := s.claimNamesOf(p) // the pod's memo keeps them
	out := make([]podClaim, 0, len(s.set.ClaimTemplates))
next:
	for i := range s.set.ClaimTemplates {
		tmpl := s.set.ClaimTemplateNames[i]
		pc := podClaim{Template: tmpl, Name: names[i], index: i}
		for j := range out {
			if out[j].Template == tmpl {
				out[j] = pc
				continue next
			}
		}
		out = append(out, pc)
	}
	return out
}

// claimObject is the claim c as getPersistentVolumeClaims builds it from its template.
func (s *syncer) claimObject(c podClaim) jsonv.Value {
	obj := normalizeObject(s.set.ClaimTemplates[c.index])
	meta := obj.G("metadata")
	if meta.K != jsonv.Object {
		meta = jsonv.EmptyObj()
	}
	meta.Set("name", jsonv.Str(c.Name))
	meta.Set("namespace", jsonv.Str(s.set.Meta.Namespace))
	if lv, ok := meta.Get("labels"); ok && lv.K == jsonv.Object {
		labels := lv.StringMap()
		for k, v := range s.set.Selector.MatchLabels {
			labels[k] = v
		}
		meta.Set("labels", jsonv.FromStringMap(labels))
	} else if len(s.set.Selector.MatchLabels) > 0 {
		meta.Set("labels", jsonv.FromStringMap(s.set.Selector.MatchLabels))
	} else {
		meta.Delete("labels")
	}
	obj.Set("metadata", meta)
	obj.Set("kind", jsonv.Str(kindPVC))
	obj.Set("apiVersion", jsonv.Str("v1"))
	if !obj.Has("spec") {
		obj.Set("spec", jsonv.EmptyObj())
	}
	if !obj.Has("status") {
		obj.Set("status", jsonv.EmptyObj())
	}
	return obj
}

// createClaims is createPersistentVolumeClaims: create the pod's missing claims; a claim being
// deleted is an error.
func (s *syncer) createClaims(p *pod) error {
	var errs []error
	for _, c := range s.podClaims(p) {
		existing, ok := s.claimNamed(c.Name)
		if !ok {
			obj := s.claimObject(c)
			var predicted error
			if s.claimExistsAt(c.Name) {
				predicted = errAlreadyExists(resClaims, c.Name)
			}
			err := s.issue(action{Verb: verbCreate, Kind: kindPVC, Namespace: s.set.Meta.Namespace, Name: c.Name, Object: &obj}, predicted)
			if err != nil {
				errs = append(errs, simpleError("failed to create PVC "+c.Name+": "+err.Error()))
			} else {
				s.setClaimExists(c.Name, true)
			}
			if err == nil || !isAlreadyExists(err) {
				s.claimEvent("create", c.Name, p.Meta.Name, err)
			}
			continue
		}
		if existing.Meta.Deleting {
			errs = append(errs, simpleError("pvc "+c.Name+" is being deleted"))
		}
	}
	return newAggregate(errs)
}

// podClaimIsStale: with whenScaled=Delete, a claim of the pod still owned by an earlier pod of
// the same name blocks the pod's creation.
func (s *syncer) podClaimIsStale(p *pod) bool {
	if s.set.WhenScaled == policyRetain {
		return false
	}
	for _, c := range s.podClaims(p) {
		existing, ok := s.claimNamed(c.Name)
		if !ok {
			continue
		}
		if hasStaleOwnerRef(existing, "v1", kindPod, p.Meta.Name, p.Meta.UID) {
			return true
		}
	}
	return false
}
