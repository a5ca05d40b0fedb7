package snapshot

import (
	"bytes"
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TrimManagedFields is kube-controller-manager's informer transform (cmd/kube-controller-manager/app),
// which drops managedFields to save memory, except that it keeps who wrote what when (each entry's
// manager, operation, subresource and time) and, in place of its field set (the bulk), one of three shared
// field sets that give the same answers to OwnsControllerStatus and OwnsControllerRef: the controller's
// otherController reads them. Nothing is allocated per object. Snapshots carry none (Build).
func TrimManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil && accessor.GetManagedFields() != nil {
		var controller types.UID
		if ref := metav1.GetControllerOfNoCopy(accessor); ref != nil {
			controller = ref.UID
		}
		mf := accessor.GetManagedFields()
		for i := range mf {
			mf[i].FieldsV1 = trimmedFields(mf[i], controller)
		}
		accessor.SetManagedFields(mf)
	}
	return obj, nil
}

// The shared field sets TrimManagedFields keeps: what the entry's full set answered.
var (
	controllerStatusFields = &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:replicas":{}}}`)}
	otherStatusFields      = &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}
	// not a path of a real field set: the owner reference the entry owns is the object's controller's
	controllerRefFields = &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:ownerReferences":{"controller":{}}}}`)}
)

func trimmedFields(e metav1.ManagedFieldsEntry, controller types.UID) *metav1.FieldsV1 {
	switch {
	case e.Subresource == "status" && OwnsControllerStatus(e):
		return controllerStatusFields
	case e.Subresource == "status":
		return otherStatusFields
	case controller != "" && OwnsControllerRef(e, controller):
		return controllerRefFields
	}
	return nil
}

// The field managers of Ordinal's writes: its controller's (host/controller.FieldManager) and kubectl
// ordinal migrate's (host/controller.MigrateFieldManager). Here, below both, so that a preview can tell
// Ordinal's status writes from another controller's.
const (
	OrdinalFieldManager        = "ordinal"
	OrdinalMigrateFieldManager = "kubectl-ordinal-migrate"
)

// StatusWriter is the field manager that last wrote the fields of the set's status a StatefulSet controller
// computes (OwnsControllerStatus), or "" when the managedFields name none.
func StatusWriter(set *appsv1.StatefulSet) string {
	var last metav1.ManagedFieldsEntry
	for _, m := range set.ManagedFields {
		if m.Subresource == "status" && m.Operation == metav1.ManagedFieldsOperationUpdate && m.Time != nil &&
			OwnsControllerStatus(m) && (last.Time == nil || m.Time.After(last.Time.Time)) {
			last = m
		}
	}
	return last.Manager
}

// controllerStatus are the status fields a StatefulSet controller computes from the set's pods and
// revisions: all of apps/v1 StatefulSetStatus but conditions, which clients may add to.
var controllerStatus = []string{"f:observedGeneration", "f:replicas", "f:readyReplicas", "f:currentReplicas",
	"f:updatedReplicas", "f:availableReplicas", "f:currentRevision", "f:updateRevision", "f:collisionCount"}

// OwnsControllerStatus reports whether a managedFields entry owns a status field a controller computes.
// An Update's manager owns the fields its write changed, so a client that added a condition owns that
// condition alone. An entry whose field set is absent or unreadable counts (what it wrote cannot be told).
func OwnsControllerStatus(e metav1.ManagedFieldsEntry) bool {
	var fields struct {
		Status map[string]json.RawMessage `json:"f:status"`
	}
	if e.FieldsV1 == nil || json.Unmarshal(e.FieldsV1.Raw, &fields) != nil {
		return true
	}
	for _, f := range controllerStatus {
		if _, ok := fields.Status[f]; ok {
			return true
		}
	}
	return false
}

// OwnsControllerRef reports whether a managedFields entry owns the object's owner reference to controller
// (the UID of its controller reference): a pod created with it, not one adopted later. An entry without
// its field set answers false.
func OwnsControllerRef(e metav1.ManagedFieldsEntry, controller types.UID) bool {
	if e.FieldsV1 == nil {
		return false
	}
	if bytes.Equal(e.FieldsV1.Raw, controllerRefFields.Raw) {
		return true // trimmed: TrimManagedFields answered for the object's own controller reference
	}
	var fields struct {
		Metadata struct {
			OwnerReferences map[string]json.RawMessage `json:"f:ownerReferences"`
		} `json:"f:metadata"`
	}
	if json.Unmarshal(e.FieldsV1.Raw, &fields) != nil {
		return false
	}
	_, ok := fields.Metadata.OwnerReferences[`k:{"uid":"`+string(controller)+`"}`]
	return ok
}
