package statefulset

import (
	"maps"
	"slices"
	"strings"
)

// podMemo is what syncs find of a pod the instance holds that does not change while neither the pod nor the
// set's identity does. Every sync asks it for every pod (claimPods, processReplica, countStatus); a held pod is
// copied into each sync with the same *podMemo, so each is found once per change, not once per pod per sync:
// at 1000 pods the map lookups and string comparisons of these checks were most of a held sync.
type podMemo struct {
	claims    podClaimNames
	facts     podFacts
	retention retentionFacts
}

// podClaimNames is the names of a pod's claims, claimName of each of the set's claim templates at the pod's
// ordinal (two string allocations each, most of a held sync's garbage under TinyGo when made every sync).
type podClaimNames struct {
	set     string // what they were built for: the set's name, its templates and the ordinal
	tmpls   []string
	ordinal int64
	names   []string
}

// claimNamesOf is p's claim names, one per template of the set, in the templates' order.
func (s *syncer) claimNamesOf(p *pod) []string {
	var c *podClaimNames
	if p.memo != nil {
		c = &p.memo.claims
	} else { // a pod the controller made: nothing to share
		c = &podClaimNames{}
	}
	if c.names == nil || c.set != s.set.Meta.Name || c.ordinal != p.Ordinal || !slices.Equal(c.tmpls, s.set.ClaimTemplateNames) {
		// the key in memory of its own: the set's strings point into an input the next call overwrites
		c.set, c.ordinal = strings.Clone(s.set.Meta.Name), p.Ordinal
		c.tmpls = c.tmpls[:0]
		c.names = make([]string, len(s.set.ClaimTemplateNames))
		for i, tmpl := range s.set.ClaimTemplateNames {
			c.tmpls = append(c.tmpls, strings.Clone(tmpl))
			c.names[i] = claimName(tmpl, s.set.Meta.Name, p.Ordinal)
		}
	}
	return c.names
}

// podFacts are the checks of a pod that read only the pod and the set's identity (setIdentity): found for the
// identity of generation gen, again when the identity changed (0: never found).
type podFacts struct {
	gen                                 uint64
	candidate, match, identity, storage bool
}

// factsOf is p's facts for this sync's set identity, or nil when they cannot be kept: a pod the controller
// made, or a copy whose object the sync has built (and may have changed).
func (s *syncer) factsOf(p *pod) *podFacts {
	if p.memo == nil || p.built || s.identityGen == 0 {
		return nil
	}
	f := &p.memo.facts
	if f.gen != s.identityGen {
		*f = podFacts{gen: s.identityGen, candidate: s.listedFor(&p.Meta), match: s.selectsPod(p),
			identity: s.identityMatchesNow(p), storage: s.storageMatchesNow(p)}
	}
	return f
}

// setIdentity is what podFacts depend on of the set: where it is, who it is, what it selects and the names of
// its claim templates. syncMaps keeps the last one an instance saw (its strings in memory of their own).
type setIdentity struct {
	namespace, name, uid string
	selector             labelSelector
	templates            []string
}

func identityOf(set *statefulSet) setIdentity {
	return setIdentity{namespace: set.Meta.Namespace, name: set.Meta.Name, uid: set.Meta.UID, selector: set.Selector, templates: set.ClaimTemplateNames}
}

func (a *setIdentity) equal(b *setIdentity) bool {
	return a.namespace == b.namespace && a.name == b.name && a.uid == b.uid && slices.Equal(a.templates, b.templates) &&
		a.selector.Nil == b.selector.Nil && maps.Equal(a.selector.MatchLabels, b.selector.MatchLabels) &&
		slices.EqualFunc(a.selector.MatchExprs, b.selector.MatchExprs, func(x, y selectorRequirement) bool {
			return x.Key == y.Key && x.Operator == y.Operator && slices.Equal(x.Values, y.Values)
		})
}

// clone is the identity in memory of its own (the decoded set points into the call's input).
func (a setIdentity) clone() setIdentity {
	c := setIdentity{namespace: strings.Clone(a.namespace), name: strings.Clone(a.name), uid: strings.Clone(a.uid)}
	for _, t := range a.templates {
		c.templates = append(c.templates, strings.Clone(t))
	}
	c.selector.Nil = a.selector.Nil
	if a.selector.MatchLabels != nil {
		c.selector.MatchLabels = make(map[string]string, len(a.selector.MatchLabels))
		for k, v := range a.selector.MatchLabels {
			c.selector.MatchLabels[strings.Clone(k)] = strings.Clone(v)
		}
	}
	for _, r := range a.selector.MatchExprs {
		cr := selectorRequirement{Key: strings.Clone(r.Key), Operator: strings.Clone(r.Operator)}
		for _, v := range r.Values {
			cr.Values = append(cr.Values, strings.Clone(v))
		}
		c.selector.MatchExprs = append(c.selector.MatchExprs, cr)
	}
	return c
}

// identityGeneration is the generation of the set's identity for this sync: the last one's when it has not
// changed since, a new one when it has.
func (m *syncMaps) identityGeneration(set *statefulSet) uint64 {
	id := identityOf(set)
	if m.gen == 0 || !m.identity.equal(&id) {
		m.gen++
		m.identity = id.clone()
	}
	return m.gen
}

// retentionFacts is claimsMatchRetentionPolicy of a pod, found for the retention context of generation gen and
// for the pod in or out of the set's ordinals (inSlots: whether it is scaled down), found again when either
// changed (0: never found).
type retentionFacts struct {
	gen            uint64
	inSlots, match bool
}

// retentionContext is what claimsMatchRetentionPolicy reads besides the pod and its ordinal's place: the set's
// identity (its generation), the policy and the owner's apiVersion; the claims are its generation too (a sync
// whose claims changed, or were sent whole, starts a new one).
type retentionContext struct {
	identity                       uint64
	whenScaled, whenDeleted, owner string
}

// retentionGeneration is the generation of the retention context for this sync.
func (m *syncMaps) retentionGeneration(set *statefulSet, identity uint64, claimsChanged bool) uint64 {
	rc := retentionContext{identity: identity, whenScaled: set.WhenScaled, whenDeleted: set.WhenDeleted, owner: set.APIVersion}
	if m.retentionGen == 0 || claimsChanged || rc != m.retention {
		m.retentionGen++
		m.retention = retentionContext{identity: identity, whenScaled: strings.Clone(rc.whenScaled), whenDeleted: strings.Clone(rc.whenDeleted), owner: strings.Clone(rc.owner)}
	}
	return m.retentionGen
}
