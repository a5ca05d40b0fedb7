package firewall

import (
	"strconv"
	"strings"
)

// podOrdinal returns n when name is <set>-<n>, n all digits: a pod upstream counts as a member of the
// set (isMemberOf: the name parses and its parent is the set).
func (s *Scope) podOrdinal(name string) (int, bool) {
	return ordinalAfter(name, s.Name+"-")
}

// isCreatableName reports whether name is exactly <prefix><n> with n as upstream writes it
// (strconv.Itoa) and n one of the ordinals the set's spec asks for: the only names upstream creates.
func (s *Scope) isCreatableName(name, prefix string) bool {
	n, ok := ordinalAfter(name, prefix)
	return ok && strconv.Itoa(n) == name[len(prefix):] && s.inRange(n)
}

// claimPrefix returns <template>-<set>- when name is <template>-<set>-<n> for one of the set's
// volumeClaimTemplates.
func (s *Scope) claimPrefix(name string) (string, bool) {
	for _, t := range s.ClaimTemplates {
		p := t + "-" + s.Name + "-"
		if _, ok := ordinalAfter(name, p); ok {
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

// inRange reports whether ordinal n is one the set's spec asks for.
func (s *Scope) inRange(n int) bool { return n >= s.Start && n < s.Start+s.Replicas }

func ordinalAfter(name, prefix string) (int, bool) {
	if !strings.HasPrefix(name, prefix) {
		return 0, false
	}
	digits := name[len(prefix):]
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	return n, true
}
