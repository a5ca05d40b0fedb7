#!/usr/bin/env bash
# fuzz.sh - run every fuzz target (what `make fuzz` runs) for FUZZTIME each and print a table of
# executions. A failing input is written by go test to the package's testdata/fuzz/<Target>/ (commit it with
# its fix: it then runs in every `go test`), and this script exits non-zero.
#   FUZZTIME   per target (default 2m; go test's -fuzztime syntax, e.g. 30s or 500000x)
#   FUZZ_PARALLEL  workers per target (default 2)
#   FUZZMINIMIZETIME  time to minimize each new input (default 10s; go test's 60s stalls the slower targets)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-2m}
PAR=${FUZZ_PARALLEL:-2}
targets=(
  "FuzzDecode ./host/plan"             # a module's output -> plan.Decode (agrees with the schema)
  "FuzzFirewall ./host/firewall"       # hostile plans against their snapshots -> Decode -> firewall
  "FuzzSyncPipeline ./host/controller" # mutated snapshots -> objects -> snapshot -> module (or hostile output) -> Decode -> firewall -> applier -> fake API server
  "FuzzLoad ./host/wasm"               # mutated module bytes -> limits, compile, instantiate, call
  "FuzzReconcile ./guest/statefulset"  # random snapshots -> the reconcile logic's invariants
  "FuzzDelta ./guest/statefulset"      # a delta between random worlds -> the second world's plan, or StaleReference
  "FuzzJSON ./internal/jsonv"           # JSON parse/encode against encoding/json
  "FuzzCheckDrop ./internal/fieldcheck" # any input file -> unknown fields (by shape too) -> dropped: no panic, JSON stays JSON
)
mkdir -p build
total=0
failed=0
rows=()
for t in "${targets[@]}"; do
  set -- $t
  log=build/fuzz-$1.log
  echo "fuzzing $1 ($2) for $FUZZTIME ..." >&2
  $GO test -run '^$' -fuzz "^$1\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "${FUZZMINIMIZETIME:-10s}" -parallel "$PAR" "$2" > "$log" 2>&1
  rc=$?
  execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  execs=${execs:-0}
  result=ok
  if [ $rc -ne 0 ]; then result="FAILED (see $log)"; failed=$((failed + 1)); fi
  rows+=("$(printf '%-17s %-22s %12s  %s' "$1" "$2" "$execs" "$result")")
  total=$((total + execs))
done
printf '\n%-17s %-22s %12s  %s\n' target package executions result
printf '%s\n' "${rows[@]}"
printf '%-17s %-22s %12s\n' total "" "$total"
[ $failed -eq 0 ]
