package embedded_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/abi/schemacheck"
	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/conformance"
)

// TestConformance runs every case in internal/conformance/cases through the shipped TinyGo module, the
// extended module (no case opts into an extension) and, when `make guest-stdgo` has built it, through
// the standard-Go build of the same source: each plan
// must equal the one the real upstream controller (v1.37.1) made, and validate against the schema.
func TestConformance(t *testing.T) {
	cases, err := conformance.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no conformance cases under internal/conformance/cases")
	}
	modules := map[string][]byte{"tinygo": embedded.Module(), "extended": embedded.ExtendedModule()}
	if b, err := os.ReadFile("../../build/ordinal-stdgo.wasm"); err == nil {
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

// The extended module's plan is the faithful module's, byte for byte, on every conformance case (none
// opts into an extension), and it describes its extensions where the faithful module describes none.
func TestExtendedModuleIsFaithfulUnlessASetOptsIn(t *testing.T) {
	cases, err := conformance.All()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	faithful, err := wasm.Load(ctx, embedded.Module(), wasm.Config{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer faithful.Close(ctx)
	extended, err := wasm.Load(ctx, embedded.ExtendedModule(), wasm.Config{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer extended.Close(ctx)
	if d := faithful.Describe(); len(d.Extensions) != 0 {
		t.Errorf("the faithful module describes extensions %+v", d.Extensions)
	}
	if d := extended.Describe(); len(d.Extensions) == 0 || d.Extensions[0].Name != "pause" || !strings.HasSuffix(d.ModuleVersion, "+extended") {
		t.Errorf("the extended module describes %s with extensions %+v", d.ModuleVersion, d.Extensions)
	}
	for _, c := range cases {
		want, err1 := faithful.Reconcile(ctx, c.Snapshot)
		got, err2 := extended.Reconcile(ctx, c.Snapshot)
		if err1 != nil || err2 != nil || !bytes.Equal(want, got) {
			t.Errorf("%s: the extended module's plan differs from the faithful module's (%v, %v):\n faithful %.300s\n extended %.300s", c.Name, err1, err2, want, got)
		}
	}
	if len(cases) < 100 {
		t.Fatalf("%d conformance cases", len(cases))
	}
}
