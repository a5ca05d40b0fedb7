#!/usr/bin/env bash
# failed-tests.sh LOG [LINES] - what each failed test printed last, from `go test -v` output: for every
# failed test without a failed subtest, its last LINES (default 30) output lines (each call's first 3
# lines: a dumped log says little at the end of a run), attributed by go test's
# "=== RUN/CONT/NAME" headers (parallel tests interleave; a test's lines are the indented ones). The e2e summaries end with it, so the reason a
# CI run failed is on its last screen instead of somewhere in 400 s of interleaved output.
set -euo pipefail
log=$1
lines=${2:-30}
[ -f "$log" ] || exit 0
awk -v keep="$lines" '
function add(t, line) { buf[t, cnt[t] % keep] = line; cnt[t]++ }
/^=== (RUN|CONT|NAME|PAUSE) / { cur = $3; next }
/^[ \t]*--- FAIL: / {
  name = $3
  if (!(name in failed)) { order[++nf] = name }
  failed[name] = 1
  next
}
/^[ \t]*--- (PASS|SKIP): / { next }
cur != "" && /^[ \t]/ {  # the lines of a test are indented; FAIL/ok lines are not
  # a t.Log/t.Error call starts at 4 spaces; its further lines (dumps of logs, timelines) at 8: keep 3 of those
  if ($0 ~ /^    [^ ]/) { cont[cur] = 0 } else if (++cont[cur] > 3) { if (cont[cur] == 4) add(cur, "        ..."); next }
  add(cur, $0)
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
