package firewall

import (
	"fmt"
	"strings"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// Names are read with internal/ordinal, the parser the module itself uses (upstream's
// getParentNameAndOrdinal): a name the module counts as the set's, the firewall counts too. A name whose
// digits overflow an int32 (web-99999999999999999999) is the set's member with ordinal -1: upstream adopts
// such a pod and deletes it as out of range, and so must the firewall let the module do.

// isMember reports whether upstream counts a pod of this name as a member of the set (isMemberOf: the
// parent of <parent>-<digits> is the set's name), whatever its ordinal.
func (s *Scope) isMember(name string) bool {
	parent, _ := ordinal.Parse(name)
	return parent != "" && parent == s.Name
}

// isCreatableName reports whether name is exactly <parent>-<n> as upstream writes it, for an ordinal n the
// set's spec asks for: the only names upstream creates.
func (s *Scope) isCreatableName(name, parent string) bool {
	p, n := ordinal.Parse(name)
	return p == parent && n >= 0 && ordinal.Name(parent, n) == name && s.inRange(n)
}

// claimParent returns <template>-<set> when name is a claim upstream names for one of the set's
// volumeClaimTemplates and some ordinal of a member pod: <template>-<set>-<n>, n as upstream formats it
// (%d), the -1 of an out-of-range member included.
func (s *Scope) claimParent(name string) (string, bool) {
	for _, t := range s.ClaimTemplates {
		p := t + "-" + s.Name
		rest, ok := strings.CutPrefix(name, p+"-")
		if !ok {
			continue
		}
		if rest == "-1" {
			return p, true
		}
		if _, n := ordinal.Parse(name); n >= 0 && ordinal.Name(p, n) == name {
			return p, true
		}
	}
	return "", false
}

// isRevisionName reports whether name is <set>-<hash>: a non-empty suffix without "-".
func (s *Scope) isRevisionName(name string) bool {
	p := s.Name + "-"
	return strings.HasPrefix(name, p) && len(name) > len(p) && !strings.Contains(name[len(p):], "-")
}

// inRange reports whether ordinal n is one the set's spec asks for: upstream's, or one its
// reserve-ordinals annotation leaves.
func (s *Scope) inRange(n int64) bool {
	return n >= int64(s.Start) && n < int64(s.Start)+int64(s.Replicas) || s.reserved != nil && s.reserved.Contains(n)
}

// members says which ordinals inRange allows, for a refusal's reason.
func (s *Scope) members() string {
	m := fmt.Sprintf("[%d, %d)", s.Start, s.Start+s.Replicas)
	if s.reserved != nil {
		m += fmt.Sprintf(" or, as %s has it, the first %d from %d it leaves (up to %d)", abi.AnnotationReserveOrdinals, s.Replicas, s.Start, s.reserved.End()-1)
	}
	return m
}
