package crd

import "k8s.io/apimachinery/pkg/runtime/schema"

// The kind's names: ordinal.dev/v1 StatefulSet, resource statefulsets (short name osts, category all).
const (
	Group    = "ordinal.dev"
	Version  = "v1"
	Kind     = "StatefulSet"
	Resource = "statefulsets"
	// Name is the CustomResourceDefinition's name, RESOURCE.GROUP.
	Name = Resource + "." + Group
)

// GroupVersion is ordinal.dev/v1.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}
