package firewall

import (
	"fmt"

	"github.com/ordinal-dev/ordinal/abi"
)

// checkStatus: the only write to the set's kind is updateStatus of this set. (The host builds the
// request body from the snapshot's set with the plan's status, so nothing else of the object counts.)
func checkStatus(s *Scope, a *abi.Action) (Rule, string) {
	if a.Name != s.Name {
		return RuleStatus, fmt.Sprintf("status update of %s %s: only this set's (%s) status may be written", a.Kind, a.Name, s.Name)
	}
	return "", ""
}
