// Package kube holds what upstream and the API server define, once, for every part of the host: a pod's
// readiness, for typed pods (controller, webhook, plugin) and for generic-JSON pods (replay); a rolling
// update's maxUnavailable; and kube-apiserver's defaulting (defaults.go) and validation (validation.go) of a
// StatefulSet, its pods and its claims as generic JSON, held to kube-apiserver's own answers
// (testdata/apiserver-defaults), which the replay's in-memory API server stores objects with and the
// controller applies to a CRD-kind set the API server does not default or validate. (A member's ordinal is
// internal/ordinal's, shared with the module; the listing order of the replay's objects lives in host/replay.)
package kube
