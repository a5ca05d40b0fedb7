package snapshot

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
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

// The controller that keeps a set's status is the last writer of the fields a StatefulSet controller computes;
// it is another controller only when that is not Ordinal's and the set names ordinal.dev/ annotations.
func TestOtherController(t *testing.T) {
	at := func(min int) *metav1.Time {
		tm := metav1.NewTime(time.Date(2026, 11, 30, 6, min, 0, 0, time.UTC))
		return &tm
	}
	entry := func(manager string, min int, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status",
			Time: at(min), FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	counts := `{"f:status":{"f:replicas":{},"f:readyReplicas":{}}}`
	condition := `{"f:status":{"f:conditions":{}}}`
	ann := map[string]string{"ordinal.dev/pod-update-policy": "InPlaceIfPossible"}
	for _, c := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		ann     map[string]string
		want    string
	}{
		{"kube-controller-manager's counts", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", 1, counts)}, ann, "kube-controller-manager"},
		{"no ordinal.dev/ annotation", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", 1, counts)}, map[string]string{"team": "db"}, ""},
		{"Ordinal's controller since", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", 1, counts), entry(OrdinalFieldManager, 2, counts)}, ann, ""},
		{"migrated", []metav1.ManagedFieldsEntry{entry(OrdinalMigrateFieldManager, 1, counts)}, ann, ""},
		{"a client's condition since", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", 1, counts), entry("kubectl", 3, condition)}, ann, "kube-controller-manager"},
		{"no status writer", nil, ann, ""},
		// kubectl ordinal pause of an apps/v1 set kube-controller-manager runs: the partition holds it there,
		// and the annotation is only the partition to restore on resume, asking nothing of the controller
		{"paused by kubectl ordinal pause", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", 1, counts)},
			map[string]string{"ordinal.dev/paused-partition": "0"}, ""},
		{"the policies' hold record alone", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", 1, counts)},
			map[string]string{"ordinal.dev/policy-held": "{}"}, ""},
		{"paused, and an extension asked", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", 1, counts)},
			map[string]string{"ordinal.dev/paused-partition": "0", "ordinal.dev/pod-update-policy": "InPlaceIfPossible"}, "kube-controller-manager"},
	} {
		set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", ManagedFields: c.entries}}
		if got := OtherController(set, c.ann); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
