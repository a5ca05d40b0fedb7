#!/usr/bin/env bash
# integration-upstream.sh - upstream Kubernetes' own StatefulSet integration tests
# (k8s.io/kubernetes v1.37.2, test/integration/statefulset) with Ordinal in place of the upstream controller
# (what `make integration-upstream` runs). Each test starts its own kube-apiserver in the test process (on an
# etcd the test binary starts); the tests are upstream's, built unmodified from the Go module proxy, except
# where they start the controller: hack/integration-upstream/substitute/substitute.patch (applied at build
# time to a copy of the package's files under build/, built there) makes that start
# `bin/ordinal controller --apps-v1 --ordinal-kind=false` (apps/v1 sets alone: the tests' API servers serve
# no Ordinal CRD) with a kubeconfig of the test's API server and the feature gates the test set
# (hack/integration-upstream/substitute/ordinal.go, added to the package the same way).
#
#   1. etcd: $LOCALK8S_CACHE/bin/etcd-v3.7.3, built with the local control plane by
#      `LOCALK8S_BUILD_ONLY=1 scripts/cluster-up.sh` if either is missing (20-35 min cold; that build's Go
#      build cache is what makes the test binary cheap to build afterwards);
#   2. the test binary, in a wrapper module under build/ (scripts/localk8s/src/k8s/go.mod's pins: each
#      k8s.io staging module => its v0.37.2 twin), outside this repository's module;
#   3. bin/ordinal (ordinal mode);
#   4. the tests, one at a time, through `go tool test2json` into build/integration-upstream/MODE/test.json,
#      Ordinal's logs in build/integration-upstream/MODE/logs/;
#   5. hack/integration-upstream: junit.xml beside test.json, and the table of both runs (when both exist)
#      in build/integration-upstream/results.md (INTEG_DOCS=1: docs/integration-upstream.md).
#
# Usage: scripts/integration-upstream.sh [--upstream]
#   --upstream  calibration: the same tests unpatched, upstream's controller in-process, to tell a failure
#               that is not Ordinal's (or not the substitution's) from one that is
# Env: INTEG_RUN (go test -run pattern), INTEG_TIMEOUT (default 30m), ORDINAL_ARGS (extra flags of
#      `ordinal controller`, e.g. --force), INTEG_DOCS=1, GO, LOCALK8S_CACHE.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
GO=${GO:-go}
K8S_VERSION=v1.37.2
ETCD_VERSION=v3.7.3
PKG=k8s.io/kubernetes/test/integration/statefulset
MODE=ordinal
case "${1:-}" in
  "") ;;
  --upstream) MODE=upstream ;;
  *) echo "usage: $0 [--upstream]" >&2; exit 2 ;;
esac
_localk8s_name=integration-upstream
# shellcheck source=localk8s/lib.sh
. scripts/localk8s/lib.sh # log, die and the cache's default place, as the other local-cluster scripts
OUT=$ROOT/build/integration-upstream
RUNDIR=$OUT/$MODE

# 1. etcd
ETCD_BIN=$LOCALK8S_CACHE/bin/etcd-$ETCD_VERSION
if [ ! -x "$ETCD_BIN" ] || [ ! -x "$LOCALK8S_CACHE/bin/k8s-$K8S_VERSION" ]; then
  # the control plane too: its build is what fills the Go build cache with most of the test binary's packages
  log "no $ETCD_BIN or k8s-$K8S_VERSION: building the local control plane's binaries (scripts/cluster-up.sh, LOCALK8S_BUILD_ONLY=1)"
  LOCALK8S_BUILD_ONLY=1 WITH_KWOK=0 K8S_VERSION=$K8S_VERSION ETCD_VERSION=$ETCD_VERSION bash scripts/cluster-up.sh
fi
mkdir -p "$OUT/etcd-bin"
ln -sf "$ETCD_BIN" "$OUT/etcd-bin/etcd" # the test framework runs `etcd` from PATH

# 3. bin/ordinal, with this repository's settings (the Makefile's CGO_ENABLED=0)
if [ "$MODE" = ordinal ]; then
  log "building bin/ordinal"
  "$GO" build -o bin/ordinal ./cmd/ordinal
fi

# 2. the test binary. The wrapper module is built as scripts/cluster-up.sh builds the control plane: the
# project's GOFLAGS and go.work do not apply, and CGO_ENABLED is go's default as there, so the packages
# it shares with the control plane come from the Go build cache.
(
  export GOWORK=off GOFLAGS=
  unset CGO_ENABLED
  mod=$OUT/module
  mkdir -p "$mod"
  sed 's/^module localk8s$/module ordinalintegration/' scripts/localk8s/src/k8s/go.mod > "$mod/go.mod"
  cp scripts/localk8s/src/k8s/go.sum "$mod/go.sum"
  grep -q "k8s.io/kubernetes $K8S_VERSION\$" "$mod/go.mod" || die "scripts/localk8s/src/k8s/go.mod does not pin k8s.io/kubernetes $K8S_VERSION"
  cd "$mod"
  target=$PKG
  if [ "$MODE" = ordinal ]; then
    # `go test -overlay` may not replace files in the module cache: the package is built from copies instead,
    # as a package of the wrapper module (only this one package then compiles anew)
    src=$("$GO" list -f '{{.Dir}}' "$PKG")
    files=$(cd "$src" && ls ./*.go | sed 's|^\./||' | tr '\n' ' ')
    [ "$files" = "main_test.go statefulset_test.go util.go " ] || die "$src has $files: update the substitution for this k8s.io/kubernetes version"
    pkgdir=$mod/statefulset
    rm -rf "$pkgdir"; mkdir -p "$pkgdir/test/integration/statefulset"
    cp "$src"/*.go "$pkgdir/test/integration/statefulset/"
    chmod u+w "$pkgdir"/test/integration/statefulset/*.go
    patch -s -d "$pkgdir" -p1 --no-backup-if-mismatch < "$ROOT/hack/integration-upstream/substitute/substitute.patch" ||
      die "substitute.patch does not apply to $src: update it for this k8s.io/kubernetes version"
    mv "$pkgdir"/test/integration/statefulset/*.go "$pkgdir/"; rm -r "$pkgdir/test"
    grep -v '^//go:build ignore$' "$ROOT/hack/integration-upstream/substitute/ordinal.go" > "$pkgdir/zz_ordinal_substitute.go"
    target=./statefulset
  fi
  # Built after the control plane (step 1 waits for scripts/cluster-up.sh's build and its lock when etcd is
  # missing): the packages shared with it are in the Go build cache by then, so only ~50 compile here.
  log "building the $MODE test binary (go test -c $PKG; cold: the control plane's packages plus ~50)"
  t0=$SECONDS
  # -mod=mod: the copied package imports modules the pinned go.mod lists as indirect; only those annotations
  # change (the same versions, the same 2,136 packages as upstream's package)
  "$GO" test -mod=mod -c -o "$OUT/statefulset-$MODE.test" "$target" > "$OUT/build-$MODE.log" 2>&1 ||
    { tail -30 "$OUT/build-$MODE.log" >&2; die "building the test binary failed (log: $OUT/build-$MODE.log)"; }
  log "built $OUT/statefulset-$MODE.test in $((SECONDS - t0))s"
)

# 4. the tests
rm -rf "$RUNDIR"; mkdir -p "$RUNDIR/logs"
commit=$(git rev-parse --short=12 HEAD)
git diff --quiet HEAD -- 2>/dev/null || commit="$commit+dirty"
cmd="make integration-upstream"
[ "$MODE" = upstream ] && cmd="make integration-upstream INTEG_MODE=upstream"
[ -n "${INTEG_RUN:-}" ] && cmd="$cmd INTEG_RUN='$INTEG_RUN'"
[ -n "${ORDINAL_ARGS:-}" ] && [ "$MODE" = ordinal ] && cmd="ORDINAL_ARGS='$ORDINAL_ARGS' $cmd"
if [ "$MODE" = ordinal ]; then
  desc="Ordinal: bin/ordinal controller --apps-v1 --ordinal-kind=false ($(bin/ordinal version | sed -n 's/^module: *//p'))"
else
  desc="upstream's StatefulSet controller $K8S_VERSION in the test process (unpatched tests; calibration)"
fi
printf '{"mode":"%s","description":"%s","date":"%s","commit":"%s","command":"%s","ordinal_args":"%s"}\n' \
  "$MODE" "$desc" "$(date -u +%Y-%m-%dT%H:%MZ)" "$commit" "${cmd//\"/\\\"}" "${ORDINAL_ARGS:-}" > "$RUNDIR/run.json"
args=(-test.v=test2json -test.count=1 -test.timeout="${INTEG_TIMEOUT:-30m}")
[ -n "${INTEG_RUN:-}" ] && args+=(-test.run="$INTEG_RUN")
log "running $PKG ($MODE) ${INTEG_RUN:+-run $INTEG_RUN}; go test -json in $RUNDIR/test.json"
t0=$SECONDS
set +e
# The tests' own etcd is started by the binary (a Unix socket in a temporary directory); an etcd already
# listening on the default URL (127.0.0.1:2379) would otherwise be used instead.
(cd "$RUNDIR" && PATH="$OUT/etcd-bin:$PATH" KUBE_INTEGRATION_ETCD_URL=http://127.0.0.1:1 \
  ORDINAL_BIN="$ROOT/bin/ordinal" ORDINAL_LOG_DIR="$RUNDIR/logs" ORDINAL_ARGS="${ORDINAL_ARGS:-}" \
  "$GO" tool test2json -t -p "$PKG" "$OUT/statefulset-$MODE.test" "${args[@]}") > "$RUNDIR/test.json" 2> "$RUNDIR/stderr.log"
rc=$?
set -e
log "tests done in $((SECONDS - t0))s (exit $rc)"

# 5. reports
runs=("$OUT/ordinal" "$OUT/upstream")
[ "$MODE" = upstream ] && runs=("$OUT/upstream" "$OUT/ordinal")
have=()
for r in "${runs[@]}"; do [ -f "$r/test.json" ] && [ -f "$r/run.json" ] && have+=("$r"); done
"$GO" run ./hack/integration-upstream -md "$OUT/results.md" "${have[@]}"
if [ "${INTEG_DOCS:-0}" = 1 ]; then
  [ -f "$OUT/ordinal/test.json" ] && [ -f "$OUT/upstream/test.json" ] || die "INTEG_DOCS=1 needs both runs (ordinal and --upstream)"
  "$GO" run ./hack/integration-upstream -md docs/integration-upstream.md "$OUT/ordinal" "$OUT/upstream" > /dev/null
  log "wrote docs/integration-upstream.md"
fi
log "table: $OUT/results.md; JUnit: $RUNDIR/junit.xml"
exit $rc
