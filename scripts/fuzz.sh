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
# Every func FuzzXxx of the project's tests (build/ holds copies of upstream's), found rather than listed, so
# a new one runs here without a second place to add it: "name ./package" per target.
mapfile -t targets < <(grep -rE --include='*_test.go' --exclude-dir=build --exclude-dir=node_modules \
  -o '^func Fuzz[A-Za-z0-9_]+' . | sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]+)$#\2 \1#' | sort -k2,2 -k1,1)
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz.sh: no fuzz targets found" >&2
  exit 1
fi
mkdir -p build
total=0
failed=0
rows=()
for t in "${targets[@]}"; do
  set -- $t
  log=build/fuzz-$1-$(echo "${2#./}" | tr / -).log # one name may be a target of two packages
  echo "fuzzing $1 ($2) for $FUZZTIME ..." >&2
  $GO test -run '^$' -fuzz "^$1\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "${FUZZMINIMIZETIME:-10s}" -parallel "$PAR" "$2" > "$log" 2>&1
  rc=$?
  execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  execs=${execs:-0}
  result=ok
  if [ $rc -ne 0 ]; then result="FAILED (see $log)"; failed=$((failed + 1)); fi
  rows+=("$(printf '%-28s %-26s %12s  %s' "$1" "$2" "$execs" "$result")")
  total=$((total + execs))
done
printf '\n%-28s %-26s %12s  %s\n' target package executions result
printf '%s\n' "${rows[@]}"
printf '%-28s %-26s %12s\n' total "" "$total"
[ $failed -eq 0 ]
