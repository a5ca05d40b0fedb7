// Package ordinal is the root of the Ordinal module: the Kubernetes StatefulSet controller's
// reconcile logic as a WebAssembly module (guest/), the contract (abi/) and the Go host (host/).
// See README.md.
package ordinal
