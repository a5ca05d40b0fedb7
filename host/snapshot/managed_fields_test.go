package snapshot

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
)

// The informer transform keeps who wrote what when (otherController reads it), not the field sets: the
// snapshot, built from the informers' objects, never carries managedFields (Build drops them).
func TestInformerTransformTrimsManagedFields(t *testing.T) {
	p := kubetest.Pod("web-0", "ns", nil, kubetest.ControllerRef("StatefulSet", "web", "set-uid"))
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{}}`)}}}
	obj, _ := TrimManagedFields(p)
	if got := obj.(*corev1.Pod).ManagedFields; len(got) != 1 || got[0].Manager != "kubectl" || got[0].FieldsV1 != nil {
		t.Errorf("the informer transform kept %+v, want the entry without its fields", got)
	}
}
