package wasm_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/abi/schemacheck"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// guestWasmPath is the real module built by `make guest`; ORDINAL_TEST_WASM
// overrides it (e.g. to test the standard-Go build or a -gc=leaking build).
func guestWasmPath() string {
	if p := os.Getenv("ORDINAL_TEST_WASM"); p != "" {
		return p
	}
	return filepath.Join("..", "embedded", "ordinal.wasm")
}

// guestWasm returns the real module's bytes, or skips the test until it exists.
func guestWasm(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile(guestWasmPath())
	if err != nil {
		tb.Skipf("real guest module not available (%v): run `make guest` to build host/embedded/ordinal.wasm", err)
	}
	return b
}

// loadGuest loads the real module, closing it when the test ends. The timeout
// is only a bound: a precise-GC TinyGo build can take seconds per call.
func loadGuest(tb testing.TB, cfg wasm.Config) *wasm.Module {
	tb.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Minute
	}
	return load(tb, guestWasm(tb), cfg)
}

// loadTestModule loads one of the misbehaving modules under testdata/.
func loadTestModule(tb testing.TB, name string, cfg wasm.Config) *wasm.Module {
	tb.Helper()
	return load(tb, testModule(tb, name), cfg)
}

func testModule(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".wasm"))
	if err != nil {
		tb.Fatalf("%v (rebuild with testdata/build.sh)", err)
	}
	return b
}

func load(tb testing.TB, wasmBytes []byte, cfg wasm.Config) *wasm.Module {
	tb.Helper()
	m, err := wasm.Load(context.Background(), wasmBytes, cfg)
	if err != nil {
		tb.Fatalf("Load: %v", err)
	}
	tb.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// decodePlan checks a plan against the schema and decodes it.
func decodePlan(tb testing.TB, plan []byte) abi.Plan {
	tb.Helper()
	if err := schemacheck.ValidatePlan(plan); err != nil {
		tb.Fatalf("plan does not validate: %v\nplan: %.500s", err, plan)
	}
	var p abi.Plan
	if err := json.Unmarshal(plan, &p); err != nil {
		tb.Fatalf("plan: %v", err)
	}
	return p
}

// conformanceSnapshots lists internal/conformance/cases/*/*.snapshot.json, if any.
func conformanceSnapshots(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "internal", "conformance", "cases", "*", "*.snapshot.json"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatal("no conformance snapshots under internal/conformance/cases")
	}
	return files
}
