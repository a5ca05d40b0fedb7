#!/usr/bin/env bash
# Regenerates internal/conformance/cases (every snapshot, plan and INDEX.md) with the reference oracle.
#   usage: ORACLE=/path/to/oracle hack/conformance/generate.sh [-out DIR] [-j N]
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${ORACLE:?set ORACLE to the oracle binary (see hack/conformance/README.md)}"
exec go run ./hack/conformance "$@"
