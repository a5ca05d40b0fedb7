#!/usr/bin/env bash
# make bench-upstream: Ordinal side by side with the upstream controller (hack/bench-upstream).
# Builds the reference harness from ../shared/tools/oracle (a development tool; nothing else in the
# project needs it) into ~/.cache/ordinal/oracle/<digest of its source>, then prints the ratio tables.
# BENCH_ARGS passes flags to hack/bench-upstream (e.g. "-rounds 5", "-quick").
set -euo pipefail
cd "$(dirname "$0")/.."
src=${ORACLE_SRC:-../shared/tools/oracle}
if [[ ! -f $src/go.mod ]]; then
  echo "bench-upstream: no reference harness at $src (set ORACLE_SRC)" >&2
  exit 1
fi
digest=$(cd "$src" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -not -path './testdata/*' | sort | xargs sha256sum | sha256sum | cut -c1-16)
oracle=${ORACLE:-$HOME/.cache/ordinal/oracle/$digest/oracle}
if [[ ! -x $oracle ]]; then
  echo "bench-upstream: building the reference harness (first time: several minutes) -> $oracle" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cp -r "$src/." "$tmp/"
  chmod -R u+w "$tmp"
  mkdir -p "$(dirname "$oracle")"
  (cd "$tmp" && go build -o "$oracle.tmp" .) && mv "$oracle.tmp" "$oracle"
fi
# GNU time reports each process's CPU and peak memory (see measure in hack/bench-upstream).
if [[ ! -x /usr/bin/time ]]; then
  echo "bench-upstream: installing GNU time from Debian" >&2
  if [[ $(id -u) -eq 0 ]]; then apt-get install -y -q time >/dev/null; else sudo apt-get install -y -q time >/dev/null; fi
fi
# Measured from a copy of what the linker wrote: the linker's own file costs a process that runs it ~17 MB
# more peak RSS (`ordinal --help`: 53 against 36 MB, the same bytes), which would count against ordinal.
go build -o bin/ordinal.linked ./cmd/ordinal
cp bin/ordinal.linked bin/ordinal
rm bin/ordinal.linked
# shellcheck disable=SC2086
exec go run ./hack/bench-upstream -oracle "$oracle" -ordinal bin/ordinal ${BENCH_ARGS:-}
