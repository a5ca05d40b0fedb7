package firewall

import (
	"encoding/json"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
)

// The one write to the set besides its status: extension progress-deadline's rollback, on a set annotated
// ordinal.dev/on-progress-deadline: Rollback with a valid ordinal.dev/progress-deadline-seconds. It is a
// JSON patch of exactly two operations: a test that metadata.generation is the snapshot's (an edit made
// since is never overwritten), and the replacement of spec.template by the whole template the
// ControllerRevision named by the set's status.currentRevision holds ("$patch": "replace" dropped). Nothing
// else of the set can be written: not its replicas, strategy, claims or metadata, and no template the set
// never ran.

// rollbackScope is what the rule needs of the set (newScope); the template comes from the revision data
// (revision_chain.go).
type rollbackScope struct {
	on              bool // the annotations ask for a rollback at the deadline
	generation      int64
	currentRevision string
}

func newRollbackScope(set *appsv1.StatefulSet) rollbackScope {
	_, policy, _ := kube.ProgressDeadline(set.Annotations)
	on := policy == "Rollback" && set.DeletionTimestamp == nil &&
		set.Status.CurrentRevision != "" && set.Status.CurrentRevision != set.Status.UpdateRevision
	return rollbackScope{on: on, generation: set.Generation, currentRevision: set.Status.CurrentRevision}
}

type jsonPatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

// checkSetRollback checks a patch of the set against the rule above.
func checkSetRollback(s *Scope, a *abi.Action) (Rule, string) {
	rb := &s.rollback
	var template any
	if rb.on {
		template, _ = revisionTemplate(s.dataOf(rb.currentRevision))
	}
	if template == nil {
		return RuleKindVerb, fmt.Sprintf("a %s is patched only to roll it back, on a set annotated %s: Rollback (with %s) mid-rollout whose current revision holds a whole template",
			a.Kind, abi.AnnotationOnProgressDeadline, abi.AnnotationProgressDeadlineSeconds)
	}
	if a.Name != s.Name {
		return RuleName, fmt.Sprintf("a rollback patches this set (%s), not %.64q", s.Name, a.Name)
	}
	if a.PatchType != "application/json-patch+json" {
		return RulePatch, fmt.Sprintf("patch type %q: a rollback is a JSON patch", a.PatchType)
	}
	const shape = `a rollback patch is [{"op":"test","path":"/metadata/generation","value":<the snapshot's>},{"op":"replace","path":"/spec/template","value":<the current revision's template>}]`
	var raw []map[string]json.RawMessage
	if err := decodeWire(a.Patch, &raw); err != nil || len(raw) != 2 {
		return RulePatch, shape
	}
	ops := make([]jsonPatchOp, 2)
	for i, m := range raw { // keys checked with the patch's (decodeWire)
		if len(m) != 3 || m["op"] == nil || m["path"] == nil || m["value"] == nil ||
			sigsjson.UnmarshalCaseSensitivePreserveInts(m["op"], &ops[i].Op) != nil ||
			sigsjson.UnmarshalCaseSensitivePreserveInts(m["path"], &ops[i].Path) != nil {
			return RulePatch, shape
		}
		ops[i].Value = m["value"]
	}
	var gen any // a number as the API server decodes it (int64); "2", a string, is not the generation
	if ops[0].Op != "test" || ops[0].Path != "/metadata/generation" || sigsjson.UnmarshalCaseSensitivePreserveInts(ops[0].Value, &gen) != nil || gen != rb.generation ||
		ops[1].Op != "replace" || ops[1].Path != "/spec/template" {
		return RulePatch, shape
	}
	var tmpl any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(ops[1].Value, &tmpl); err != nil || !reflect.DeepEqual(tmpl, template) {
		return RulePatch, fmt.Sprintf("a rollback puts back the template of revision %s as it holds it, and nothing else", rb.currentRevision)
	}
	return "", ""
}
