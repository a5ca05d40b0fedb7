#!/usr/bin/env bash
# kubectl-build.sh - build kubectl v1.37.2 from the Go module proxy (k8s.io/kubectl; the wrapper module is
# scripts/localk8s/src/kubectl) into the local cluster's binary cache, and print its path. Cached: later runs
# only print the path. Used by the e2e tests of `ordinal webhook` and the kubectl plugin (scripts/e2e.sh), so
# they run a kubectl of the cluster's version whatever kubectl (if any) is on PATH. A separate binary, so the
# multi-call control-plane binary of scripts/cluster-up.sh is not rebuilt. First build: 1-4 min.
#
# Env: LOCALK8S_CACHE (default $HOME/.cache/ordinal/localk8s), KUBECTL_VERSION (default v1.37.2; the
# committed go.mod pins k8s.io/kubectl v0.37.2), GOCACHE/GOMODCACHE/GOPROXY.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$HERE/localk8s
_localk8s_name=kubectl-build
# shellcheck source=localk8s/lib.sh
. "$SRC/lib.sh"
V=${KUBECTL_VERSION:-v1.37.2}
BIN=$LOCALK8S_CACHE/bin/kubectl-$V
if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi
command -v go >/dev/null || die "go not found"
grep -q "k8s.io/kubectl v0.${V#v1.}\$" "$SRC/src/kubectl/go.mod" || die "scripts/localk8s/src/kubectl/go.mod pins another kubectl than $V"
export GOWORK=off GOFLAGS=
mkdir -p "$LOCALK8S_CACHE/bin" "$LOCALK8S_CACHE/build"
exec 9>"$LOCALK8S_CACHE/build.lock"; flock 9
if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi
d=$LOCALK8S_CACHE/build/kubectl-$V; rm -rf "$d"; mkdir -p "$d"
cp "$SRC/src/kubectl/main.go" "$SRC/src/kubectl/go.mod" "$SRC/src/kubectl/go.sum" "$d/"
minor=${V#v1.}; minor=${minor%%.*}
ldf="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldf="$ldf -X $p.gitVersion=$V -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
log "building kubectl $V (cold: 1-4 min)"
(cd "$d" && go build -ldflags "$ldf" -o "$BIN.tmp" .) >"$d/build.log" 2>&1 || { tail -20 "$d/build.log" >&2; die "kubectl build failed (log: $d/build.log)"; }
mv "$BIN.tmp" "$BIN"
log "built $BIN"
echo "$BIN"
