package statefulset

import "github.com/ordinal-dev/ordinal/guest/jsonv"

// annotationResizeClaims turns on extension resize-claims ("true").
const annotationResizeClaims = "ordinal.dev/resize-claims"

// resizeClaims is extension resize-claims (kubernetes/kubernetes#68737): a Bound claim of a replica whose
// storage request is below its volumeClaimTemplate's is patched up to it, one ordinal at a time in
// update order (the highest first), each ordinal only once the claims patched before it are expanded
// (status.capacity reaches the request). Upstream never touches an existing claim's size; since
// volumeClaimTemplates are immutable in apps/v1 v1.37, the template grows when the set is recreated over
// its pods and claims (kubectl delete --cascade=orphan, then apply: upstream's own workaround, which leaves
// every claim to be patched by hand). Never a shrink, never an unbound claim (the API server refuses
// it), never a claim this plan already wrote (its update carries the old resourceVersion).
func (s *syncer) resizeClaims() {
	if !extendedBuild || s.set.Meta.Annotations[annotationResizeClaims] != "true" || s.set.Meta.Deleting || s.paused() || s.podsHeld {
		return
	}
	type size struct {
		tmpl, value string
		n           int64
	}
	var sizes []size
	for i, t := range s.set.ClaimTemplates {
		v := t.Path("spec", "resources", "requests", "storage")
		if n, ok := quantityBytes(v.Str()); ok && v.K == jsonv.String {
			sizes = append(sizes, size{s.set.ClaimTemplateNames[i], v.S, n})
		}
	}
	if len(sizes) == 0 {
		return
	}
	written := map[string]bool{}
	for _, a := range s.plan.Actions {
		if a.Kind == kindPVC {
			written[a.Name] = true
		}
	}
	for i := int(s.set.Replicas) - 1; i >= 0; i-- {
		ord := s.slots.At(i)
		var grow []*claim
		var to []string
		for _, z := range sizes {
			c := s.claims[claimName(z.tmpl, s.set.Meta.Name, ord)]
			if c == nil || c.Meta.Deleting || written[c.Meta.Name] {
				continue
			}
			o := c.obj()
			req, ok := quantityBytes(o.Path("spec", "resources", "requests", "storage").Str())
			if !ok || o.Path("status", "phase").Str() != "Bound" {
				continue
			}
			if req < z.n {
				grow, to = append(grow, c), append(to, z.value)
				continue
			}
			if capacity, ok := quantityBytes(o.Path("status", "capacity", "storage").Str()); ok && capacity < req {
				return // this ordinal's expansion is under way: the next waits for it (a claim update syncs the set)
			}
		}
		if len(grow) == 0 {
			continue
		}
		for k, c := range grow {
			patch := jsonv.Obj(
				jsonv.M("metadata", jsonv.Obj(jsonv.M("uid", jsonv.Str(c.Meta.UID)))),
				jsonv.M("spec", jsonv.Obj(jsonv.M("resources", jsonv.Obj(jsonv.M("requests", jsonv.Obj(
					jsonv.M("storage", jsonv.Str(to[k])))))))))
			s.record(action{Verb: verbPatch, Kind: kindPVC, Namespace: s.set.Meta.Namespace, Name: c.Meta.Name, PatchType: patchTypeSMP, Patch: &patch})
			from := c.obj().Path("spec", "resources", "requests", "storage").Str()
			s.eventOf(len(s.plan.Actions)-1, eventNormal, "ResizeClaim", "Resizing Claim "+c.Meta.Name+" of Pod "+podName(s.set.Meta.Name, ord)+
				" in StatefulSet "+s.set.Meta.Name+" from "+from+" to "+to[k]+" ("+annotationResizeClaims+`: "true"`+")")
		}
		return // one ordinal at a time
	}
}
