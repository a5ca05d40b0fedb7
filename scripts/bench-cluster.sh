#!/usr/bin/env bash
# make bench-cluster: `ordinal controller` against kube-controller-manager's own StatefulSet controller on
# the local control plane (e2e/bench_cluster_test.go), the same rollouts, CPU and wall time side by side.
# ORDINAL_BENCH_CLUSTER=small runs the 100-replica rollouts only; =policies the policies' bench, =inplace the
# in-place updates' (e2e/bench_in_place_test.go) alone.
set -euo pipefail
cd "$(dirname "$0")/.."
export ORDINAL_BENCH_CLUSTER=${ORDINAL_BENCH_CLUSTER:-1}
E2E_RUN='^TestBench(Cluster|Policies|InPlace)$' E2E_TIMEOUT=${E2E_TIMEOUT:-150m} exec bash scripts/e2e.sh
