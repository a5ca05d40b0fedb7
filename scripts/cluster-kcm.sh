#!/usr/bin/env bash
# cluster-kcm.sh - start, stop or restart only kube-controller-manager of the cluster started by
# scripts/cluster-up.sh, while the rest of the cluster keeps running.
#
# Usage: scripts/cluster-kcm.sh restart [CONTROLLERS]   (default '*,-statefulset-controller')
#        scripts/cluster-kcm.sh start   [CONTROLLERS]
#        scripts/cluster-kcm.sh stop
#        scripts/cluster-kcm.sh status                  (prints the running controllers setting, or 'stopped')
#        scripts/cluster-kcm.sh controllers             (the controllers it built, one per line, from its
#                                                        /healthz?verbose: each gets a named check there)
# CONTROLLERS is kube-controller-manager's --controllers value: '*,-statefulset-controller' (built-in
# StatefulSet controller off, garbage collector on) or '*' (built-in StatefulSet controller on).
# Env: LOCALK8S_RUN (default /tmp/ordinal-localk8s)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_localk8s_name=cluster-kcm
# shellcheck source=localk8s/lib.sh
. "$HERE/localk8s/lib.sh"
RUN=$LOCALK8S_RUN
[ -f "$RUN/cluster.env" ] || die "no cluster in $RUN (run scripts/cluster-up.sh first)"
# shellcheck disable=SC1091
. "$RUN/cluster.env"
P=$RUN/pki
PIDFILE=$RUN/pids/3-kube-controller-manager.pid
cmd=${1:-}
CONTROLLERS=${2:-*,-statefulset-controller}

running() { [ -f "$PIDFILE" ] && alive "$(cat "$PIDFILE")" "$(cat "${PIDFILE%.pid}.exe" 2>/dev/null)"; }

do_stop() {
  if [ -f "$PIDFILE" ]; then stop_recorded "$PIDFILE"; else log "kube-controller-manager is not running"; fi
  rm -f "$RUN/kcm.controllers"
}

do_start() {
  running && die "kube-controller-manager is already running (pid $(cat "$PIDFILE")); use restart"
  local api=$RUN/pids/2-kube-apiserver.pid
  { [ -f "$api" ] && alive "$(cat "$api")" "$(cat "${api%.pid}.exe" 2>/dev/null)"; } || die "the cluster in $RUN is not running (scripts/cluster-up.sh)"
  local t0; t0=$(now)
  for _ in $(seq 1 300); do port_free "$KCM_PORT" && break; sleep 0.1; done
  port_free "$KCM_PORT" || die "port 127.0.0.1:$KCM_PORT is still in use 30 s after the last kube-controller-manager stopped"
  printf '\n===== %(%F %T)T starting with --controllers=%s =====\n' -1 "$CONTROLLERS" >> "$RUN/logs/kube-controller-manager.log"
  # no --authentication/authorization-kubeconfig: /healthz stays reachable, less log noise; /metrics is
  # readable too (make bench-scale reads its workqueue metrics)
  start_recorded 3 kube-controller-manager "$K8S_BIN" kube-controller-manager \
    --kubeconfig="$RUN/kube-controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --leader-elect=false \
    --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" \
    --use-service-account-credentials=true \
    --cluster-signing-cert-file="$P/ca.crt" --cluster-signing-key-file="$P/ca.key" \
    --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics \
    --controllers="$CONTROLLERS" ${KCM_FEATURE_GATES:+--feature-gates="$KCM_FEATURE_GATES"}
  echo "$CONTROLLERS" > "$RUN/kcm.controllers"
  # healthy, and its controllers built: their named checks are registered together once all are built
  wait_for "kube-controller-manager (--controllers=$CONTROLLERS)" 60 kube-controller-manager \
    sh -c "curl -skf https://127.0.0.1:$KCM_PORT/healthz | grep -qx ok && curl -skf 'https://127.0.0.1:$KCM_PORT/healthz?verbose' | grep -q -- '-controller ok\$'"
}

do_controllers() {
  running || die "kube-controller-manager is not running"
  curl -skf "https://127.0.0.1:$KCM_PORT/healthz?verbose" | sed -n 's/^\[[+-]\]\(.*-controller\) .*$/\1/p' | sort
}

case "$cmd" in
  start) do_start ;;
  stop) do_stop ;;
  restart) do_stop; do_start ;;
  controllers) do_controllers ;;
  status) if running; then cat "$RUN/kcm.controllers" 2>/dev/null || echo unknown; else echo stopped; fi ;;
  *) echo "usage: $0 {start|stop|restart} [CONTROLLERS] | status | controllers" >&2; exit 2 ;;
esac
