#!/usr/bin/env bash
# e2e.sh - Ordinal's end-to-end suite (what `make e2e` runs):
#   1. start the local control plane with scripts/cluster-up.sh (the first run builds etcd, kube-apiserver,
#      kube-controller-manager, kube-scheduler and kwok from the Go module proxy: 20-35 min, then cached in
#      ~/.cache/ordinal/localk8s);
#   2. build bin/ordinal (with the committed embedded module; no TinyGo needed);
#   3. go test -tags e2e -count=1 -v ./e2e/  (output also in build/e2e-go-test.log, controller logs in build/e2e/);
#   4. stop the cluster, also when something failed or on Ctrl-C, and end with go test's summary.
# A cluster already running from $LOCALK8S_RUN (e.g. `make cluster-up`) is reused and left running.
#
# Env: E2E_RUN (go test -run pattern), E2E_PARALLEL (default 6), E2E_TIMEOUT (default 25m), E2E_TAGS (build
#      tags, default e2e; `make soak` adds soak), GO,
#      LOCALK8S_RUN, LOCALK8S_CACHE and the other scripts/cluster-up.sh variables; K8S_VERSION=v1.36.3 runs
#      the suite against another control plane (docs/install.md "Compatibility"; `make e2e-k8s` gives it its own run
#      directory and ports).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
export LOCALK8S_RUN=${LOCALK8S_RUN:-/tmp/ordinal-localk8s}
KCFG=$LOCALK8S_RUN/kubeconfig
LOG=build/e2e-go-test.log
T0=$SECONDS
log() { printf '[e2e %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
elapsed() { printf '%dm%02ds' $(( (SECONDS - T0) / 60 )) $(( (SECONDS - T0) % 60 )); }

reuse=0
if [ -f "$LOCALK8S_RUN/pids/2-kube-apiserver.pid" ] && [ -f "$KCFG" ] &&
   kill -0 "$(cat "$LOCALK8S_RUN/pids/2-kube-apiserver.pid")" 2>/dev/null; then
  reuse=1
fi

stopped=0
stop_cluster() {
  [ "$reuse" = 1 ] && return 0
  [ "$stopped" = 1 ] && return 0
  stopped=1
  log "stopping the local control plane"
  scripts/cluster-down.sh || true
}
trap stop_cluster EXIT
trap 'log "interrupted"; exit 130' INT TERM

# K8S_VERSION names the control plane to test against (docs/install.md "Compatibility"): a running cluster of another
# version is not reused in its place.
if [ "$reuse" = 1 ] && [ -n "${K8S_VERSION:-}" ]; then
  exe=$(cat "$LOCALK8S_RUN/pids/2-kube-apiserver.exe" 2>/dev/null || true)
  if [ "$(basename "$exe")" != "k8s-$K8S_VERSION" ]; then
    log "FAIL: the cluster running from $LOCALK8S_RUN is ${exe:-unknown}, not k8s-$K8S_VERSION: stop it (scripts/cluster-down.sh) or give this version its own LOCALK8S_RUN and ports"
    exit 1
  fi
fi
if [ "$reuse" = 1 ]; then
  log "reusing the cluster running from $LOCALK8S_RUN (left running afterwards)"
else
  log "starting the local control plane (the first run builds it: 20-35 min, progress every 30 s)"
  scripts/cluster-up.sh "$KCFG" || { log "FAIL: cluster-up failed after $(elapsed)"; exit 1; }
fi

log "building bin/ordinal"
mkdir -p bin build
$GO build -o bin/ordinal ./cmd/ordinal || { log "FAIL: building bin/ordinal failed"; exit 1; }
$GO vet -tags "${E2E_TAGS:-e2e}" ./e2e/ || { log "FAIL: go vet -tags ${E2E_TAGS:-e2e} ./e2e/"; exit 1; }
# kubectl v1.37 for the webhook and kubectl-plugin tests (e2e/webhook_test.go); cached, built once (1-4 min)
if [ -z "${ORDINAL_E2E_KUBECTL:-}" ]; then
  ORDINAL_E2E_KUBECTL=$(bash scripts/kubectl-build.sh) || { log "FAIL: scripts/kubectl-build.sh"; exit 1; }
  export ORDINAL_E2E_KUBECTL
fi

args=(-tags "${E2E_TAGS:-e2e}" -count=1 -v -timeout "${E2E_TIMEOUT:-25m}" -parallel "${E2E_PARALLEL:-6}")
[ -n "${E2E_RUN:-}" ] && args+=(-run "$E2E_RUN")
log "running: go test ${args[*]} ./e2e/"
T1=$SECONDS
wait=30s; [ "$reuse" = 1 ] || wait=0   # no need to wait for namespace cleanup on a cluster about to stop
ORDINAL_E2E_CLEANUP_WAIT=$wait ORDINAL_E2E_KUBECONFIG=$KCFG ORDINAL_E2E_BIN=$PWD/bin/ordinal $GO test "${args[@]}" ./e2e/ 2>&1 | tee "$LOG"
rc=${PIPESTATUS[0]}
TESTS_S=$((SECONDS - T1))

stop_cluster
# the summary comes last, after the cluster's shutdown messages
echo
echo "==== e2e summary (go test ${TESTS_S}s, total $(elapsed)); full output: $LOG, controller logs: build/e2e/"
grep -E '^\s*--- (PASS|FAIL|SKIP)' "$LOG" | sed 's/^/  /'
grep -E -A8 '^panic: test timed out' "$LOG" | grep -E '^\s*(panic:|running tests:|Test)' | sed 's/^\s*/  /'
bash scripts/failed-tests.sh "$LOG" 30 | sed 's/^/  /'
grep -E '^(ok|FAIL)' "$LOG" | tail -2
exit "$rc"
