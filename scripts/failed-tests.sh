#!/usr/bin/env bash
# failed-tests.sh LOG [LINES] - what each failed test printed last, from `go test -v` output: for every
# failed test without a failed subtest, its last LINES (default 30) output lines, attributed by go test's
# "=== RUN/CONT/NAME" headers (parallel tests interleave; a test's lines are the indented ones). The e2e summaries end with it, so the reason a
# CI run failed is on its last screen instead of somewhere in 400 s of interleaved output.
set -euo pipefail
log=$1
lines=${2:-30}
[ -f "$log" ] || exit 0
awk -v keep="$lines" '
/^=== (RUN|CONT|NAME|PAUSE) / { cur = $3; next }
/^[ \t]*--- FAIL: / {
  name = $3
  if (!(name in failed)) { order[++nf] = name }
  failed[name] = 1
  next
}
/^[ \t]*--- (PASS|SKIP): / { next }
cur != "" && /^[ \t]/ {  # the lines of a test are indented; FAIL/ok lines are not
  i = cnt[cur] % keep
  buf[cur, i] = $0
  cnt[cur]++
}
END {
  for (k = 1; k <= nf; k++) {
    t = order[k]
    leaf = 1
    for (u in failed) if (index(u, t "/") == 1) { leaf = 0; break }
    if (!leaf) continue
    printf "--- %s: its last output\n", t
    n = cnt[t]; start = n > keep ? n - keep : 0
    for (j = start; j < n; j++) print buf[t, j % keep]
  }
}' "$log"
