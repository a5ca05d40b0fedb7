package wasm_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/wasm"
	wb "github.com/ordinal-dev/ordinal/internal/wasmbuild"
)

// FuzzLoad feeds mutated module bytes to Load and one call: never a panic, never a Go fatal error (an
// unbounded allocation would be one), and every failure a typed *wasm.Error or a configuration error.
// The limits are lowered so a mutated module cannot spend the fuzzer's time compiling.
func FuzzLoad(f *testing.F) {
	f.Add(wb.FixedOutput(emptyPlan))
	f.Add(withCode(blocks(20, 20)).Encode())
	tables := withCode(nil)
	tables.Tables = []wb.Limits{{Min: 10, Max: 100}}
	f.Add(tables.Encode())
	for _, name := range []string{"trap", "loop"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name+".wasm")); err == nil {
			f.Add(b)
		}
	}
	cfg := wasm.Config{Timeout: time.Second, MemoryLimitPages: 64, MaxInstances: 1, MaxOutputBytes: 1 << 20,
		Limits: wasm.ModuleLimits{MaxBytes: 1 << 20, MaxCompileCost: 2e8, MaxFunctionBlocks: 2000, MaxTableEntries: 1 << 16}}
	f.Fuzz(func(t *testing.T, bin []byte) {
		ctx := context.Background()
		m, err := wasm.Load(ctx, bin, cfg)
		if err != nil {
			return
		}
		defer m.Close(ctx)
		_, _ = m.Reconcile(ctx, misbehave)
	})
}
