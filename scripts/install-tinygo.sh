#!/usr/bin/env bash
# install-tinygo.sh — install a working TinyGo for WebAssembly (wasip1 / wasm-unknown)
# on Debian bookworm using ONLY: the Go module proxy (TinyGo's own Go module) and
# Debian's apt repositories (LLVM/clang/lld 19, wasi-libc, compiler-rt builtins,
# binaryen). No GitHub release tarballs, no git submodules.
#
# What it does (each step is printed):
#   1. apt-get install llvm-19-dev libclang-19-dev clang-19 lld-19
#      libclang-rt-19-dev-wasm32 wasi-libc binaryen (+ g++/llvm-19 tools for cgo/ar)
#   2. go mod download github.com/tinygo-org/tinygo@v$TINYGO_VERSION
#   3. go build -tags llvm19 (system LLVM, dynamically linked) -> $PREFIX/bin/tinygo,
#      through a tiny wrapper module ($PREFIX/build-module) because
#      `go install ...@version` needs the proxy's version list (refused, 403);
#      if TinyGo's tinygo.org/x/espflasher version is refused by the proxy
#      (0.42.0 needs v0.8.1), a local API stub replaces it (only `tinygo flash`
#      for ESP32 boards uses it)
#   4. copy src/ targets/ lib/ from the module zip into $PREFIX (= TINYGOROOT,
#      auto-detected from the binary's location) and create the empty src/net
#      placeholder (src/net is a git submodule that the module zip lacks)
#   5. seed TinyGo's library cache ($(tinygo env GOCACHE)) with Debian's prebuilt
#      wasi-libc (libc.a + headers), compiler-rt builtins for wasm32, and a
#      'wasmbuiltins' archive cut from Debian's libc.a, so TinyGo never needs the
#      lib/wasi-libc git submodule (which the module zip does not contain)
#   6. smoke-test: build a //go:wasmexport c-shared module for -target=wasip1 and
#      -target=wasm-unknown
#
# Idempotent: re-running skips what is already in place (FORCE=1 rebuilds).
# `tinygo clean` deletes the seeded cache entries: re-run this script (or
# `install-tinygo.sh --seed-only`) afterwards.
#
# Env knobs:
#   TINYGO_VERSION  default 0.41.1 (the newest on the proxy that accepts Go 1.26;
#                   0.42.0 needs Go 1.25-1.27 and also works, see REPORT.md)
#   LLVM_MAJOR      default 19 (Debian bookworm: 15, 16, 19; 22 via bookworm-security)
#   PREFIX          default /opt/tinygo-$TINYGO_VERSION-llvm$LLVM_MAJOR
#   LINK            default /usr/local/bin/tinygo ('' = do not create the symlink)
#   SKIP_APT=1      do not run apt-get (packages must already be installed)
#   FORCE=1         rebuild the binary and recopy TINYGOROOT
#
# Not supported by this install (need other git submodules / tools):
#   -gc=boehm (lib/bdwgc), -target=wasip2 (lib/wasi-cli + wasm-tools),
#   importing net / net/http (src/net submodule), microcontroller targets
#   that need picolibc/musl sources, `tinygo flash`.
set -Eeuo pipefail
trap 'echo "install-tinygo: FAILED at line $LINENO: $BASH_COMMAND" >&2' ERR

TINYGO_VERSION=${TINYGO_VERSION:-0.41.1}
LLVM_MAJOR=${LLVM_MAJOR:-19}
PREFIX=${PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/ordinal/tinygo-${TINYGO_VERSION}-llvm${LLVM_MAJOR}}
LINK=${LINK-}
SEED_ONLY=0
[ "${1:-}" = "--seed-only" ] && SEED_ONLY=1

say() { printf '\n==> %s\n' "$*"; }
die() { printf 'install-tinygo: ERROR: %s\n' "$*" >&2; exit 1; }
run() { printf '    $ %s\n' "$*"; "$@"; }

command -v go >/dev/null || die "go not found on PATH (need the Go toolchain, e.g. /usr/local/go/bin)"
GOVER=$(go env GOVERSION)
say "TinyGo $TINYGO_VERSION, LLVM $LLVM_MAJOR, PREFIX=$PREFIX, host $GOVER"

LLVM_LIB=/usr/lib/llvm-$LLVM_MAJOR
RT_A=$LLVM_LIB/lib/clang/$LLVM_MAJOR/lib/wasi/libclang_rt.builtins-wasm32.a
LIBC_A=/usr/lib/wasm32-wasi/libc.a
LIBC_INC=/usr/include/wasm32-wasi
TG=$PREFIX/bin/tinygo

# ---------------------------------------------------------------- 1. apt
PKGS=(g++ llvm-$LLVM_MAJOR-dev libclang-$LLVM_MAJOR-dev clang-$LLVM_MAJOR lld-$LLVM_MAJOR
      libclang-rt-$LLVM_MAJOR-dev-wasm32 wasi-libc binaryen)
if [ "$SEED_ONLY" = 0 ]; then
  say "1. Debian packages: ${PKGS[*]}"
  missing=()
  for p in "${PKGS[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "    all installed"
  elif [ "${SKIP_APT:-0}" = 1 ]; then
    die "SKIP_APT=1 but missing packages: ${missing[*]}"
  else
    [ "$(id -u)" = 0 ] || die "apt-get needs root (missing: ${missing[*]})"
    run apt-get update -qq
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
fi
for f in "$LLVM_LIB/lib/libLLVM-$LLVM_MAJOR.so" "$RT_A" "$LIBC_A" "$LIBC_INC/stdlib.h" /usr/bin/clang-$LLVM_MAJOR /usr/bin/wasm-ld-$LLVM_MAJOR; do
  [ -e "$f" ] || die "expected file missing after apt: $f"
done
command -v wasm-opt >/dev/null || die "wasm-opt (binaryen) not on PATH"
echo "    $(wasm-opt --version)"

# ---------------------------------------------------------------- 2. module
if [ "$SEED_ONLY" = 0 ]; then
  say "2. go mod download github.com/tinygo-org/tinygo@v$TINYGO_VERSION"
  if ! DLJSON=$(go mod download -json "github.com/tinygo-org/tinygo@v$TINYGO_VERSION" 2>&1); then
    die "github.com/tinygo-org/tinygo@v$TINYGO_VERSION is not available from the Go module proxy: $(printf '%s' "$DLJSON" | sed -n 's/.*"Error": "\(.*\)".*/\1/p' | head -1)"
  fi
  MODDIR=$(printf '%s\n' "$DLJSON" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$MODDIR" ] && [ -f "$MODDIR/go.mod" ] || die "could not locate github.com/tinygo-org/tinygo@v$TINYGO_VERSION in the module cache"
  echo "    $MODDIR"

  # TinyGo refuses Go versions outside [minorMin, minorMax]; check before building.
  CFG=$MODDIR/builder/config.go
  MIN=$(sed -n 's/.*minorMin *= *\([0-9][0-9]*\).*/\1/p' "$CFG" | head -1)
  MAX=$(sed -n 's/.*minorMax *= *\([0-9][0-9]*\).*/\1/p' "$CFG" | head -1)
  GOMINOR=$(echo "$GOVER" | sed -n 's/^go1\.\([0-9][0-9]*\).*/\1/p')
  if [ -n "$MIN" ] && [ -n "$MAX" ] && [ -n "$GOMINOR" ]; then
    if [ "$GOMINOR" -lt "$MIN" ] || [ "$GOMINOR" -gt "$MAX" ]; then
      die "TinyGo $TINYGO_VERSION supports Go 1.$MIN..1.$MAX, but go on PATH is $GOVER"
    fi
    echo "    TinyGo $TINYGO_VERSION accepts Go 1.$MIN..1.$MAX: $GOVER ok"
  fi
  ls "$MODDIR"/cgo/libclang_config_llvm"$LLVM_MAJOR".go >/dev/null 2>&1 || die "TinyGo $TINYGO_VERSION has no llvm$LLVM_MAJOR build tag"

  # ------------------------------------------------------------ 3. build
  want="tinygo version $TINYGO_VERSION .*LLVM version $LLVM_MAJOR\."
  if [ "${FORCE:-0}" != 1 ] && [ -x "$TG" ] && "$TG" version 2>/dev/null | grep -q "$want"; then
    say "3. $TG already built: $("$TG" version)"
  else
    say "3. go build -tags llvm$LLVM_MAJOR (system LLVM $LLVM_MAJOR, ~2 min on 2 cores)"
    mkdir -p "$PREFIX/bin"
    # `go install github.com/tinygo-org/tinygo@vX` fails on this proxy (it asks
    # for the version list, which is refused with 403), so build through a
    # small wrapper module that requires TinyGo at the exact version.
    B=$PREFIX/build-module
    rm -rf "$B"; mkdir -p "$B"
    GOLINE=$(sed -n 's/^go \([0-9.]*\).*/\1/p' "$MODDIR/go.mod" | head -1)
    printf 'module tinygo-build\n\ngo %s\n\nrequire github.com/tinygo-org/tinygo v%s\n' "${GOLINE:-1.22}" "$TINYGO_VERSION" > "$B/go.mod"
    # tinygo.org/x/espflasher (only used by `tinygo flash` for ESP32 boards):
    # TinyGo 0.42.0 requires v0.8.1, which the proxy refuses; substitute a
    # local stub with the same API subset so the build can proceed.
    ESPV=$(sed -n 's/^[[:space:]]*tinygo.org\/x\/espflasher \(v[^ ]*\).*/\1/p' "$MODDIR/go.mod" | head -1)
    if [ -n "$ESPV" ] && ! go mod download "tinygo.org/x/espflasher@$ESPV" >/dev/null 2>&1; then
      echo "    tinygo.org/x/espflasher@$ESPV is not available from the proxy: using a local stub (tinygo flash for ESP32 disabled)"
      mkdir -p "$B/espflasher-stub/pkg/espflasher"
      printf 'module tinygo.org/x/espflasher\n\ngo 1.22\n' > "$B/espflasher-stub/go.mod"
      cat > "$B/espflasher-stub/pkg/espflasher/stub.go" <<'STUB'
// Package espflasher is a local stand-in for tinygo.org/x/espflasher: it only
// provides the API that `tinygo flash` uses for ESP32 boards, and every call
// fails. Compiling (e.g. to WebAssembly) never touches it.
package espflasher

import (
	"errors"
	"fmt"
	"io"
)

type ResetMode int

const (
	ResetDefault ResetMode = iota
	ResetUSBJTAG
)

type Logger interface{ Logf(format string, args ...interface{}) }

type StdoutLogger struct{ W io.Writer }

func (l *StdoutLogger) Logf(format string, args ...interface{}) { fmt.Fprintf(l.W, format+"\n", args...) }

type FlasherOptions struct {
	Compress  bool
	ResetMode ResetMode
	Logger    Logger
}

func DefaultOptions() *FlasherOptions { return &FlasherOptions{} }

type Flasher struct{}

var errStub = errors.New("espflasher: ESP32 flashing is not available in this TinyGo build (stub module)")

func New(port string, opts *FlasherOptions) (*Flasher, error)                { return nil, errStub }
func (f *Flasher) Close() error                                               { return nil }
func (f *Flasher) ChipName() string                                           { return "" }
func (f *Flasher) EraseFlash(progress func(current, total int)) error         { return errStub }
func (f *Flasher) FlashImage(data []byte, offset uint32, progress func(current, total int)) error {
	return errStub
}
func (f *Flasher) Reset() {}
STUB
      printf '\nreplace tinygo.org/x/espflasher => ./espflasher-stub\n' >> "$B/go.mod"
    fi
    ( cd "$B" && run env GOWORK=off GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=1 \
        go build -trimpath -tags "llvm$LLVM_MAJOR" -o "$TG.tmp" github.com/tinygo-org/tinygo )
    mv -f "$TG.tmp" "$TG"
  fi

  # ------------------------------------------------------------ 4. TINYGOROOT
  if [ "${FORCE:-0}" != 1 ] && [ -f "$PREFIX/src/runtime/internal/sys/zversion.go" ] && [ -d "$PREFIX/src/net" ] \
     && [ -f "$PREFIX/targets/wasip1.json" ] && cmp -s "$MODDIR/targets/wasip1.json" "$PREFIX/targets/wasip1.json"; then
    say "4. TINYGOROOT $PREFIX already populated"
  else
    say "4. populate TINYGOROOT=$PREFIX (src/ targets/ lib/ from the module zip)"
    rm -rf "$PREFIX/src" "$PREFIX/targets" "$PREFIX/lib"
    run cp -R "$MODDIR/src" "$MODDIR/targets" "$MODDIR/lib" "$PREFIX/"
    chmod -R u+w "$PREFIX/src" "$PREFIX/targets" "$PREFIX/lib"
    # src/net is a git submodule (tinygo-org/net), absent from the module zip.
    # TinyGo's GOROOT overlay needs the directory to exist; left empty, the
    # overlay falls back to upstream net sources (programs importing net won't build).
    run mkdir -p "$PREFIX/src/net"
  fi
  v=$(sed -n 's/^[[:space:]]*"wasmbuiltins":[[:space:]]*\([0-9][0-9]*\),.*/\1/p' "$MODDIR/compileopts/config.go" | head -1)
  # the musl objects TinyGo's 'wasmbuiltins' library is made of (version-specific)
  objs=$(grep -o 'libc-top-half/musl/src/[a-z]*/[A-Za-z0-9_]*\.c' "$MODDIR/builder/wasmbuiltins.go" | sed 's#.*/##; s#\.c$#.o#' | tr '\n' ' ')
  printf 'TINYGO_VERSION=%s\nLLVM_MAJOR=%s\nWB_SUFFIX=%s\nWB_OBJS=%s\nMODDIR=%s\n' "$TINYGO_VERSION" "$LLVM_MAJOR" "${v:+-v$v}" "$objs" "$MODDIR" > "$PREFIX/install-tinygo.env"
  if [ -n "$LINK" ]; then
    run ln -sfn "$TG" "$LINK"
  fi
fi
[ -x "$TG" ] || die "$TG missing (run without --seed-only first)"

# ---------------------------------------------------------------- 5. seed cache
GOCACHE_TG=$(env -u TINYGOROOT "$TG" env GOCACHE)
ROOT_TG=$(env -u TINYGOROOT "$TG" env TINYGOROOT)
[ "$ROOT_TG" = "$PREFIX" ] || die "tinygo auto-detected TINYGOROOT=$ROOT_TG, expected $PREFIX"
say "5. seed TinyGo library cache in $GOCACHE_TG with Debian's prebuilt wasm libraries"
# The cache directory name of the wasm-unknown builtins carries a version
# suffix in some TinyGo versions (libVersions in compileopts/config.go);
# step 4 recorded it in $PREFIX/install-tinygo.env.
WB_SUFFIX=$(sed -n 's/^WB_SUFFIX=//p' "$PREFIX/install-tinygo.env" 2>/dev/null || true)
WB_OBJS=$(sed -n 's/^WB_OBJS=//p' "$PREFIX/install-tinygo.env" 2>/dev/null || true)
[ -n "$WB_OBJS" ] || WB_OBJS="memcpy.o memmove.o memset.o __math_divzero.o __math_invalid.o __math_oflow.o __math_uflow.o __math_xflow.o exp.o exp_data.o exp2.o log.o log_data.o"
seed() { # dir lib.a [include]
  local d=$GOCACHE_TG/$1
  mkdir -p "$d"
  ln -sfn "$2" "$d/lib.a"
  [ -z "${3:-}" ] || ln -sfn "$3" "$d/include"
  printf '    %s/lib.a -> %s%s\n' "$1" "$2" "${3:+ (+ include -> $3)}"
}
# -target=wasip1 / wasi: triple wasm32-unknown-wasi, cpu generic
seed wasi-libc-wasm32-unknown-wasi-generic "$LIBC_A" "$LIBC_INC"
seed compiler-rt-wasm32-unknown-wasi-generic "$RT_A"
# -target=wasm-unknown: triple wasm32-unknown-unknown, cpu mvp, libc 'wasmbuiltins'
# (memcpy/memmove/memset + exp/exp2/log from musl) -> cut from Debian's libc.a.
WB_DIR=$GOCACHE_TG/wasmbuiltins-wasm32-unknown-unknown-mvp$WB_SUFFIX
if [ ! -s "$WB_DIR/lib.a" ] || [ "$(cat "$WB_DIR/objs" 2>/dev/null)" != "$WB_OBJS" ]; then
  tmp=$(mktemp -d)
  # shellcheck disable=SC2086
  ( cd "$tmp" && "llvm-ar-$LLVM_MAJOR" x "$LIBC_A" $WB_OBJS \
    && mkdir -p "$WB_DIR" && "llvm-ar-$LLVM_MAJOR" rcs "$WB_DIR/lib.a.tmp" ./*.o && mv "$WB_DIR/lib.a.tmp" "$WB_DIR/lib.a" )
  rm -rf "$tmp"
  mkdir -p "$WB_DIR/include"
  printf '%s' "$WB_OBJS" > "$WB_DIR/objs"
fi
echo "    $(basename "$WB_DIR")/lib.a ($(stat -c %s "$WB_DIR/lib.a") bytes, from $LIBC_A)"
seed compiler-rt-wasm32-unknown-unknown-mvp "$RT_A"

# ---------------------------------------------------------------- 6. smoke test
say "6. smoke test"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cat > "$t/go.mod" <<'EOF'
module smoke

go 1.22
EOF
cat > "$t/main.go" <<'EOF'
package main

//go:wasmexport add
func add(a, b int32) int32 {
	s := make([]int32, 0, 1)
	s = append(s, a, b) // heap allocation
	return s[0] + s[1]
}

func main() {}
EOF
for target in wasip1 wasm-unknown; do
  # (LLVM 19 warns about the LLVM 20 feature names bulk-memory-opt and
  # call-indirect-overlong in TinyGo's wasm targets; harmless, filtered here)
  if ! ( cd "$t" && run env -u TINYGOROOT "$TG" build -target="$target" -buildmode=c-shared -no-debug -o "$t/$target.wasm" . 2> "$t/err.txt" ); then
    cat "$t/err.txt" >&2; die "tinygo build -target=$target failed"
  fi
  grep -v 'is not a recognized feature for this target' "$t/err.txt" >&2 || true
  [ "$(head -c 4 "$t/$target.wasm" | od -An -c | tr -d ' ')" = '\0asm' ] || die "$target: output is not a wasm module"
  echo "    -target=$target: ok ($(stat -c %s "$t/$target.wasm") bytes)"
done

say "done: $("$TG" version)"
cat <<EOF
    binary:      $TG${LINK:+  (symlink: $LINK)}
    TINYGOROOT:  $PREFIX (auto-detected from the binary location; do not set it)
    usage:       tinygo build -target=wasip1 -buildmode=c-shared -no-debug -o plugin.wasm .
    after 'tinygo clean': $0 --seed-only
EOF
