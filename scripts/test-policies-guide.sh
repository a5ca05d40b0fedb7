#!/usr/bin/env bash
# test-policies-guide.sh — runs docs/policies.md's AssemblyScript walkthrough as written: the blocks marked
# "<!-- test: assemblyscript -->" run with the guide's other blocks by host/cli's TestGuidesRunAsWritten (the
# one test of every guide's commands), which runs them only when ORDINAL_GUIDE_ASSEMBLYSCRIPT=1: they need
# node and fetch the template's packages from the npm registry. The guide copies the template to ~/freeze (a
# scratch HOME), builds it there, tests its fixtures (their output compared with the guide's), replays it,
# bundles its fixtures; a command ending in "# exit N" must exit N, any other must succeed. npm keeps the
# user's cache (npm_config_cache), so packages fetched once are not fetched again. `make test-policies-guide`
# (part of `make test`) installs node first.
set -euo pipefail
cd "$(dirname "$0")/.."
export npm_config_cache=${npm_config_cache:-$HOME/.npm}
ORDINAL_GUIDE_ASSEMBLYSCRIPT=1 exec ${GO:-go} test ./host/cli -run '^TestGuidesRunAsWritten$/^policies$' -count=1 -v
