#!/usr/bin/env bash
# soak.sh - what `make soak` runs: e2e/soak_test.go's TestSoak (build tag soak) on the local control plane
# (started and stopped like `make e2e`, or reused when running), then its series and verdict.
#   SOAK_DURATION    how long the sets roll (default 1h)
#   SOAK_INTERVAL    between two samples of the controller's metrics (default 1m)
#   SOAK_SETS        how many sets (default 300)
#   SOAK_EDIT_EVERY  between two edits of a random set (default 1s)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export ORDINAL_SOAK_DURATION=${SOAK_DURATION:-1h} ORDINAL_SOAK_INTERVAL=${SOAK_INTERVAL:-1m}
export ORDINAL_SOAK_SETS=${SOAK_SETS:-300} ORDINAL_SOAK_EDIT_EVERY=${SOAK_EDIT_EVERY:-1s}
# the test bounds itself (its context ends 30 minutes after SOAK_DURATION); go test's timeout is only a backstop
export E2E_RUN='^TestSoak$' E2E_TAGS='e2e soak' E2E_TIMEOUT=${E2E_TIMEOUT:-24h}
bash scripts/e2e.sh
rc=$?
echo
if [ -f build/e2e/soak-summary.txt ]; then cat build/e2e/soak-summary.txt; fi
exit "$rc"
