package kube

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/ordinal-dev/ordinal/host/crd"
	"github.com/ordinal-dev/ordinal/internal/fieldcheck"
)

// UnknownFields returns the fields of obj (a Kubernetes object as JSON) that its kind does not have in
// kube-apiserver v1.37 (k8s.io/api's Go types), each with the field most likely meant: what kube-apiserver's
// strict field validation refuses (kubectl --validate=strict) and drops with a warning under Warn. This is
// the one check of the Kubernetes objects the host reads from files: a snapshot's, a kubectl List's, a
// scenario's and a manifest's. kind is the object's (a snapshot's pods need not say theirs); a StatefulSet
// of a group other than apps is Ordinal's custom kind (host/crd: apps/v1's, plus status.selector). Kinds the
// host does not read, and an object that does not decode as its kind (a string where a number belongs: the
// API server's validation or the module refuses it in its own words), report none.
func UnknownFields(kind string, obj []byte) []fieldcheck.Unknown {
	return new(FieldChecker).UnknownFields(kind, obj)
}

// FieldChecker is UnknownFields for the many objects of one document (a snapshot's thousands of pods):
// objects of one shape are decoded once (fieldcheck.Shapes). The zero value is ready; not safe for
// concurrent use.
type FieldChecker struct{ shapes fieldcheck.Shapes }

// UnknownFields is the package's UnknownFields.
func (c *FieldChecker) UnknownFields(kind string, obj []byte) []fieldcheck.Unknown {
	var v any
	switch kind {
	case "StatefulSet":
		var set appsv1.StatefulSet
		us, err := fieldcheck.Check(obj, &set)
		if err != nil || !customGroup(set.APIVersion) {
			return us
		}
		v = (*crd.StatefulSet)(nil)
	case "Pod":
		v = (*corev1.Pod)(nil)
	case "PersistentVolumeClaim":
		v = (*corev1.PersistentVolumeClaim)(nil)
	case "ControllerRevision":
		v = (*appsv1.ControllerRevision)(nil)
	case "PodDisruptionBudget":
		v = (*policyv1.PodDisruptionBudget)(nil)
	case "Node":
		v = (*corev1.Node)(nil)
	default:
		return nil
	}
	us, _ := c.shapes.Check(obj, v) // v is allocated only for a shape not found clean before
	return us
}

// customGroup reports whether a StatefulSet's apiVersion names a group other than apps (none is apps/v1's).
func customGroup(apiVersion string) bool {
	group, _, ok := strings.Cut(apiVersion, "/")
	return ok && group != "apps"
}
