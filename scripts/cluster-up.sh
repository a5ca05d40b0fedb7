#!/usr/bin/env bash
# cluster-up.sh - build (cached) and start a real local Kubernetes control plane on 127.0.0.1 for Ordinal's
# end-to-end tests: etcd v3.7.3 (built from go.etcd.io/etcd/server/v3), kube-apiserver, kube-controller-manager
# and kube-scheduler v1.37.2 (one multi-call binary built from the k8s.io/kubernetes module) and kwok v0.8.0
# (kubelet simulator) managing fake node(s). No Docker; the only downloads are from the Go module proxy.
#
# Usage: scripts/cluster-up.sh [KUBECONFIG_OUT]      (default $LOCALK8S_RUN/kubeconfig)
#
# The first run builds the binaries into the cache: 20-35 min and ~3 GiB RAM on 2 cores with empty Go caches,
# progress printed every 30 s. Later runs start in 10-25 s.
#
# Environment (all optional):
#   LOCALK8S_CACHE   build cache: wrapper modules + binaries (default $HOME/.cache/ordinal/localk8s)
#   LOCALK8S_RUN     runtime dir: pki, etcd data, logs, pids (default /tmp/ordinal-localk8s)
#   K8S_VERSION      default v1.37.2 (go.mod/go.sum in scripts/localk8s/src/k8s); pinned too: v1.36.3
#                    (scripts/localk8s/src/k8s/v1.36.3/); other versions: go.mod regenerated from
#                    k8s.io/kubernetes' go.mod + go mod tidy. Each version is its own cached binary.
#   ETCD_VERSION     default v3.7.3 (go.mod/go.sum in scripts/localk8s/src/etcd)
#   KWOK_VERSION     default v0.8.0
#   KCM_CONTROLLERS  default '*,-statefulset-controller' (garbage collector etc. on, built-in StatefulSet
#                    controller off); '*' = all defaults including statefulset-controller; 'none' = no
#                    kube-controller-manager. Change it on a running cluster with scripts/cluster-kcm.sh.
#   WITH_SCHEDULER   1 (default) | 0
#   WITH_KWOK        1 (default) | 0
#   KWOK_NODES       number of fake nodes kwok-node-0..N-1 (default 1)
#   KWOK_POD_DELETE  what removes a deleted pod, as the kubelet does once its containers stopped:
#                    kubelet (default): hack/podreaper (built from this repository, run as part of the cluster)
#                      stops its containers and removes it, with grace period 0 and the pod's UID as
#                      precondition (a pod held by a finalizer: reported stopped, terminal, until released);
#                    fast / graceful: kwok's pod-delete stage, at once / at a random time within the grace period.
#                      kwok removes pods by name with no UID precondition and may repeat a queued removal, so
#                      a pod that a controller recreates under the same name within ~0.1 s can be removed too
#                      (a StatefulSet controller does exactly that: tests then see an ordinal replaced twice);
#                    none: nothing (deleted pods bound to the node stay Terminating).
#                    hack/podreaper runs in every mode: it admits the pods asking for host ports (kwok's stages
#                    wait for its decision; a host port taken on the node fails the pod, as a kubelet does).
#   APISERVER_PORT=16443 ETCD_PORT=23790 ETCD_PEER_PORT=23800 KCM_PORT=20257 SCHEDULER_PORT=20259 (keep ports
#                    below the kernel's ephemeral range, 32768-60999: an outgoing connection may hold one there)
#   APISERVER_FEATURE_GATES  kube-apiserver --feature-gates. Unset: ShardedListAndWatch=true on v1.37 (alpha,
#                    KEP-5866: lists and watches filtered by shard, which sharded replicas detect and use to
#                    cache only their shards; docs/scale.md), none on other minors. Set empty: the minor's
#                    defaults. E.g. MaxUnavailableStatefulSet=true, which v1.36 has but leaves off (on by default
#                    from v1.37; off, the API server drops spec.updateStrategy.rollingUpdate.maxUnavailable)
#   KUBELET_STOP_DELAY  with KWOK_POD_DELETE=kubelet: how long a deleted pod's containers take to stop before
#                    hack/podreaper reports them stopped and removes the pod (a Go duration, default 0s; at
#                    most the pod's grace period; e2e.ordinal.dev/termination-delay overrides it per pod)
#   KCM_FEATURE_GATES  kube-controller-manager --feature-gates (default none), e.g. an alpha gate its own
#                    StatefulSet controller needs when it is on (make e2e-upstream's calibration)
#   AUDIT_LOG        the API server's audit log of writes (JSON lines, rotated at 256 MB; default
#                    $LOCALK8S_RUN/logs/audit.log; empty: no audit)
#   LOCALK8S_BUILD_ONLY=1  build (or find cached) binaries, start nothing (e.g. to warm a CI cache)
#   GOCACHE / GOMODCACHE / GOPROXY are honoured (warm Go caches make rebuilds fast).
# Adapted from a tested local-cluster recipe; see scripts/localk8s/README.md.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$HERE/localk8s
_localk8s_name=cluster-up
# shellcheck source=localk8s/lib.sh
. "$SRC/lib.sh"
CACHE=$LOCALK8S_CACHE
RUN=$LOCALK8S_RUN
case "$RUN" in /*) ;; *) RUN="$PWD/$RUN" ;; esac
OUT=${1:-$RUN/kubeconfig}
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
K8S_VERSION=${K8S_VERSION:-v1.37.2}
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
KCM_CONTROLLERS=${KCM_CONTROLLERS:-*,-statefulset-controller}
WITH_SCHEDULER=${WITH_SCHEDULER:-1}
WITH_KWOK=${WITH_KWOK:-1}
KWOK_NODES=${KWOK_NODES:-1}
KWOK_POD_DELETE=${KWOK_POD_DELETE:-kubelet}
APISERVER_PORT=${APISERVER_PORT:-16443}
ETCD_PORT=${ETCD_PORT:-23790}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-23800}
KCM_PORT=${KCM_PORT:-20257}
SCHEDULER_PORT=${SCHEDULER_PORT:-20259}
case $K8S_VERSION in v1.37.*) default_gates=ShardedListAndWatch=true ;; *) default_gates= ;; esac
APISERVER_FEATURE_GATES=${APISERVER_FEATURE_GATES-$default_gates}
AUDIT_LOG=${AUDIT_LOG-$RUN/logs/audit.log}

STARTED=0
on_exit() { # a failed start stops what it started (set LOCALK8S_KEEP_ON_FAIL=1 to keep it for debugging)
  local rc=$?
  if [ $rc -ne 0 ] && [ "$STARTED" = 1 ] && [ "${LOCALK8S_KEEP_ON_FAIL:-0}" != 1 ]; then
    log "start failed; logs in $RUN/logs; stopping what was started"
    LOCALK8S_RUN=$RUN "$HERE/cluster-down.sh" || true
  fi
}
trap on_exit EXIT
T_ALL=$(now)

command -v go >/dev/null || die "go not found"
command -v openssl >/dev/null || die "openssl not found"
command -v curl >/dev/null || die "curl not found"
command -v flock >/dev/null || die "flock not found"

# ---------------------------------------------------------------- build (cached)
# The wrapper modules are built in the cache, outside this repository's module; the project's GOFLAGS and
# any go.work must not apply to them.
export GOWORK=off GOFLAGS=
mkdir -p "$CACHE/bin" "$CACHE/build"
exec 9>"$CACHE/build.lock"
flock 9
T_BUILD=$(now)
BUILT=""
K8S_BIN=$CACHE/bin/k8s-$K8S_VERSION
ETCD_BIN=$CACHE/bin/etcd-$ETCD_VERSION
KWOK_BIN=$CACHE/bin/kwok-$KWOK_VERSION/kwok
missing=""
[ -x "$K8S_BIN" ] || missing="$missing kube-apiserver/kube-controller-manager/kube-scheduler($K8S_VERSION)"
[ -x "$ETCD_BIN" ] || missing="$missing etcd($ETCD_VERSION)"
[ "$WITH_KWOK" = 1 ] && { [ -x "$KWOK_BIN" ] || missing="$missing kwok($KWOK_VERSION)"; }
if [ -n "$missing" ]; then
  est="a few minutes"; [ -x "$K8S_BIN" ] || est="20-35 min on 2 cores with empty Go caches (~3 GiB RAM)"
  log "not in $CACHE/bin:$missing - building from the Go module proxy: $est; progress every 30 s; cached afterwards"
fi

if [ ! -x "$K8S_BIN" ]; then
  log "building kube-apiserver/kube-controller-manager/kube-scheduler $K8S_VERSION (the long one: 15-25 min cold)"
  d=$CACHE/build/k8s-$K8S_VERSION; rm -rf "$d"; mkdir -p "$d"
  cp "$SRC/src/k8s/main.go" "$d/"
  # pinned modules: src/k8s/go.mod (the default version) or src/k8s/VERSION/go.mod (other minors the e2e
  # suite is run against, docs/install.md "Compatibility")
  pinned=
  for m in "$SRC/src/k8s" "$SRC/src/k8s/$K8S_VERSION"; do
    if [ -f "$m/go.mod" ] && grep -q "k8s.io/kubernetes $K8S_VERSION\$" "$m/go.mod"; then pinned=$m; fi
  done
  if [ -n "$pinned" ]; then
    cp "$pinned/go.mod" "$pinned/go.sum" "$d/"
  else
    # k8s.io/kubernetes' go.mod replaces k8s.io/* with ./staging/... (absent from the module zip):
    # map each staging module to its published v0.X.Y twin instead.
    dl=$(cd "$d" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" 2>&1 || true)
    kmod=$(printf '%s\n' "$dl" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
    [ -f "$kmod" ] || die "cannot download k8s.io/kubernetes@$K8S_VERSION: $(printf '%s\n' "$dl" | grep '"Error"')"
    gov=$(awk '$1=="go"{print $2; exit}' "$kmod")
    { printf 'module localk8s\n\ngo %s\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$gov" "$K8S_VERSION"
      awk -v sv="v0.${K8S_VERSION#v1.}" '$2=="=>" && $3 ~ /^\.\/staging/ {printf "\t%s => %s %s\n", $1, $1, sv}' "$kmod"
      printf ')\n'; } > "$d/go.mod"
    (cd "$d" && go mod tidy) || die "go mod tidy failed for $K8S_VERSION"
  fi
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  ldf="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf="$ldf -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  (cd "$d" && build_with_progress "k8s $K8S_VERSION" "$d/build.log" go build -v -ldflags "$ldf" -o "$K8S_BIN.tmp" .) || die "k8s build failed"
  mv "$K8S_BIN.tmp" "$K8S_BIN"; BUILT="$BUILT k8s"
fi

if [ ! -x "$ETCD_BIN" ]; then
  log "building etcd $ETCD_VERSION (cold: ~3 min)"
  d=$CACHE/build/etcd-$ETCD_VERSION; rm -rf "$d"; mkdir -p "$d"
  cp "$SRC/src/etcd/main.go" "$d/"
  if grep -q "go.etcd.io/etcd/server/v3 $ETCD_VERSION\$" "$SRC/src/etcd/go.mod"; then
    cp "$SRC/src/etcd/go.mod" "$SRC/src/etcd/go.sum" "$d/"
  else
    printf 'module localetcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" > "$d/go.mod"
    (cd "$d" && go mod tidy) || die "go mod tidy failed for etcd $ETCD_VERSION"
  fi
  (cd "$d" && build_with_progress "etcd $ETCD_VERSION" "$d/build.log" go build -v -ldflags "-s -w" -o "$ETCD_BIN.tmp" .) || die "etcd build failed"
  mv "$ETCD_BIN.tmp" "$ETCD_BIN"; BUILT="$BUILT etcd"
fi

if [ "$WITH_KWOK" = 1 ] && [ ! -x "$KWOK_BIN" ]; then
  log "building kwok $KWOK_VERSION (cold: 4-8 min)"
  d=$CACHE/build/kwok-$KWOK_VERSION; mkdir -p "$d" "$(dirname "$KWOK_BIN")"
  build_with_progress "kwok $KWOK_VERSION" "$d/build.log" env GOBIN="$(dirname "$KWOK_BIN")" \
    go install -v -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" || die "kwok build failed"
  BUILT="$BUILT kwok"
fi
flock -u 9
BUILD_S=$(since "$T_BUILD")
if [ -n "$BUILT" ]; then log "built:$BUILT in ${BUILD_S}s"; else log "binaries cached in $CACHE/bin (${BUILD_S}s)"; fi
case "$KWOK_POD_DELETE" in fast|graceful|kubelet|none) ;; *) die "KWOK_POD_DELETE=$KWOK_POD_DELETE: want kubelet, fast, graceful or none" ;; esac
if [ "$WITH_KWOK" = 1 ]; then
  # the pod reaper (kubelet stand-in) is this repository's code: rebuilt (from the Go build cache) at every start
  mkdir -p "$RUN/bin"
  (cd "$HERE/.." && go build -buildvcs=false -o "$RUN/bin/podreaper" ./hack/podreaper) || die "building hack/podreaper failed"
fi
if [ "${LOCALK8S_BUILD_ONLY:-0}" = 1 ]; then log "LOCALK8S_BUILD_ONLY=1: not starting anything"; exit 0; fi

# ---------------------------------------------------------------- start
T_START=$(now)
mkdir -p "$RUN/pids"
for f in "$RUN"/pids/*.pid; do
  [ -e "$f" ] || continue
  if alive "$(cat "$f")" "$(cat "${f%.pid}.exe" 2>/dev/null)"; then
    die "a cluster is already running from $RUN (pid $(cat "$f")); run make cluster-down first"
  fi
done
rm -rf "$RUN/pids" "$RUN/etcd-data" "$RUN/logs" "$RUN/kubelet"
mkdir -p "$RUN/pids" "$RUN/logs" "$RUN/pki"

for p in $APISERVER_PORT $ETCD_PORT $ETCD_PEER_PORT $KCM_PORT $SCHEDULER_PORT; do
  port_free "$p" || die "port 127.0.0.1:$p is in use (another cluster? set the *_PORT variables)"
done
STARTED=1

# PKI: CA, apiserver serving cert, client certs, service-account key pair (kept across restarts)
P=$RUN/pki
if [ ! -f "$P/sa.pub" ]; then
  (
    cd "$P"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=localk8s-ca" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:10.0.0.1\nextendedKeyUsage=serverAuth\n' > apiserver.ext
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver" 2>/dev/null
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 3650 -extfile apiserver.ext 2>/dev/null
    client() { echo "extendedKeyUsage=clientAuth" > "$1.ext"
      openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$2${3:+/O=$3}" 2>/dev/null
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 3650 -extfile "$1.ext" 2>/dev/null; }
    client admin kubernetes-admin system:masters
    client kube-controller-manager system:kube-controller-manager
    client kube-scheduler system:kube-scheduler
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    rm -f ./*.csr ./*.ext
  )
fi
# The client certificate kube-apiserver presents to admission webhooks (ordinal webhook's --client-ca-file is
# this cluster's CA and --client-cert-allowed-names this CN), given to the webhook plugins by an
# AdmissionConfiguration. Made also for a pki from before it existed.
if [ ! -f "$P/webhook-client.crt" ]; then
  (
    cd "$P"
    echo "extendedKeyUsage=clientAuth" > webhook-client.ext
    openssl req -newkey rsa:2048 -nodes -keyout webhook-client.key -out webhook-client.csr -subj "/CN=kube-apiserver-webhook-client" 2>/dev/null
    openssl x509 -req -in webhook-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out webhook-client.crt -days 3650 -extfile webhook-client.ext 2>/dev/null
    rm -f webhook-client.csr webhook-client.ext
  )
fi
cat > "$RUN/webhook-client.kubeconfig" <<EOF
apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate: $P/webhook-client.crt
    client-key: $P/webhook-client.key
EOF
cat > "$RUN/admission-config.yaml" <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $RUN/webhook-client.kubeconfig
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $RUN/webhook-client.kubeconfig
EOF
# Audit: every write (who, with which user agent, when; no bodies), so that a test or a benchmark can ask
# the API server who wrote an object rather than guess (e.g. which replica wrote a set's pods, or who
# deleted a namespace). Reads and events are left out: they are most of the traffic and answer nothing.
# Lease writes are logged with their body (Request), which names the holder: the sharded chaos runs
# reconstruct each shard Lease's terms from them (e2e/audit_test.go); the control plane's own Leases
# (kube-system, kube-node-lease: renewed every few seconds) are left out.
cat > "$RUN/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  verbs: [get, list, watch]
- level: None
  resources: [{group: "", resources: [events]}, {group: events.k8s.io, resources: [events]}]
- level: None
  resources: [{group: coordination.k8s.io, resources: [leases]}]
  namespaces: [kube-system, kube-node-lease]
- level: Request
  resources: [{group: coordination.k8s.io, resources: [leases]}]
- level: Metadata
EOF
SERVER=https://127.0.0.1:$APISERVER_PORT
mkkubeconfig() { # user out
  cat > "$2" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: localk8s
  cluster:
    server: $SERVER
    certificate-authority-data: $(base64 -w0 < "$P/ca.crt")
users:
- name: $1
  user:
    client-certificate-data: $(base64 -w0 < "$P/$1.crt")
    client-key-data: $(base64 -w0 < "$P/$1.key")
contexts:
- name: localk8s
  context: {cluster: localk8s, user: $1}
current-context: localk8s
EOF
}
for u in admin kube-controller-manager kube-scheduler; do mkkubeconfig $u "$RUN/$u.kubeconfig"; done

# what scripts/cluster-kcm.sh needs to (re)start kube-controller-manager on this cluster
cat > "$RUN/cluster.env" <<EOF
K8S_BIN='$K8S_BIN'
KCM_PORT='$KCM_PORT'
SERVER='$SERVER'
KCM_FEATURE_GATES='${KCM_FEATURE_GATES:-}'
EOF

kcurl() { curl -sf --cacert "$P/ca.crt" --cert "$P/admin.crt" --key "$P/admin.key" "$@"; }

# etcd (slot 1)
ETCD_ARGS=(--name localk8s --data-dir "$RUN/etcd-data"
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT"
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT"
  --initial-cluster "localk8s=http://127.0.0.1:$ETCD_PEER_PORT" --quota-backend-bytes=4294967296
  --unsafe-no-fsync --log-level=warn)   # a throwaway test store: no fsync
# etcd reads every ETCD_* environment variable as a flag (ETCD_VERSION would become --version): drop them
mapfile -t UNSET_ETCD_ENV < <(compgen -e | grep '^ETCD_' | sed 's/^/-u/')
start_recorded 1 etcd env "${UNSET_ETCD_ENV[@]}" "$ETCD_BIN" "${ETCD_ARGS[@]}"
wait_for etcd 30 etcd sh -c "curl -sf http://127.0.0.1:$ETCD_PORT/health | grep -q true"

# kube-apiserver (slot 2). OwnerReferencesPermissionEnforcement (on in OpenShift and some managed clusters):
# an ownerReference with blockOwnerDeletion needs update on the owner's finalizers subresource, so the e2e
# proves the controller's RBAC grants statefulsets/finalizers (both kinds) and pods/finalizers.
start_recorded 2 kube-apiserver "$K8S_BIN" kube-apiserver \
  --enable-admission-plugins=OwnerReferencesPermissionEnforcement \
  --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
  --bind-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
  --advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
  --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" \
  --client-ca-file="$P/ca.crt" --admission-control-config-file="$RUN/admission-config.yaml" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
  --service-cluster-ip-range=10.0.0.0/24 \
  --authorization-mode=Node,RBAC --allow-privileged=true --profiling=false \
  ${AUDIT_LOG:+--audit-policy-file="$RUN/audit-policy.yaml" --audit-log-path="$AUDIT_LOG" --audit-log-format=json} \
  ${AUDIT_LOG:+--audit-log-maxsize=256 --audit-log-maxbackup=4} \
  ${APISERVER_FEATURE_GATES:+--feature-gates="$APISERVER_FEATURE_GATES"}
wait_for kube-apiserver 120 kube-apiserver sh -c "curl -sf --cacert $P/ca.crt --cert $P/admin.crt --key $P/admin.key $SERVER/readyz | grep -qx ok"

# kube-scheduler (slot 4); kube-controller-manager (slot 3) is started by cluster-kcm.sh
if [ "$WITH_SCHEDULER" = 1 ]; then
  start_recorded 4 kube-scheduler "$K8S_BIN" kube-scheduler \
    --kubeconfig="$RUN/kube-scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --leader-elect=false
fi
if [ "$KCM_CONTROLLERS" != none ]; then
  LOCALK8S_RUN=$RUN "$HERE/cluster-kcm.sh" start "$KCM_CONTROLLERS"
fi
[ "$WITH_SCHEDULER" = 1 ] && wait_for kube-scheduler 60 kube-scheduler sh -c "curl -skf https://127.0.0.1:$SCHEDULER_PORT/healthz | grep -qx ok"

# kwok (slot 5) + fake nodes + kwok-volume default StorageClass
if [ "$WITH_KWOK" = 1 ]; then
  case "$KWOK_POD_DELETE" in
    fast|graceful) cat "$SRC/kwok/kwok-base.yaml" "$SRC/kwok/pod-never-ready.yaml" "$SRC/kwok/pod-paced.yaml" "$SRC/kwok/pod-image-pull.yaml" "$SRC/kwok/pod-in-place.yaml" "$SRC/kwok/pod-delete-$KWOK_POD_DELETE.yaml" > "$RUN/kwok.yaml" ;;
    kubelet|none) cat "$SRC/kwok/kwok-base.yaml" "$SRC/kwok/pod-never-ready.yaml" "$SRC/kwok/pod-paced.yaml" "$SRC/kwok/pod-image-pull.yaml" "$SRC/kwok/pod-in-place.yaml" > "$RUN/kwok.yaml" ;;
  esac
  start_recorded 5 kwok "$KWOK_BIN" --kubeconfig="$RUN/admin.kubeconfig" -c "$RUN/kwok.yaml"
  kcurl -o /dev/null -X POST -H 'Content-Type: application/yaml' --data-binary @"$SRC/kwok/storage-class.yaml" \
    "$SERVER/apis/storage.k8s.io/v1/storageclasses" || die "creating StorageClass failed"
  for i in $(seq 0 $((KWOK_NODES-1))); do
    kcurl -o /dev/null -X POST -H 'Content-Type: application/yaml' "$SERVER/api/v1/nodes" --data-binary @- <<EOF || die "creating node failed"
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {node.alpha.kubernetes.io/ttl: "0", kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
EOF
  done
  wait_for "kwok node(s)" 60 kwok sh -c "for i in \$(seq 0 $((KWOK_NODES-1))); do curl -sf --cacert $P/ca.crt --cert $P/admin.crt --key $P/admin.key $SERVER/api/v1/nodes/kwok-node-\$i?pretty=false | grep -q '\"type\":\"Ready\",\"status\":\"True\"' || exit 1; done"
  # hack/podreaper does what kwok's stages cannot: host-port admission (which kwok's stages wait for, so it runs
  # whatever KWOK_POD_DELETE says), readiness probes (kwok starts a pod with one not Ready; its containers' files
  # and volumes in $RUN/kubelet) and, with KWOK_POD_DELETE=kubelet, stopping and removing deleted pods and the
  # status resync
  reaper_args=(--reap=false --resync-after=0)
  if [ "$KWOK_POD_DELETE" = kubelet ]; then reaper_args=(--delay="${KUBELET_STOP_DELAY:-0s}"); fi
  start_recorded 6 podreaper "$RUN/bin/podreaper" --kubeconfig="$RUN/admin.kubeconfig" --state-dir="$RUN/kubelet" "${reaper_args[@]}"
  wait_for podreaper 30 podreaper grep -q "watching pods" "$RUN/logs/podreaper.log"
fi

# pods can only be created once the ServiceAccount admission plugin finds default/default
if [ "$KCM_CONTROLLERS" != none ]; then
  wait_for "default ServiceAccount" 60 kube-controller-manager kcurl -o /dev/null "$SERVER/api/v1/namespaces/default/serviceaccounts/default"
fi

mkdir -p "$(dirname "$OUT")"
cp "$RUN/admin.kubeconfig" "$OUT"
down="make cluster-down"
[ "$RUN" = /tmp/ordinal-localk8s ] || down="LOCALK8S_RUN=$RUN make cluster-down" # the runtime dir it stops
log "cluster up: start $(since "$T_START")s, total (build+start) $(since "$T_ALL")s; kubeconfig $OUT; logs $RUN/logs; stop with $down"
