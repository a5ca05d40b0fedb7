#!/usr/bin/env bash
# make apiserver-defaults: regenerate host/kube/testdata/apiserver-defaults, kube-apiserver v1.37.2's answers
# (server-side dry run) to the defaulting corpus of hack/apiserver-defaults, on the local control plane
# (scripts/cluster-up.sh; a cluster already running from $LOCALK8S_RUN is reused and left running).
set -euo pipefail
cd "$(dirname "$0")/.."
export LOCALK8S_RUN=${LOCALK8S_RUN:-/tmp/ordinal-localk8s}
KCFG=$LOCALK8S_RUN/kubeconfig
if [ -f "$LOCALK8S_RUN/pids/2-kube-apiserver.pid" ] && [ -f "$KCFG" ] &&
   kill -0 "$(cat "$LOCALK8S_RUN/pids/2-kube-apiserver.pid")" 2>/dev/null; then
  echo "apiserver-defaults: reusing the cluster running from $LOCALK8S_RUN" >&2
else
  trap 'scripts/cluster-down.sh || true' EXIT
  scripts/cluster-up.sh "$KCFG"
fi
${GO:-go} run ./hack/apiserver-defaults --kubeconfig "$KCFG" --out host/kube/testdata/apiserver-defaults
echo "apiserver-defaults: wrote host/kube/testdata/apiserver-defaults ($(ls host/kube/testdata/apiserver-defaults/*.json | wc -l) cases)" >&2
