package snapshot

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/host/kube/kubetest"
)

// The informer transform keeps who wrote what when, and of the field sets only the answers otherController
// reads, as shared field sets (nothing per object): the snapshot, built from the informers' objects, never
// carries managedFields (Build drops them).
func TestInformerTransformTrimsManagedFields(t *testing.T) {
	fields := func(raw string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(raw)} }
	p := kubetest.Pod("web-0", "ns", nil, kubetest.ControllerRef("StatefulSet", "web", "set-uid"))
	p.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fields(`{"f:metadata":{"f:labels":{}}}`)},
		{Manager: "ordinal", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(`{"f:metadata":{"f:ownerReferences":{"k:{\"uid\":\"set-uid\"}":{}}}}`)},
		{Manager: "other", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(`{"f:metadata":{"f:ownerReferences":{"k:{\"uid\":\"cm-uid\"}":{}}}}`)},
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: fields(`{"f:status":{"f:phase":{}}}`)},
	}
	set := kubetest.Set()
	set.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: fields(`{"f:status":{"f:readyReplicas":{},"f:conditions":{}}}`)},
		{Manager: "e2e.test", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: fields(`{"f:status":{"f:conditions":{"k:{\"type\":\"X\"}":{}}}}`)},
	}
	wantRef := []bool{false, true, false, false}
	wantStatus := []bool{true, false}
	check := func(what string) {
		for i, e := range p.ManagedFields {
			if got := OwnsControllerRef(e, "set-uid"); got != wantRef[i] {
				t.Errorf("%s: pod entry of %s owns the controller reference: %v, want %v", what, e.Manager, got, wantRef[i])
			}
		}
		for i, e := range set.ManagedFields {
			if got := OwnsControllerStatus(e); got != wantStatus[i] {
				t.Errorf("%s: set entry of %s owns controller status: %v, want %v", what, e.Manager, got, wantStatus[i])
			}
		}
	}
	check("full field sets")
	if _, err := TrimManagedFields(p); err != nil {
		t.Fatal(err)
	}
	if _, err := TrimManagedFields(set); err != nil {
		t.Fatal(err)
	}
	check("trimmed")
	if mf := p.ManagedFields; mf[0].Manager != "kubectl" || mf[0].FieldsV1 != nil || mf[1].FieldsV1 != controllerRefFields || mf[2].FieldsV1 != nil {
		t.Errorf("the pod's entries trimmed to %+v, want the controller reference's shared set for ordinal's alone", mf)
	}
	if mf := set.ManagedFields; mf[0].FieldsV1 != controllerStatusFields || mf[1].FieldsV1 != otherStatusFields {
		t.Errorf("the set's entries trimmed to %+v, want the shared status sets", mf)
	}
	if _, err := TrimManagedFields(p); err != nil { // informers may see an object twice: the same answers
		t.Fatal(err)
	}
	check("trimmed twice")
}
