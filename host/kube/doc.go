// Package kube holds what the API server defines, once, for every part of the host: a pod's readiness and
// the natural order the replay's in-memory API server lists names in. (A member's ordinal is
// internal/ordinal's, shared with the module; defaulting and validation of the replay's generic objects
// live with them in host/replay.)
package kube
