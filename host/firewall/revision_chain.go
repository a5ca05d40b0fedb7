package firewall

import (
	"encoding/json"
	"fmt"
	"reflect"

	sigsjson "sigs.k8s.io/json"

	"github.com/ordinal-dev/ordinal/abi"
)

// The revision chain. Extension progress-deadline's rollback writes into the set the template of the
// revision its status names current, so the firewall must know that revision is one the set ran, not one a
// module made up: it holds the module to what upstream does with revisions and the status, which makes the
// current revision always a template the set once had.
//   - a revision's data never changes (upstream only renumbers a revision: UpdateControllerRevision);
//   - a status write names as update revision one whose template is the set's spec.template, and as current
//     revision the one the snapshot's status names or the update revision (upstream's only two moves).
// Both held in all 1,170 status writes of the conformance corpus. Another client writing the status is out
// of this reach, as is anyone who can edit the set's spec.

// SetRevisionData gives the firewall the data of the snapshot's ControllerRevisions (the raw
// `data` member, as the snapshot carries it), by name; a host that builds the scope object by object sets it.
func (s *Scope) SetRevisionData(f func(name string) []byte) { s.revisionDataOf = f }

// revisionTemplate is a revision's whole pod template ("$patch":"replace" dropped), decoded as the API
// server decodes; false when data holds none.
func revisionTemplate(data []byte) (any, bool) {
	var d struct {
		Spec struct {
			Template map[string]any `json:"template"`
		} `json:"spec"`
	}
	if decodeWire(data, &d) != nil || d.Spec.Template == nil || d.Spec.Template["$patch"] != "replace" {
		return nil, false
	}
	delete(d.Spec.Template, "$patch")
	return d.Spec.Template, true
}

// setTemplate is the snapshot's spec.template, decoded once.
func (s *Scope) setTemplateDecoded() any {
	if !s.setTemplateRead {
		s.setTemplateRead = true
		var set struct {
			Spec struct {
				Template json.RawMessage `json:"template"`
			} `json:"spec"`
		}
		if sigsjson.UnmarshalCaseSensitivePreserveInts(s.setJSON, &set) == nil && len(set.Spec.Template) > 0 {
			_ = sigsjson.UnmarshalCaseSensitivePreserveInts(set.Spec.Template, &s.setTemplate)
		}
	}
	return s.setTemplate
}

// checkRevisionData: a revision update keeps the snapshot revision's data.
func (s *Scope) checkRevisionData(a *abi.Action) (Rule, string) {
	var o struct {
		Data json.RawMessage `json:"data"`
	}
	if err := decodeWire(a.Object, &o); err != nil {
		return RuleObject, "object does not decode: " + err.Error()
	}
	if !sameJSON(o.Data, s.dataOf(a.Name)) {
		return RuleObject, "a revision update changes its number only, never its data"
	}
	return "", ""
}

func (s *Scope) dataOf(name string) []byte {
	if d, ok := s.revisionData[name]; ok {
		return d
	}
	if s.revisionDataOf != nil {
		return s.revisionDataOf(name)
	}
	return nil
}

// statusRevisions is what the chain reads of a status write.
type statusRevisions struct {
	CurrentRevision string `json:"currentRevision"`
	UpdateRevision  string `json:"updateRevision"`
}

// checkStatusRevisions holds a status write's revisions to the chain above (the revisions the plan created
// before it count, with their data).
func (st *planState) checkStatusRevisions(v statusRevisions) (Rule, string) {
	s := st.s
	if v.CurrentRevision != s.currentRevision && v.CurrentRevision != v.UpdateRevision {
		return RuleStatus, fmt.Sprintf("status currentRevision %.64q: it stays %q or becomes the update revision %.64q", v.CurrentRevision, s.currentRevision, v.UpdateRevision)
	}
	if v.UpdateRevision == "" || v.UpdateRevision == s.updateRevision {
		return "", ""
	}
	data, ok := st.createdRevisions[v.UpdateRevision]
	if !ok {
		data = s.dataOf(v.UpdateRevision)
	}
	t, ok := revisionTemplate(data)
	if !ok || !reflect.DeepEqual(t, s.setTemplateDecoded()) {
		return RuleStatus, fmt.Sprintf("status updateRevision %.64q: the update revision holds the set's spec.template", v.UpdateRevision)
	}
	return "", ""
}

// sameJSON compares two JSON values as decoded (absent and null alike).
func sameJSON(a, b []byte) bool {
	var x, y any
	if len(a) > 0 && sigsjson.UnmarshalCaseSensitivePreserveInts(a, &x) != nil {
		return false
	}
	if len(b) > 0 && sigsjson.UnmarshalCaseSensitivePreserveInts(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
