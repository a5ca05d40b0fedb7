#!/usr/bin/env bash
# cluster-down.sh - stop the local control plane started by scripts/cluster-up.sh, using the PIDs it recorded
# (reverse start order: kwok, scheduler, controller-manager, apiserver, then etcd). A pid is signalled only
# while it still runs the binary recorded for it.
# Usage: scripts/cluster-down.sh [--purge]     (--purge also deletes LOCALK8S_RUN: etcd data, pki, logs)
# Env:   LOCALK8S_RUN (default /tmp/ordinal-localk8s)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_localk8s_name=cluster-down
# shellcheck source=localk8s/lib.sh
. "$HERE/localk8s/lib.sh"
RUN=$LOCALK8S_RUN
if [ -d "$RUN/pids" ]; then
  for f in $(ls "$RUN"/pids/*.pid 2>/dev/null | sort -V -r); do
    stop_recorded "$f"
  done
else
  log "nothing recorded in $RUN/pids"
fi
if [ "${1:-}" = --purge ]; then rm -rf "$RUN"; log "removed $RUN"; fi
exit 0
