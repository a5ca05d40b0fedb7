package annotation

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

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
		{"Ordinal's controller since", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", 1, counts), entry(snapshot.OrdinalFieldManager, 2, counts)}, ann, ""},
		{"migrated", []metav1.ManagedFieldsEntry{entry(snapshot.OrdinalMigrateFieldManager, 1, counts)}, ann, ""},
		{"a client's condition since", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", 1, counts), entry("kubectl", 3, condition)}, ann, "kube-controller-manager"},
		{"no status writer", nil, ann, ""},
		// kubectl ordinal pause of an apps/v1 set kube-controller-manager runs: the partition holds it there,
		// and the annotation is only the partition to restore on resume, asking nothing of the controller
		{"paused by kubectl ordinal pause", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", 1, counts)},
			map[string]string{"ordinal.dev/paused-partition": "0"}, ""},
		{"the policies' hold record alone", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", 1, counts)},
			map[string]string{"ordinal.dev/policy-held": "{}"}, ""},
		// a Helm value left unset: no annotation (abi.EnumAnnotation)
		{"an empty pod-update-policy", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", 1, counts)},
			map[string]string{"ordinal.dev/pod-update-policy": ""}, ""},
		{"paused, and an extension asked", []metav1.ManagedFieldsEntry{entry("kube-controller-manager", 1, counts)},
			map[string]string{"ordinal.dev/paused-partition": "0", "ordinal.dev/pod-update-policy": "InPlaceIfPossible"}, "kube-controller-manager"},
	} {
		set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", ManagedFields: c.entries}}
		if got := OtherController(set, c.ann); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
