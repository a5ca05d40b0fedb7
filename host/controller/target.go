package controller

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Target is the kind of object the controller reconciles. Everything in this
// package that depends on the kind (the ownerReference kind it resolves and
// adopts under, the apiVersion/kind stamped on the snapshot's set, the REST
// path of the uncached adoption re-check and of updateStatus) reads it from
// here. Only apps/v1 StatefulSet is implemented; a CRD mode (a StatefulSet
// look-alike under another group, for clusters where the built-in controller
// cannot be disabled) would add a Target and an informer over that resource.
type Target struct {
	GroupVersion schema.GroupVersion
	Kind         string
	Resource     string // plural, as in the REST path
}

// StatefulSetTarget is the built-in apps/v1 StatefulSet.
var StatefulSetTarget = Target{
	GroupVersion: schema.GroupVersion{Group: "apps", Version: "v1"},
	Kind:         "StatefulSet",
	Resource:     "statefulsets",
}

// APIVersion is the target's apiVersion string ("apps/v1").
func (t Target) APIVersion() string { return t.GroupVersion.String() }

// GroupResource is the target's group and resource (for the consistency store).
func (t Target) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: t.GroupVersion.Group, Resource: t.Resource}
}

// Group resources of the objects the module plans writes for.
var (
	podResource      = schema.GroupResource{Resource: "pods"}
	claimResource    = schema.GroupResource{Resource: "persistentvolumeclaims"}
	revisionResource = schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}
)

// resourceFor maps a plan action's kind to its group/version/resource.
func (c *Controller) resourceFor(kind string) (schema.GroupVersionResource, bool) {
	return resourceForKind(c.target, kind)
}

func resourceForKind(t Target, kind string) (schema.GroupVersionResource, bool) {
	switch kind {
	case "Pod":
		return schema.GroupVersionResource{Version: "v1", Resource: "pods"}, true
	case "PersistentVolumeClaim":
		return schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, true
	case "ControllerRevision":
		return schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}, true
	case t.Kind:
		return t.GroupVersion.WithResource(t.Resource), true
	}
	return schema.GroupVersionResource{}, false
}
