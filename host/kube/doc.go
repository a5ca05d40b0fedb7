// Package kube holds what upstream and the API server define, once, for every part of the host: a pod's
// readiness, for typed pods (controller, webhook, plugin) and for generic-JSON pods (replay). (A member's
// ordinal is internal/ordinal's, shared with the module; defaulting, validation and listing order of the
// replay's generic objects live with them in host/replay.)
package kube
