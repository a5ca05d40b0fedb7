#!/usr/bin/env bash
# make bench-scale: many sets at once under `ordinal controller` and under kube-controller-manager's own
# StatefulSet controller, alternating, on the local control plane (e2e/bench_scale_test.go); prints RSS and
# RSS per cached pod, CPU, sync latency, queue depth and edit-to-rollout times side by side.
# Sizes: SCALE_SETS (default 200), SCALE_PODS_PER_SET (10), SCALE_WAVES (2; 0: creation only, its syncs measured),
# SCALE_REST_SECONDS (240: RSS and Go heap "at rest" that long after the last rollout),
# SCALE_WORKERS (5), SCALE_ROUNDS (1), SCALE_NAMESPACES (1: the sets spread round-robin over that many);
# SCALE_CONTROLLERS=ordinal|kcm runs one side only; SCALE_REPLICAS=R compares one replica of `ordinal controller
# --shards SCALE_SHARDS` (default 4R) with R sharing the shards instead (docs/scale.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export ORDINAL_BENCH_SCALE=1
E2E_RUN='^TestBenchScale$' E2E_TIMEOUT=${E2E_TIMEOUT:-180m} exec bash scripts/e2e.sh
