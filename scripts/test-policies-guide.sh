#!/usr/bin/env bash
# test-policies-guide.sh — runs docs/policies.md's AssemblyScript walkthrough as written: every ```sh block
# that follows a "<!-- test: assemblyscript -->" line, in order, as one script from the repository's root,
# with bin/ordinal first on PATH and a scratch directory as HOME (the guide copies the template to
# ~/freeze, builds it there, tests its fixtures, replays it, bundles its fixtures). A command ending in
# "# exit N" must exit N; any other must succeed. npm keeps the user's cache (npm_config_cache), so packages
# fetched once from the npm registry are not fetched again. `make test-policies-guide` (part of `make test`)
# builds bin/ordinal and installs node first.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
GUIDE=docs/policies.md
[ -x bin/ordinal ] || { echo "test-policies-guide.sh: bin/ordinal is missing: make build" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/home"

# The marked blocks, a "# exit N" line becoming a check of its exit code that names the guide's line.
awk -v guide="$GUIDE" '
	/^<!-- test: assemblyscript -->$/ { armed = 1; next }
	armed && /^```sh$/ { inblock = 1; armed = 0; blocks++; next }
	inblock && /^```$/ { inblock = 0; next }
	inblock && match($0, /[ \t]+# exit [0-9]+$/) {
		want = substr($0, RSTART); sub(/.*# exit /, "", want)
		printf "set +e\n%s\nrc=$?\nset -e\n", substr($0, 1, RSTART - 1)
		printf "[ \"$rc\" = %s ] || { echo \"%s line %d: exit $rc, the guide says %s\" >&2; exit 1; }\n", want, guide, NR, want
		next
	}
	inblock { print; next }
	END { if (blocks < 5) { printf "%s: %d blocks marked <!-- test: assemblyscript -->, want the walkthrough (5 or more)\n", guide, blocks > "/dev/stderr"; exit 1 } }
' "$GUIDE" > "$work/guide.sh"

export npm_config_cache=${npm_config_cache:-$HOME/.npm}
start=$SECONDS
HOME="$work/home" PATH="$ROOT/bin:$PATH" bash -euxo pipefail "$work/guide.sh"
echo "docs/policies.md's AssemblyScript walkthrough ran as written ($((SECONDS - start)) s)"
