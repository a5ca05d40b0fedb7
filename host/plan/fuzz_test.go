package plan_test

import (
	"fmt"
	"reflect"
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

// FuzzDecodeOnceAgrees: whatever a module returns, Decode (its one-pass fast path first) answers plan for
// plan and word for word as the decode by parts does.
func FuzzDecodeOnceAgrees(f *testing.F) {
	f.Add([]byte(`{"abi":1,"actions":[{"verb":"patch","kind":"Pod","namespace":"a","name":"b","patchType":"application/merge-patch+json","patch":{"metadata":{}},"error":"NotFound"}],` +
		`"requeueAfterSeconds":1.5,"events":[{"type":"Normal","reason":"r","message":"m","action":0}],"error":{"code":"SyncFailed","message":"m","path":"p"}}`))
	f.Add([]byte(`{"abi":1,"\u0061ctions":[{"verb":"delete","kind":"Pod","namespace":"a","n\u0061me":"b","error":null}],"requeueAfterSeconds":-0,"events":[]}`))
	for _, h := range hostile {
		f.Add([]byte(h))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, gerr := plan.Decode(raw)
		want, werr := plan.DecodeByParts(raw)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(%q) = %+v, %v; by parts %+v, %v", raw, got, gerr, want, werr)
		}
	})
}
