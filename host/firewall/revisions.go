package firewall

import (
	"encoding/json"
	"fmt"

	"github.com/ordinal-dev/ordinal/abi"
)

// checkRevision: revisions named <set>-<hash> are created with the set as controller; only revisions
// the set controls are updated (renumbered on rollback), released or deleted (history truncation);
// only orphans the set may adopt are adopted.
func (st *planState) checkRevision(a *abi.Action) (Rule, string) {
	s := st.s
	if a.Verb == abi.VerbCreate {
		m, rule, reason := s.decodeObject(a)
		if rule != "" {
			return rule, reason
		}
		if !s.isRevisionName(a.Name) {
			return RuleName, fmt.Sprintf("a revision the set creates is named %s-<hash>", s.Name)
		}
		if rule, reason := s.checkCreateOwner(m); rule != "" {
			return rule, reason
		}
		var o struct {
			Data json.RawMessage `json:"data"`
		}
		if err := decodeWire(a.Object, &o); err != nil {
			return RuleObject, "object does not decode: " + err.Error()
		}
		// upstream creates one revision: the update revision, of the set's template (a revision of another
		// template would give the pods created from it images the set never had: created_pods.go)
		if !s.dataHoldsSetTemplate(o.Data) {
			return RuleObject, "a created revision holds the set's spec.template (with \"$patch\":\"replace\")"
		}
		st.createdRevisions[a.Name] = o.Data
		return "", ""
	}
	target := s.Revisions[a.Name]
	if target == nil {
		return RuleOwner, "the revision is not in the snapshot: the set cannot be shown to own it"
	}
	switch a.Verb {
	case abi.VerbPatch:
		return st.checkOwnerPatch(abi.KindControllerRevision, a, target, func() bool { return true })
	case abi.VerbUpdate:
		if !st.owned(abi.KindControllerRevision, target) {
			return RuleOwner, "the revision is not controlled by this set"
		}
		m, rule, reason := s.decodeObject(a)
		if rule != "" {
			return rule, reason
		}
		if rule, reason := checkUpdateIdentity(target, m); rule != "" {
			return rule, reason
		}
		return s.checkRevisionData(a)
	case abi.VerbDelete:
		if !st.owned(abi.KindControllerRevision, target) {
			return RuleOwner, "the revision is not controlled by this set"
		}
	}
	return "", ""
}
