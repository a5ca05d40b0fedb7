package preview

import "testing"

// A create over existing pods counts the pods the replay adopted, by upstream's adoption patch (a controller
// ownerReference set), not by a patch that merely names ownerReferences: ReleasePod's does too, to remove one.
func TestAdoptsPod(t *testing.T) {
	for _, tc := range []struct {
		name, patch string
		want        bool
	}{
		{"AdoptPod", `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"u1","controller":true,"blockOwnerDeletion":true}],"uid":"p1"}}`, true},
		{"ReleasePod", `{"metadata":{"uid":"p1","ownerReferences":[{"$patch":"delete","uid":"u1"}]}}`, false},
		{"a reference that is no controller's", `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"u2"}]}}`, false},
		{"another patch", `{"metadata":{"labels":{"app":"web"}}}`, false},
		{"not JSON", `owners=[StatefulSet/web]`, false},
	} {
		if got := adoptsPod(tc.patch); got != tc.want {
			t.Errorf("%s: adoptsPod = %t, want %t", tc.name, got, tc.want)
		}
	}
}
