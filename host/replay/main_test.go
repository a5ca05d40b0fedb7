package replay

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// testModule is the embedded module, compiled once for the package's tests.
var testModule *wasm.Module

func TestMain(m *testing.M) {
	ctx := context.Background()
	mod, err := wasm.Load(ctx, embedded.Module(), wasm.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "loading the embedded module:", err)
		os.Exit(1)
	}
	testModule = mod
	code := m.Run()
	mod.Close(ctx)
	os.Exit(code)
}

func testOptions() Options {
	return Options{Module: testModule, LoadModule: func(ctx context.Context, path string) (Reconciler, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return wasm.Load(ctx, b, wasm.Config{})
	}}
}
