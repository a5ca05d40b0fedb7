package statefulset

import (
	"slices"
	"sort"
	"strconv"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
	"github.com/ordinal-dev/ordinal/internal/quantity"
)

// annotationResizeClaims turns on extension resize-claims ("true").
const annotationResizeClaims = "ordinal.dev/resize-claims"

// resizeClaims is extension resize-claims (kubernetes/kubernetes#68737): a Bound claim of a replica whose
// storage request is below its volumeClaimTemplate's is patched up to it, one ordinal at a time in
// update order (the highest first), each ordinal only once the claims patched before it are expanded
// (status.capacity reaches the request). Upstream never touches an existing claim's size; since
// volumeClaimTemplates are immutable in apps/v1 v1.37, the template grows when the set is recreated over
// its pods and claims (kubectl delete --cascade=orphan, then apply: upstream's own workaround, which leaves
// every claim to be patched by hand). Never a shrink, never an unbound claim (the API server refuses
// it), never a claim this plan already wrote (its update carries the old resourceVersion). A patch the
// API server refuses fails the sync (a FailedPatch event; backoff), as a refused claim write fails
// upstream's.
func (s *syncer) resizeClaims() error {
	if !extendedBuild {
		return nil
	}
	if v, ok := s.enumAnnotation(annotationResizeClaims); ok && v != "true" && v != "false" {
		// "True", "yes", "1": whoever wrote it meant to turn it on; say it is off, as the other extensions do
		s.event(eventWarning, "InvalidAnnotation", annotationResizeClaims+": "+strconv.Quote(v)+` is neither "true" nor "false": no claim is resized`)
	}
	if s.set.Meta.Annotations[annotationResizeClaims] != "true" || s.set.Meta.Deleting || s.paused() || s.podsHeld {
		return nil
	}
	// each template's storage request, by name: the last of two templates with one name wins, as for the
	// claims upstream creates (podClaims)
	sizes := map[string]string{}
	for i, t := range s.set.ClaimTemplates {
		if v := t.Path("spec", "resources", "requests", "storage"); v.K == jsonv.String {
			sizes[s.set.ClaimTemplateNames[i]] = v.S
		} else {
			delete(sizes, s.set.ClaimTemplateNames[i])
		}
	}
	s.warnUnreadableSizes(sizes)
	if len(sizes) == 0 {
		return nil
	}
	written := map[string]bool{}
	for _, a := range s.plan.Actions {
		if a.Kind == kindPVC {
			written[a.Name] = true
		}
	}
	// the snapshot's claims of member ordinals, by ordinal (not every slot: a set may have millions)
	type resize struct {
		c        *claim
		from, to string
	}
	byOrdinal := map[int64][]resize{}
	var ords []int64
	for tmpl, size := range sizes {
		want, ok := quantity.Value(size)
		if !ok {
			continue // warned of above
		}
		prefix := tmpl + "-" + s.set.Meta.Name
		for _, c := range s.snap.Claims { // the lister's: the set's namespace
			name := c.Meta.Name
			if c.Meta.Namespace != s.set.Meta.Namespace {
				continue
			}
			p, ord := parentAndOrdinal(name)
			if p != prefix || claimName(tmpl, s.set.Meta.Name, ord) != name || !s.slots.Contains(ord) || c.Meta.Deleting || written[name] {
				continue
			}
			o := c.obj()
			from := o.Path("spec", "resources", "requests", "storage").Str()
			req, ok := quantity.Value(from)
			if !ok || o.Path("status", "phase").Str() != "Bound" {
				continue
			}
			r := resize{c: c, from: from}
			if req < want {
				r.to = size
			} else if capacity, ok := quantity.Value(o.Path("status", "capacity", "storage").Str()); !ok || capacity >= req {
				continue // at its size, or no capacity reported to wait for
			}
			if byOrdinal[ord] == nil {
				ords = append(ords, ord)
			}
			byOrdinal[ord] = append(byOrdinal[ord], r)
		}
	}
	sort.Slice(ords, func(i, j int) bool { return ords[i] > ords[j] }) // update order: the highest first
	for _, ord := range ords {
		rs := byOrdinal[ord]
		sort.Slice(rs, func(i, j int) bool { return rs[i].c.Meta.Name < rs[j].c.Meta.Name })
		for _, r := range rs {
			if r.to == "" {
				return nil // this ordinal's expansion is under way: the next waits for it (a claim update syncs the set)
			}
		}
		for _, r := range rs {
			patch := jsonv.Obj(
				jsonv.M("metadata", jsonv.Obj(jsonv.M("uid", jsonv.Str(r.c.Meta.UID)))),
				jsonv.M("spec", jsonv.Obj(jsonv.M("resources", jsonv.Obj(jsonv.M("requests", jsonv.Obj(
					jsonv.M("storage", jsonv.Str(r.to)))))))))
			a := action{Verb: verbPatch, Kind: kindPVC, Namespace: s.set.Meta.Namespace, Name: r.c.Meta.Name, PatchType: patchTypeSMP, Patch: &patch}
			if err := s.issue(a, nil); err != nil {
				s.claimEvent("patch", r.c.Meta.Name, podName(s.set.Meta.Name, ord), err)
				return err
			}
			s.eventOf(len(s.plan.Actions)-1, eventNormal, "ResizeClaim", "Resizing Claim "+r.c.Meta.Name+" of Pod "+podName(s.set.Meta.Name, ord)+
				" in StatefulSet "+s.set.Meta.Name+" from "+r.from+" to "+r.to+" ("+annotationResizeClaims+`: "true"`+")")
		}
		return nil // one ordinal at a time
	}
	return nil
}

// warnUnreadableSizes records a Warning InvalidClaimSize for each template whose storage request
// quantity.Value refuses ("1e30", "-1Gi"), once per name in the templates' order: its claims are not
// resized, and the user is told so rather than left to wonder.
func (s *syncer) warnUnreadableSizes(sizes map[string]string) {
	for i, tmpl := range s.set.ClaimTemplateNames {
		size, ok := sizes[tmpl]
		if why := quantity.Why(size); ok && why != "" && slices.Index(s.set.ClaimTemplateNames, tmpl) == i {
			s.event(eventWarning, "InvalidClaimSize", "volumeClaimTemplate "+tmpl+" requests storage "+strconv.Quote(size)+" ("+why+
				"): claims "+tmpl+"-"+s.set.Meta.Name+"-N are not resized ("+annotationResizeClaims+`: "true")`)
		}
	}
}
