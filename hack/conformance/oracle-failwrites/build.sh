#!/usr/bin/env bash
# Builds the reference oracle with write-failure injection (ORACLE_FAIL_WRITES) for hack/conformance:
# a scratch copy of the oracle's source, this directory's failwrites.go added (without its build constraint, which keeps it out of the project's own build), and one
# line in its recording reactor that answers an injected failure before the fake API server does.
#   usage: hack/conformance/oracle-failwrites/build.sh ORACLE_SRC_DIR OUT_BINARY
set -euo pipefail
src=${1:?oracle source directory (the shared tools/oracle)}
out=${2:?output binary}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src"/. "$work"/
chmod -R u+w "$work"
grep -v "^//go:build ignore$" "$here/failwrites.go" > "$work/failwrites.go"
hook='if ferr := injectedFailure(sent, client.Tracker()); ferr != nil { res.actions = append(res.actions, recorded{action: sent, goid: curGoid(), err: ferr}); return true, nil, ferr }'
grep -q 'sent := action.DeepCopy()' "$work/sync.go" || { echo "oracle's recording reactor changed: update $0" >&2; exit 1; }
sed -i "s|^\(\s*\)sent := action.DeepCopy()\$|&\n\1$hook|" "$work/sync.go"
grep -q 'injectedFailure(sent, ' "$work/sync.go" || { echo "hook not inserted" >&2; exit 1; }
(cd "$work" && go build -o oracle .)
mv "$work/oracle" "$out"
echo "built $out (oracle with ORACLE_FAIL_WRITES)"
