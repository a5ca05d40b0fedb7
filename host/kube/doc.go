// Package kube holds what the API server defines, once, for every part of the host that reads typed
// objects: a pod's readiness. (A member's ordinal is internal/ordinal's, shared with the module;
// defaulting, validation and listing order of the replay's generic objects live with them in host/replay.)
package kube
