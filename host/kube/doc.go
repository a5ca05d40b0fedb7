// Package kube holds the things the API server or the upstream controller define, once, for every part of
// the host: a pod's readiness, a StatefulSet pod's ordinal, the order names are listed in. (Defaulting and
// validation of the replay's generic objects live with them in host/replay.)
package kube
