package plan_test

import (
	"testing"

	"github.com/ordinal-dev/ordinal/abi/schemacheck"
	"github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/internal/conformance"
)

// FuzzDecode: whatever a module returns, Decode never panics, and what it accepts the published schema
// accepts too (Decode is the schema, made fast).
func FuzzDecode(f *testing.F) {
	cases, err := conformance.All()
	if err != nil {
		f.Fatal(err)
	}
	for i, c := range cases {
		if i%25 == 0 {
			f.Add(c.Plan)
		}
	}
	for _, h := range hostile {
		f.Add([]byte(h))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := plan.Decode(raw)
		if err != nil {
			if p != nil {
				t.Fatal("a plan with an error")
			}
			return
		}
		if err := schemacheck.ValidatePlan(raw); err != nil {
			t.Fatalf("Decode accepted what the schema refuses: %v\n%s", err, raw)
		}
	})
}
