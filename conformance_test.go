package ordinal_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/abi/schemacheck"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/conformance"
)

// TestConformance runs every case in testdata/conformance through the shipped TinyGo module and,
// when `make guest-stdgo` has built it, through the standard-Go build of the same source: each plan
// must equal the one the real upstream controller (v1.37.1) made, and validate against the schema.
func TestConformance(t *testing.T) {
	cases, err := conformance.Load(os.DirFS("testdata"), "conformance")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no conformance cases under testdata/conformance")
	}
	modules := map[string][]byte{"tinygo": embedded.Module()}
	if b, err := os.ReadFile("build/ordinal-stdgo.wasm"); err == nil {
		modules["stdgo"] = b
	} else {
		t.Logf("standard-Go module not built (make guest-stdgo): %v", err)
	}
	ctx := context.Background()
	for name, code := range modules {
		t.Run(name, func(t *testing.T) {
			m, err := wasm.Load(ctx, code, wasm.Config{Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(ctx)
			failed := 0
			for _, c := range cases {
				plan, err := m.Reconcile(ctx, c.Snapshot)
				if err != nil {
					t.Errorf("%s: %v", c.Name, err)
					failed++
					continue
				}
				if d := c.Check(plan); d != "" {
					t.Errorf("%s: %s", c.Name, d)
					failed++
					continue
				}
				if err := schemacheck.ValidatePlan(plan); err != nil {
					t.Errorf("%s: plan does not validate against the schema: %v", c.Name, err)
					failed++
				}
			}
			t.Logf("%s module: %d passed, %d failed of %d conformance cases", name, len(cases)-failed, failed, len(cases))
		})
	}
}
