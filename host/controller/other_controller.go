package controller

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// FieldManager is the field manager of every write the controller makes (the fieldManager parameter):
// what tells its writes from another controller's in the objects' managedFields.
const FieldManager = snapshot.OrdinalFieldManager

// MigrateFieldManager is the field manager of `kubectl ordinal migrate`'s writes. The status it carries
// over to the new set is the set's history under its previous controller, not another controller acting:
// a controller already running when a set is migrated to it must take the set on (found by the chaos
// runs: it left the migrated set alone for good).
const MigrateFieldManager = snapshot.OrdinalMigrateFieldManager

// EventOtherController is the reason of the Warning event on a set this controller leaves alone because
// another controller acts on it too.
const EventOtherController = "OtherControllerActive"

// otherController reports another controller acting on the set, which would otherwise fight this one
// (kube-controller-manager's StatefulSet controller, where it cannot be turned off): the set's status
// written by another field manager later than by this one and since this controller started, where that
// write set what a StatefulSet controller computes (snapshot.OwnsControllerStatus), or a pod created since this
// controller started by another field manager that gave it the set as its controller (createdAsMember).
// Writes before the start (the set's history under its previous controller) do not count, and neither do a
// client's: a condition added to the status (upstream's Conformance "Status endpoints" spec does just that,
// and kube-controller-manager goes on acting on the set) or a pod the set adopted.
func otherController(set *appsv1.StatefulSet, pods []*corev1.Pod, since time.Time) (string, bool) {
	var ours time.Time
	for _, e := range set.ManagedFields {
		if e.Manager == FieldManager && e.Subresource == "status" && e.Time != nil && e.Time.After(ours) {
			ours = e.Time.Time
		}
	}
	after := since
	if ours.After(after) {
		after = ours
	}
	for _, e := range set.ManagedFields {
		if e.Manager != FieldManager && e.Manager != MigrateFieldManager && e.Subresource == "status" && e.Operation == metav1.ManagedFieldsOperationUpdate &&
			e.Time != nil && e.Time.After(after) && snapshot.OwnsControllerStatus(e) {
			return fmt.Sprintf("its status was written by %q at %s", e.Manager, e.Time.UTC().Format(time.RFC3339)), true
		}
	}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.UID != set.UID || !p.CreationTimestamp.After(since) {
			continue
		}
		if creator, ok := createdAsMember(p, set.UID); ok && creator != FieldManager {
			return fmt.Sprintf("pod %s was created by %q at %s", p.Name, creator, p.CreationTimestamp.UTC().Format(time.RFC3339)), true
		}
	}
	return "", false
}

// createdAsMember is the field manager that created the pod with the set as its controller: the manager of
// a main-resource Update entry stamped at the creation time (later edits carry later times) that owns the
// set's owner reference. A pod created without it and adopted later (the set's own write) is not another
// controller's.
func createdAsMember(p *corev1.Pod, setUID types.UID) (string, bool) {
	for _, e := range p.ManagedFields {
		if e.Subresource == "" && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Time != nil &&
			e.Time.Unix() == p.CreationTimestamp.Unix() && snapshot.OwnsControllerRef(e, setUID) {
			return e.Manager, true
		}
	}
	return "", false
}
