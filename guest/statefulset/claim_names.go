package statefulset

import (
	"slices"
	"strings"
)

// podClaimNames is the names of a pod's claims, claimName of each of the set's claim templates at the pod's
// ordinal. Every sync asks for them for every pod (storageMatches, claimsMatchRetentionPolicy); a pod the
// instance holds is copied into each sync with the same *podClaimNames, so they are built once per pod, not
// once per pod per sync (two string allocations each, most of a held sync's garbage under TinyGo).
type podClaimNames struct {
	set     string // what they were built for: the set's name, its templates and the ordinal
	tmpls   []string
	ordinal int64
	names   []string
}

// claimNamesOf is p's claim names, one per template of the set, in the templates' order.
func (s *syncer) claimNamesOf(p *pod) []string {
	c := p.claimNames
	if c == nil { // a pod the controller made: nothing to share
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
