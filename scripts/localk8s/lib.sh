# lib.sh - helpers shared by scripts/cluster-{up,down,kcm}.sh (sourced, not run).
# Defaults of the local control plane: the binary cache, the run directory and the ports.
LOCALK8S_CACHE=${LOCALK8S_CACHE:-$HOME/.cache/ordinal/localk8s}
LOCALK8S_RUN=${LOCALK8S_RUN:-/tmp/ordinal-localk8s}

_localk8s_name=${_localk8s_name:-localk8s}
log() { printf '[%s %(%H:%M:%S)T] %s\n' "$_localk8s_name" -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }

# alive PID EXE: PID runs (not a zombie) and still executes the recorded binary EXE.
alive() {
  local st; st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] && [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$2" ]
}

# threads_gone PID: every thread of the process has exited (it is gone, or only its zombie leader is left).
threads_gone() {
  local t st
  for t in /proc/"$1"/task/*; do
    st=$(sed 's/.*) //' "$t/stat" 2>/dev/null | cut -d' ' -f1) || continue
    [ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ] || return 1
  done
  return 0
}

# port_free PORT: nothing accepts connections on 127.0.0.1:PORT.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# stop_recorded PIDFILE: SIGTERM the recorded process (only while it runs the recorded binary),
# SIGKILL after 20 s, then remove the pid and exe files.
stop_recorded() {
  local f=$1 name pid exe
  name=$(basename "$f" .pid); pid=$(cat "$f"); exe=$(cat "${f%.pid}.exe" 2>/dev/null || echo "?")
  if alive "$pid" "$exe"; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 200); do alive "$pid" "$exe" || break; sleep 0.1; done
    if alive "$pid" "$exe"; then log "$name ($pid) still running 20s after SIGTERM, sending SIGKILL"; kill -KILL "$pid" 2>/dev/null; fi
    # The leader turns zombie before its other threads have exited, and the process's sockets are closed
    # only when the last one has: wait for that, or a restart finds its port still taken (seen under load).
    for _ in $(seq 1 200); do threads_gone "$pid" && break; sleep 0.1; done
    log "stopped $name ($pid)"
  else
    log "$name ($pid) was not running"
  fi
  rm -f "$f" "${f%.pid}.exe"
}

# start_recorded SLOT NAME [env -uVAR...] BINARY ARGS...: start detached in its own session, log to
# $RUN/logs/NAME.log (appended), record the pid as $RUN/pids/SLOT-NAME.pid (cluster-down.sh stops
# slots in reverse order) and the binary as .exe.
start_recorded() {
  local slot=$1 name=$2; shift 2
  local bin=$1; if [ "$bin" = env ]; then for a in "${@:2}"; do case "$a" in -u*) ;; *) bin=$a; break ;; esac; done; fi
  mkdir -p "$RUN/pids" "$RUN/logs"
  setsid "$@" >> "$RUN/logs/$name.log" 2>&1 < /dev/null &
  local pid=$!
  echo "$pid" > "$RUN/pids/$slot-$name.pid"
  readlink -f "$bin" > "$RUN/pids/$slot-$name.exe"
}

# wait_for WHAT TIMEOUT_S NAME CMD...: run CMD every 0.1 s until it succeeds; fail if NAME's process exits.
wait_for() {
  local what=$1 to=$2 name=$3; shift 3
  local t0; t0=$(now)
  local pid; pid=$(cat "$RUN"/pids/*-"$name".pid)
  until "$@" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { tail -20 "$RUN/logs/$name.log" >&2; die "$name exited"; }
    awk -v a="$t0" -v b="$(now)" -v t="$to" 'BEGIN{exit !(b-a>t)}' && { tail -20 "$RUN/logs/$name.log" >&2; die "timeout waiting for $what"; }
    sleep 0.1
  done
  log "$what ready after $(since "$t0")s"
}

# build_with_progress LABEL LOGFILE CMD...: run a (long) go build, printing a progress line every
# 30 s (elapsed time, modules downloaded, packages compiled; needs `go build -v`); on failure the log tail.
build_with_progress() {
  local label=$1 logf=$2; shift 2
  local t0=$SECONDS next=30 rc
  "$@" > "$logf" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if [ $((SECONDS - t0)) -ge $next ]; then
      next=$((next + 30))
      log "$label: $(( (SECONDS - t0) / 60 ))m$(( (SECONDS - t0) % 60 ))s elapsed, $(grep -c '^go: downloading' "$logf") modules downloaded, $(grep -vc '^go: ' "$logf") packages compiled"
    fi
  done
  wait "$pid"; rc=$?
  if [ $rc -ne 0 ]; then tail -30 "$logf" >&2; log "$label failed (log: $logf)"; return $rc; fi
  log "$label: done in $(( (SECONDS - t0) / 60 ))m$(( (SECONDS - t0) % 60 ))s ($(grep -vc '^go: ' "$logf") packages compiled)"
}
