#!/usr/bin/env bash
# webhook-ca.sh - make a throwaway CA and a serving certificate for `ordinal webhook` (tests and local
# clusters; use cert-manager or your PKI in production).
#
# Usage: scripts/webhook-ca.sh OUTDIR [SAN ...]
#   SANs default to the in-cluster Service of examples/deploy (ordinal-webhook.ordinal-system.svc and its
#   .cluster.local form) plus 127.0.0.1 and localhost. A SAN that parses as an IPv4 address is an IP SAN.
# Writes OUTDIR/ca.crt, ca.key (the CA; ca.crt is the caBundle of the ValidatingWebhookConfiguration),
# tls.crt, tls.key (the webhook's --tls-cert-file / --tls-private-key-file), and ca-bundle.b64 (ca.crt in
# base64 on one line, for the caBundle field). An existing CA in OUTDIR is reused, so re-running rotates
# only the serving certificate.
set -euo pipefail
out=${1:?usage: webhook-ca.sh OUTDIR [SAN ...]}
shift
sans=("$@")
[ ${#sans[@]} -gt 0 ] || sans=(ordinal-webhook.ordinal-system.svc ordinal-webhook.ordinal-system.svc.cluster.local 127.0.0.1 localhost)
command -v openssl >/dev/null || { echo "webhook-ca.sh: openssl not found" >&2; exit 1; }
mkdir -p "$out"
cd "$out"
if [ ! -s ca.crt ] || [ ! -s ca.key ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=ordinal-webhook-test-ca" 2>/dev/null
fi
alt=""
for s in "${sans[@]}"; do
  if [[ $s =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]]; then alt="$alt,IP:$s"; else alt="$alt,DNS:$s"; fi
done
alt=${alt#,}
cat > tls.cnf <<CNF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = ${sans[0]}
[ext]
subjectAltName = $alt
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
basicConstraints = critical,CA:FALSE
CNF
openssl req -new -newkey rsa:2048 -nodes -keyout tls.key.tmp -out tls.csr -config tls.cnf 2>/dev/null
openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out tls.crt.tmp -days 825 \
  -extfile tls.cnf -extensions ext 2>/dev/null
# key first, then certificate: the webhook reloads the pair when either changes
mv tls.key.tmp tls.key && mv tls.crt.tmp tls.crt
rm -f tls.csr tls.cnf ca.srl
base64 -w0 ca.crt > ca-bundle.b64
echo "$out: ca.crt ca.key tls.crt tls.key ca-bundle.b64 (SANs: $alt)"
