// Package crd is Ordinal's own StatefulSet kind, ordinal.dev/v1 StatefulSet (the CustomResourceDefinition
// statefulsets.ordinal.dev): apps/v1's spec and status under another API group, so that Ordinal can run
// where kube-controller-manager's own StatefulSet controller cannot be turned off ("CRD mode").
//
// The CRD manifest (statefulsets.ordinal.dev.yaml, embedded as Manifest) is generated from the Go types of
// types.go by controller-gen (`make crd`), never written by hand; RATIONALE.md says why.
//
// +groupName=ordinal.dev
// +versionName=v1
package crd
