// Package e2e holds Ordinal's end-to-end tests: `ordinal controller` against a real local control plane
// (etcd, kube-apiserver, kube-controller-manager with its garbage collector, kube-scheduler and kwok as the
// kubelet), started by scripts/cluster-up.sh.
//
// The tests carry the build tag `e2e`, so `go test ./...` does not run them. `make e2e` starts the cluster,
// builds bin/ordinal, runs `go test -tags e2e ./e2e/` and stops the cluster. By hand:
//
//	scripts/cluster-up.sh && go build -o bin/ordinal ./cmd/ordinal
//	go test -tags e2e -count=1 -v ./e2e/
//	scripts/cluster-down.sh
//
// Environment: ORDINAL_E2E_KUBECONFIG (default $LOCALK8S_RUN/kubeconfig, LOCALK8S_RUN defaulting to
// /tmp/ordinal-localk8s), ORDINAL_E2E_BIN (default bin/ordinal), ORDINAL_E2E_ARTIFACTS (controller logs;
// default build/e2e), ORDINAL_E2E_KEEP=1 keeps the test namespaces, ORDINAL_E2E_CLEANUP_WAIT (default 30s)
// bounds the wait at the end for the deleted test namespaces to be gone. AUDIT_LOG (default
// $LOCALK8S_RUN/logs/audit.log, as scripts/cluster-up.sh) is the API server's audit log, which
// TestShardedChaos reads (and fails without).
package e2e
