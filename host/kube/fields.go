package kube

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/ordinal-dev/ordinal/host/crd"
	"github.com/ordinal-dev/ordinal/internal/fieldcheck"
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// UnknownFields returns the fields of obj (a Kubernetes object as JSON) that its kind does not have in
// kube-apiserver v1.37 (k8s.io/api's Go types), each with the field most likely meant: what kube-apiserver's
// strict field validation refuses (kubectl --validate=strict) and drops with a warning under Warn. This is
// the one check of the Kubernetes objects the host reads from files: a snapshot's, a kubectl List's, a
// scenario's and a manifest's. kind is the object's (a snapshot's pods need not say theirs); a StatefulSet
// of a group other than apps is Ordinal's custom kind (host/crd: apps/v1's, plus status.selector). Kinds the
// host does not read report none. An object that does not decode as its kind (a string where a number
// belongs: the API server's validation or the module refuses the value in its own words, or, where the
// module does not read it, nobody does) has its fields judged by their names alone: a wrong value hides no
// misspelt field beside it.
func UnknownFields(kind string, obj []byte) []fieldcheck.Unknown {
	return new(FieldChecker).UnknownFields(kind, obj)
}

// FieldChecker is UnknownFields for the many objects of one document (a snapshot's thousands of pods):
// objects of one shape are decoded once (fieldcheck.Shapes). The zero value is ready; not safe for
// concurrent use.
type FieldChecker struct{ shapes fieldcheck.Shapes }

// UnknownFields is the package's UnknownFields.
func (c *FieldChecker) UnknownFields(kind string, obj []byte) []fieldcheck.Unknown {
	if kind == "StatefulSet" { // its type is its apiVersion's, read from the validated text
		t, err := jsonv.Validate(obj)
		if err != nil {
			return nil // not JSON: no field to judge
		}
		us, _ := c.UnknownFieldsOfValue(kind, t)
		return us
	}
	v := typeOf(kind)
	if v == nil {
		return nil
	}
	us, _ := c.shapes.Check(obj, v) // v is allocated only for a shape not found clean before
	return us
}

// UnknownFieldsOfValue is UnknownFields for the object t starts with, in text jsonv.Validate accepted that
// may go on past it (the next pod of a snapshot's list): end is where the object ends, found by the walk
// that reads its shape, so a snapshot's objects are read once.
func (c *FieldChecker) UnknownFieldsOfValue(kind string, t jsonv.Text) (us []fieldcheck.Unknown, end int) {
	v := typeOf(kind)
	if kind == "StatefulSet" {
		v = setType(t)
	}
	if v == nil {
		return nil, t.ValueEnd()
	}
	us, end, _ = c.shapes.CheckValid(t, v)
	return us, end
}

// setType is the Go type of the StatefulSet t starts with: apps/v1's, or Ordinal's custom kind's, by its
// apiVersion (read as Go's decoder reads it: the last one given).
func setType(t jsonv.Text) any {
	if t.Kind() == jsonv.Object {
		var apiVersion [1]jsonv.Text
		t.MembersInto([]string{"apiVersion"}, apiVersion[:])
		if customGroup(apiVersion[0].Str()) { // Str: "" for what is not a string
			return (*crd.StatefulSet)(nil)
		}
	}
	return (*appsv1.StatefulSet)(nil)
}

// typeOf is a nil pointer of the Go type of kind's objects (nil for a kind the host does not read):
// fieldcheck.Shapes allocates one only for a shape it decodes.
func typeOf(kind string) any {
	switch kind {
	case "Pod":
		return (*corev1.Pod)(nil)
	case "PersistentVolumeClaim":
		return (*corev1.PersistentVolumeClaim)(nil)
	case "ControllerRevision":
		return (*appsv1.ControllerRevision)(nil)
	case "PodDisruptionBudget":
		return (*policyv1.PodDisruptionBudget)(nil)
	case "Node":
		return (*corev1.Node)(nil)
	}
	return nil
}

// customGroup reports whether a StatefulSet's apiVersion names a group other than apps (none is apps/v1's).
func customGroup(apiVersion string) bool {
	group, _, ok := strings.Cut(apiVersion, "/")
	return ok && group != "apps"
}
