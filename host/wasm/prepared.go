package wasm

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"sync"
	"sync/atomic"
)

// What Load does to a module before wazero sees it (the static limits, the interrupt checks, the limits
// again on the result) is a pure function of the module's bytes, the limits and this package's code, and
// it was a third of a warm Load (~8 ms of ~22, the floor of every CLI process). So Load keeps the result,
// the prepared module, as one more entry of the module's compile-cache directory, under the same manifest
// as wazero's entries: a Load that finds it sealed, of this code and these limits, skips the work.

// preparedEntry is the prepared module's file in a module's cache directory.
const preparedEntry = "ordinal-prepared"

// prepare refuses a module beyond the limits, or returns its shape and its bytes with the interrupt checks.
func prepare(wasmBytes []byte, l ModuleLimits) (ModuleShape, []byte, error) {
	preparations.Add(1)
	shape, err := checkModuleLimits(wasmBytes, l)
	if err != nil {
		return shape, nil, err
	}
	checked, err := instrumentWithinLimits(wasmBytes, l)
	return shape, checked, err
}

// preparations counts prepare's runs, for the tests of the cache.
var preparations atomic.Int64

// instrumentWithinLimits adds the interrupt checks, and judges the result by the limits too: those are the
// bytes wazero compiles (the checks add one block per loop and function).
func instrumentWithinLimits(wasmBytes []byte, l ModuleLimits) ([]byte, error) {
	checked, err := instrumentInterrupts(wasmBytes)
	if errors.Is(err, errStartSection) {
		return nil, &Error{Kind: ErrBadModule, Op: "load", Msg: err.Error(), Err: err}
	}
	if err != nil {
		return nil, &Error{Kind: ErrBadModule, Op: "load", Msg: "not a valid wasm module: " + err.Error(), Err: err}
	}
	if _, err := checkModuleLimits(checked, l); err != nil {
		err.(*Error).Msg += " (counting the host's interrupt checks: one block per loop and function)"
		return nil, err
	}
	return checked, nil
}

// preparerSource is the code whose output a prepared entry holds: the checks, the instrumenter, this
// file. An entry records a digest of it, so a build that changes any of them never uses an older build's
// entry (a change to a comment costs one preparation per module, once).
//
//go:embed interrupt.go module_limits.go module_reader.go module_scan.go module_scan_code.go prepared.go
var preparerSource embed.FS

// preparerVersion is the digest of preparerSource.
var preparerVersion = sync.OnceValue(func() string {
	h := sha256.New()
	names, _ := fs.Glob(preparerSource, "*.go") // sorted
	for _, name := range names {
		b, _ := preparerSource.ReadFile(name)
		h.Write([]byte(name + "\x00"))
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
})

// preparedHeader is the prepared entry's first line, in JSON; the prepared module's bytes follow it.
type preparedHeader struct {
	Version string       // preparerVersion of the build that wrote it
	Module  string       // the hex SHA-256 of the module it prepared: a directory copied to another module's name verifies
	Limits  ModuleLimits // the limits it was judged by (with defaults): others judge it again
	Shape   ModuleShape  // what checkModuleLimits measured of the module
}

func encodePrepared(digest [sha256.Size]byte, l ModuleLimits, shape ModuleShape, checked []byte) []byte {
	head, _ := json.Marshal(preparedHeader{Version: preparerVersion(), Module: hex.EncodeToString(digest[:]), Limits: l, Shape: shape})
	return append(append(head, '\n'), checked...)
}

// decodePrepared returns the shape and prepared bytes an entry holds, when this build under these limits
// wrote it for the module of this digest. A manifest vouches for the entry's bytes (they are the bytes it
// hashed), so its contents are trusted as the module's own check found them; but it names its files
// relative to their directory, so it would vouch as well for another module's directory under this one's
// name, whose entry would run that module (wazero's own entries are keyed by the bytes it compiles).
func decodePrepared(entry []byte, digest [sha256.Size]byte, l ModuleLimits) (shape ModuleShape, checked []byte, ok bool) {
	head, checked, found := bytes.Cut(entry, []byte{'\n'})
	var h preparedHeader
	if !found || json.Unmarshal(head, &h) != nil || h.Version != preparerVersion() || h.Limits != l ||
		h.Module != hex.EncodeToString(digest[:]) ||
		!bytes.HasPrefix(checked, []byte("\x00asm")) {
		return ModuleShape{}, nil, false
	}
	return h.Shape, checked, true
}
