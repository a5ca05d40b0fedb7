#!/usr/bin/env bash
# chaos.sh - what `make chaos` runs: e2e/chaos_test.go's TestChaos for many seeds on the local control plane
# (started and stopped like `make e2e`, or reused when running), then its table.
#   CHAOS_RUNS   number of seeds (default 200), from CHAOS_FIRST_SEED (default 1)
#   CHAOS_SEEDS  comma-separated seeds to replay instead (a failing run prints them)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export ORDINAL_CHAOS_RUNS=${CHAOS_RUNS:-200} ORDINAL_CHAOS_FIRST_SEED=${CHAOS_FIRST_SEED:-1}
export ORDINAL_CHAOS_SEEDS=${CHAOS_SEEDS:-}
export E2E_RUN='^TestChaos$' E2E_TIMEOUT=${E2E_TIMEOUT:-150m}
bash scripts/e2e.sh
rc=$?
echo
if [ -f build/e2e/chaos-summary.txt ]; then cat build/e2e/chaos-summary.txt; fi
if [ -s build/e2e/chaos-failing-seeds.txt ] && [ "$(tr -d '\n' < build/e2e/chaos-failing-seeds.txt)" != "" ]; then
  echo "failing seeds: $(cat build/e2e/chaos-failing-seeds.txt) (replay: make chaos CHAOS_SEEDS=$(cat build/e2e/chaos-failing-seeds.txt))"
fi
exit "$rc"
