#!/usr/bin/env bash
# e2e-upstream.sh - upstream Kubernetes' own StatefulSet e2e specs (`[sig-apps] StatefulSet` of
# test/e2e/apps/statefulset.go) against the local control plane, with Ordinal as the only StatefulSet
# controller (`make e2e-upstream`), or with kube-controller-manager's own StatefulSet controller
# (`make e2e-upstream E2E_UPSTREAM_CONTROLLER=kube-controller-manager`: the calibration; a spec failing there
# is the cluster's doing, not the controller's).
#   1. builds upstream's e2e.test unmodified (`go test -c k8s.io/kubernetes/test/e2e` in the wrapper module
#      scripts/localk8s/src/e2e-upstream, from the Go module proxy), cached beside the control plane
#      ($LOCALK8S_CACHE/bin/e2e-VERSION.test; cold 10-20 min once the control plane's build cache is warm);
#   2. starts a cluster of its own (run directory and ports apart from `make e2e`'s) with the alpha gate
#      StatefulSetRecreateStrategy on (kube-apiserver, and the controller under test);
#   3. starts `ordinal controller --apps-v1` (or kube-controller-manager with --controllers='*');
#   4. runs e2e.test with the specs of hack/upstreamtests/skips.txt skipped (each with its reason): the specs
#      in parallel, then the [Serial] ones alone; JUnit reports and logs in build/e2e-upstream/CONTROLLER/
#      {parallel,serial}/, and prints the spec counts;
#   5. stops what it started.
# `make e2e-upstream-table` (hack/upstreamtests) turns the two runs' reports into docs/upstream-tests.md.
#
# Env: E2E_UPSTREAM_CONTROLLER (ordinal | kube-controller-manager), E2E_UPSTREAM_FOCUS (ginkgo focus regexp,
#      default the StatefulSet specs), E2E_UPSTREAM_ORDINAL (an ordinal binary to run instead of building
#      bin/ordinal, e.g. a release or an older commit's), E2E_UPSTREAM_PROCS (ginkgo processes for the specs not labelled
#      [Serial], default 3; the ginkgo CLI is run from the module proxy at the wrapper's version),
#      LOCALK8S_CACHE, GO; the cluster's run directory and ports default to their own
#      (LOCALK8S_RUN=/tmp/ordinal-localk8s-upstream, APISERVER_PORT=18443, ...; all below the kernel's
#      ephemeral ports, 32768-60999, where an outgoing connection may hold one).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
SRC=$ROOT/scripts/localk8s
_localk8s_name=e2e-upstream
export LOCALK8S_RUN=${E2E_UPSTREAM_RUN:-/tmp/ordinal-localk8s-upstream}
export APISERVER_PORT=${E2E_UPSTREAM_APISERVER_PORT:-18443} ETCD_PORT=${E2E_UPSTREAM_ETCD_PORT:-28790}
export ETCD_PEER_PORT=${E2E_UPSTREAM_ETCD_PEER_PORT:-28800} KCM_PORT=${E2E_UPSTREAM_KCM_PORT:-28257}
export SCHEDULER_PORT=${E2E_UPSTREAM_SCHEDULER_PORT:-28259}
# shellcheck source=localk8s/lib.sh
. "$SRC/lib.sh"
GO=${GO:-go}
K8S_VERSION=v1.37.2
CONTROLLER=${E2E_UPSTREAM_CONTROLLER:-ordinal}
FOCUS=${E2E_UPSTREAM_FOCUS:-'\[sig-apps\] StatefulSet'}
PROCS=${E2E_UPSTREAM_PROCS:-3}
GATES=StatefulSetRecreateStrategy=true
OUT=$ROOT/build/e2e-upstream/$CONTROLLER
case "$CONTROLLER" in ordinal | kube-controller-manager) ;; *) die "E2E_UPSTREAM_CONTROLLER=$CONTROLLER: want ordinal or kube-controller-manager" ;; esac
T0=$SECONDS

# ---------------------------------------------------------------- 1. e2e.test, cached
E2E_BIN=$LOCALK8S_CACHE/bin/e2e-$K8S_VERSION.test # the ginkgo CLI runs a binary named *.test
build_e2e() {
  export GOWORK=off GOFLAGS=
  mkdir -p "$LOCALK8S_CACHE/bin" "$LOCALK8S_CACHE/build"
  exec 9>"$LOCALK8S_CACHE/build.lock"
  flock 9
  if [ ! -x "$E2E_BIN" ]; then
    log "building upstream's e2e.test $K8S_VERSION from the Go module proxy (cold: 10-20 min with the control plane's build cache, ~3 GiB RAM at the link)"
    local d=$LOCALK8S_CACHE/build/e2e-upstream-$K8S_VERSION minor=${K8S_VERSION#v1.} ldf="-s -w"
    rm -rf "$d"; mkdir -p "$d"
    cp "$SRC/src/e2e-upstream/go.mod" "$SRC/src/e2e-upstream/go.sum" "$SRC/src/e2e-upstream/suite.go" "$d/"
    minor=${minor%%.*}
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldf="$ldf -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    done
    # the wrapper's package imports what e2e.test's test file does: building it first compiles them with
    # progress (go test -c prints none); go test -c then compiles the test main and links
    (cd "$d" && build_with_progress "e2e.test $K8S_VERSION packages" "$d/build.log" $GO build -v . &&
      build_with_progress "e2e.test $K8S_VERSION link" "$d/link.log" \
        $GO test -c -ldflags "$ldf" -o "$E2E_BIN.tmp" k8s.io/kubernetes/test/e2e) || die "building e2e.test failed"
    mv "$E2E_BIN.tmp" "$E2E_BIN"
  fi
  flock -u 9
}
build_e2e
KUBECTL=$(bash scripts/kubectl-build.sh) || die "scripts/kubectl-build.sh failed"
# what the table says was run: the commit of the tree the controller is built from, taken now
COMMIT="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo +changes)"
ORDINAL=${E2E_UPSTREAM_ORDINAL:-}
if [ "$CONTROLLER" = ordinal ] && [ -z "$ORDINAL" ]; then
  log "building bin/ordinal"
  $GO build -o bin/ordinal ./cmd/ordinal || die "building bin/ordinal failed"
  ORDINAL=bin/ordinal
elif [ "$CONTROLLER" = ordinal ]; then
  [ -x "$ORDINAL" ] || die "E2E_UPSTREAM_ORDINAL=$ORDINAL is not an executable"
  COMMIT="$("$ORDINAL" version 2>/dev/null | sed -n 's/^host: *//p' | tr -d ' ')"
fi
# the skip list: one regexp per line before " :: "; joined into ginkgo's --skip
SKIP=$(sed -n 's/^\([^#].*\) :: .*$/\1/p' hack/upstreamtests/skips.txt | paste -sd'|')
[ -n "$SKIP" ] || die "hack/upstreamtests/skips.txt gives no spec"

# ---------------------------------------------------------------- 2./3. the cluster and the controller
CTRL_PID=
stop_all() {
  if [ -n "$CTRL_PID" ] && kill -0 "$CTRL_PID" 2>/dev/null; then
    kill -TERM "$CTRL_PID" 2>/dev/null
    for _ in $(seq 1 300); do kill -0 "$CTRL_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$CTRL_PID" 2>/dev/null
  fi
  CTRL_PID=
  LOCALK8S_RUN=$LOCALK8S_RUN bash scripts/cluster-down.sh >/dev/null 2>&1 || true
}
trap stop_all EXIT
trap 'log "interrupted"; exit 130' INT TERM
rm -rf "$OUT"; mkdir -p "$OUT"
kcm='*,-statefulset-controller'; [ "$CONTROLLER" = kube-controller-manager ] && kcm='*'
log "starting a cluster of its own in $LOCALK8S_RUN (kube-apiserver $GATES; kube-controller-manager --controllers=$kcm)"
# A kubelet takes a second or so to stop a deleted pod's containers and report it (its pod lifecycle
# event generator relists every second); upstream's specs read a deleted pod right after deleting it, so the
# emulation must not be faster than any kubelet (KUBELET_STOP_DELAY, hack/podreaper --delay).
KUBELET_STOP_DELAY=${KUBELET_STOP_DELAY:-1s} KCM_CONTROLLERS=$kcm KCM_FEATURE_GATES=$GATES APISERVER_FEATURE_GATES="ShardedListAndWatch=true,$GATES" \
  bash scripts/cluster-up.sh "$LOCALK8S_RUN/kubeconfig" > "$OUT/cluster-up.log" 2>&1 ||
  { tail -20 "$OUT/cluster-up.log" >&2; die "cluster-up failed (log: $OUT/cluster-up.log)"; }
# kubectl for the specs: `kubectl exec` runs in the pod's container sandbox (hack/podreaper/kubectl.go: kwok runs
# no containers; podreaper runs the readiness probes in the same sandboxes), everything else is kubectl's
SPEC_KUBECTL=$LOCALK8S_RUN/bin/kubectl-with-exec
cat > "$SPEC_KUBECTL" <<EOF
#!/bin/sh
exec "$LOCALK8S_RUN/bin/podreaper" kubectl --kubectl="$KUBECTL" --state-dir="$LOCALK8S_RUN/kubelet" "\$@"
EOF
chmod +x "$SPEC_KUBECTL"
if [ "$CONTROLLER" = ordinal ]; then
  # `ordinal controller` manages its own kind too and will not start without its CRD
  # (kubectl wait fails at once, not waits, on a CRD whose status has no conditions yet)
  "$KUBECTL" --kubeconfig "$LOCALK8S_RUN/kubeconfig" apply -f host/crd/statefulsets.ordinal.dev.yaml > /dev/null ||
    die "installing the CRD statefulsets.ordinal.dev failed"
  for _ in $(seq 1 600); do
    [ "$("$KUBECTL" --kubeconfig "$LOCALK8S_RUN/kubeconfig" get crd statefulsets.ordinal.dev \
      -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" = True ] && break
    sleep 0.1
  done
  "$ORDINAL" controller --apps-v1 --kubeconfig "$LOCALK8S_RUN/kubeconfig" --leader-elect=false \
    --metrics-bind-address=0 --health-probe-bind-address=127.0.0.1:0 --feature-gates "$GATES" --log-format json \
    > "$OUT/ordinal.log" 2>&1 &
  CTRL_PID=$!
  # ready once its caches have synced (/readyz on the port the kernel gave it, which it logs)
  ready=
  for _ in $(seq 1 1200); do
    kill -0 "$CTRL_PID" 2>/dev/null || { tail -5 "$OUT/ordinal.log" >&2; die "ordinal controller exited (log $OUT/ordinal.log)"; }
    addr=$(sed -n 's/.*"msg":"Serving","addr":"\([^"]*\)".*/\1/p' "$OUT/ordinal.log" | head -1)
    if [ -n "$addr" ] && curl -sf "http://$addr/readyz" > /dev/null 2>&1; then ready=1; break; fi
    sleep 0.1
  done
  [ -n "$ready" ] || die "ordinal controller not ready after 120 s (log $OUT/ordinal.log)"
  log "ordinal controller --apps-v1 ready (pid $CTRL_PID, log $OUT/ordinal.log)"
fi

# ---------------------------------------------------------------- 4. the specs
# Two passes, as upstream's CI runs them: the specs labelled [Serial] (they cordon nodes) alone after the
# others, which run on E2E_UPSTREAM_PROCS ginkgo processes. Each pass writes its JUnit report in its own
# directory; hack/upstreamtests merges them (a spec counts where it ran).
specs() { # specs PASS FOCUS SKIP PROCS
  local pass=$1 focus=$2 skip=$3 procs=$4
  local args=(--kubeconfig="$LOCALK8S_RUN/kubeconfig" --provider=skeleton --kubectl-path="$SPEC_KUBECTL" --report-dir="$OUT/$pass")
  local g=(focus="$focus" skip="$skip" timeout=4h no-color v)
  mkdir -p "$OUT/$pass"
  log "pass $pass ($procs process(es)): focus $focus; log $OUT/$pass/e2e.log"
  if [ "$procs" -gt 1 ]; then # the ginkgo CLI runs the binary on several processes: ginkgo's flags go to it
    local ginkgo
    ginkgo=$(sed -n 's/^\tgithub.com\/onsi\/ginkgo\/v2 \(v[^ ]*\)$/\1/p' "$SRC/src/e2e-upstream/go.mod")
    (cd "$SRC/src/e2e-upstream" && GOWORK=off GOFLAGS= $GO run "github.com/onsi/ginkgo/v2/ginkgo@$ginkgo" \
      --procs="$procs" "${g[@]/#/--}" "$E2E_BIN" -- "${args[@]}") > "$OUT/$pass/e2e.log" 2>&1
  else
    "$E2E_BIN" "${args[@]}" "${g[@]/#/--ginkgo.}" > "$OUT/$pass/e2e.log" 2>&1
  fi
  local rc=$?
  grep -E '^(Ran [0-9]+ of|SUCCESS!|FAIL!)' "$OUT/$pass/e2e.log" | tail -2
  return $rc
}
log "running upstream's e2e.test; skipped: hack/upstreamtests/skips.txt"
T1=$SECONDS
specs parallel "$FOCUS" "$SKIP|\\[Serial\\]" "$PROCS"; rc=$?
specs serial "($FOCUS).*\\[Serial\\]" "$SKIP" 1 || rc=$?
RUN_S=$((SECONDS - T1))
if [ -n "$CTRL_PID" ] && ! kill -0 "$CTRL_PID" 2>/dev/null; then log "WARNING: ordinal controller exited during the run (log $OUT/ordinal.log)"; fi
stop_all
# what the table needs to say when and where it ran
cat > "$OUT/run.json" <<EOF
{"controller": "$CONTROLLER", "commit": "$COMMIT",
 "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "seconds": $RUN_S, "procs": $PROCS, "load": "$(cut -d' ' -f1-3 /proc/loadavg)",
 "command": "make e2e-upstream$([ "$CONTROLLER" = ordinal ] || echo " E2E_UPSTREAM_CONTROLLER=$CONTROLLER")"}
EOF
for pass in parallel serial; do
  [ -f "$OUT/$pass/junit_01.xml" ] || die "e2e.test wrote no JUnit report in pass $pass (exit $rc); log $OUT/$pass/e2e.log"
done
$GO run ./hack/upstreamtests summary "$OUT/parallel/junit_01.xml" "$OUT/serial/junit_01.xml" || die "reading the reports failed"
log "done in $(( (SECONDS - T0) / 60 ))m$(( (SECONDS - T0) % 60 ))s (specs $RUN_S s); reports $OUT/{parallel,serial}/junit_01.xml"
exit $rc
