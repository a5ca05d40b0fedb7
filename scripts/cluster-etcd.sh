#!/usr/bin/env bash
# cluster-etcd.sh - restart only etcd of the cluster started by scripts/cluster-up.sh (a fault the chaos
# tests inject: kube-apiserver loses its store for a moment, watches break, writes fail), with the same
# command line and data directory, and wait until it is healthy again.
#
# Usage: scripts/cluster-etcd.sh restart [DOWN_SECONDS]   (SIGKILL, stay down DOWN_SECONDS (default 1), start)
# Env: LOCALK8S_RUN (default /tmp/ordinal-localk8s)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_localk8s_name=cluster-etcd
# shellcheck source=localk8s/lib.sh
. "$HERE/localk8s/lib.sh"
RUN=$LOCALK8S_RUN
PIDFILE=$RUN/pids/1-etcd.pid
[ "${1:-}" = restart ] || { echo "usage: $0 restart [DOWN_SECONDS]" >&2; exit 2; }
DOWN=${2:-1}
[ -f "$PIDFILE" ] || die "no etcd recorded in $RUN (run scripts/cluster-up.sh first)"
pid=$(cat "$PIDFILE"); exe=$(cat "${PIDFILE%.pid}.exe")
alive "$pid" "$exe" || die "etcd ($pid) is not running"
# its own command line, NUL-separated, so that it comes back exactly as cluster-up.sh started it
mapfile -d '' -t cmd < "/proc/$pid/cmdline"
port=$(printf '%s\n' "${cmd[@]}" | sed -n 's#^http://127.0.0.1:\([0-9]*\)$#\1#p' | head -1)
[ -n "$port" ] || die "cannot find etcd's client port in its command line"
# SIGKILL, not SIGTERM: a crash. The store runs with --unsafe-no-fsync, but the page cache survives a
# process crash, so nothing acknowledged is lost.
kill -KILL "$pid"
for _ in $(seq 1 100); do alive "$pid" "$exe" || break; sleep 0.05; done
for _ in $(seq 1 200); do threads_gone "$pid" && break; sleep 0.05; done # its ports are free only then
log "etcd ($pid) killed; down for ${DOWN}s"
sleep "$DOWN"
mapfile -t unset_env < <(compgen -e | grep '^ETCD_' | sed 's/^/-u/')
start_recorded 1 etcd env "${unset_env[@]}" "${cmd[@]}"
wait_for etcd 30 etcd sh -c "curl -sf http://127.0.0.1:$port/health | grep -q true"
