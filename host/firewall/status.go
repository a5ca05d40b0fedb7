package firewall

import (
	"encoding/json"
	"fmt"

	sigsjson "sigs.k8s.io/json"

	"github.com/ordinal-dev/ordinal/abi"
)

// checkStatus: the only write to the set's kind is updateStatus of this set (or the rollback patch,
// set_rollback.go), its revisions held to the revision chain (revision_chain.go). (The host builds the
// request body from the snapshot's set with the plan's status, so nothing else of the object counts.)
func (st *planState) checkStatus(a *abi.Action) (Rule, string) {
	s := st.s
	if a.Name != s.Name {
		return RuleStatus, fmt.Sprintf("status update of %s %s: only this set's (%s) status may be written", a.Kind, a.Name, s.Name)
	}
	var o struct {
		Status json.RawMessage `json:"status"`
	}
	if err := decodeWire(a.Object, &o); err != nil {
		return RuleObject, "status object does not decode: " + err.Error()
	}
	if len(o.Status) == 0 || o.Status[0] != '{' {
		return RuleObject, "an updateStatus object carries the set's status as an object under \"status\""
	}
	var revs statusRevisions // its keys were checked with the object's (decodeWire)
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(o.Status, &revs); err != nil {
		return RuleObject, "status does not decode: " + err.Error()
	}
	return st.checkStatusRevisions(revs)
}
