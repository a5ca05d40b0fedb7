package preview

import (
	"testing"

	"github.com/ordinal-dev/ordinal/host/replay"
)

// A create over existing pods counts the pods the replay adopted, by upstream's adoption patch (a controller
// ownerReference set), not by a patch that merely names ownerReferences: ReleasePod's does too, to remove one.
// The replay's record of the write says which (ActionRecord.Ownership, from the patch it keeps), and its
// text says it in words.
func TestAdoptsPod(t *testing.T) {
	for _, tc := range []struct {
		name, kind, patch string
		want              replay.Ownership
	}{
		{"AdoptPod", "Pod", `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"u1","controller":true,"blockOwnerDeletion":true}],"uid":"p1"}}`, replay.OwnershipAdopt},
		{"ReleasePod", "Pod", `{"metadata":{"uid":"p1","ownerReferences":[{"$patch":"delete","uid":"u1"}]}}`, replay.OwnershipRelease},
		{"a reference that is no controller's", "Pod", `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"u2"}]}}`, replay.OwnershipNone},
		{"another patch", "Pod", `{"metadata":{"labels":{"app":"web"}}}`, replay.OwnershipNone},
		{"not JSON", "Pod", `owners=[StatefulSet/web]`, replay.OwnershipNone},
		{"a ControllerRevision's adoption (no pod's)", "ControllerRevision", `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"u1","controller":true,"blockOwnerDeletion":true}],"uid":"r1"}}`, replay.OwnershipNone},
		{"a claim's adoption-like patch", "PersistentVolumeClaim", `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"u1","controller":true}]}}`, replay.OwnershipNone},
	} {
		r := replay.ActionRecord{Verb: "patch", Kind: tc.kind, Name: "web-0", Patch: []byte(tc.patch)}
		if got := r.Ownership(); got != tc.want {
			t.Errorf("%s: Ownership = %d, want %d", tc.name, got, tc.want)
		}
	}
}
