package plan_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/internal/conformance"
)

// Every plan upstream made is read in one pass (decodeOnce), with fewer allocations than part by part: the
// pass is what a sync pays for.
func TestDecodeOnceReadsUpstreamPlans(t *testing.T) {
	cases, err := conformance.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 500 {
		t.Fatalf("only %d conformance cases embedded", len(cases))
	}
	for _, c := range cases {
		if plan.DecodeOnce(c.Plan) == nil {
			t.Fatalf("%s: the one-pass decode left it to the decode by parts", c.Name)
		}
	}
	raw := []byte(`{"abi":1,"actions":[{"verb":"updateStatus","kind":"StatefulSet","namespace":"default","name":"web","object":{"status":{"observedGeneration":2,"replicas":3}}}],"requeueAfterSeconds":0,"events":[{"type":"Normal","reason":"r","message":"m","action":0}]}`)
	once := testing.AllocsPerRun(20, func() { _, _ = plan.Decode(raw) })
	parts := testing.AllocsPerRun(20, func() { _, _ = plan.DecodeByParts(raw) })
	if once >= parts {
		t.Fatalf("Decode allocates %v times, the decode by parts %v", once, parts)
	}
}

// Decode answers as the decode by parts does, plan for plan and word for word: on upstream's plans, on the
// hostile ones, and on each of those with a member of an action, event or error made null, repeated,
// unknown or of another type.
func TestDecodeOnceAgreesWithDecodeByParts(t *testing.T) {
	cases, err := conformance.All()
	if err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for i, c := range cases {
		if i%3 == 0 {
			inputs = append(inputs, string(c.Plan))
		}
	}
	for _, m := range []map[string]string{hostile, beyondSchema} {
		for _, h := range m {
			inputs = append(inputs, h)
		}
	}
	base := `{"abi":1,"actions":[{"verb":"patch","kind":"Pod","namespace":"a","name":"b","patchType":"application/merge-patch+json","patch":{"metadata":{}},"error":"NotFound"}],` +
		`"requeueAfterSeconds":1.5,"events":[{"type":"Normal","reason":"r","message":"m","action":0}],"error":{"code":"SyncFailed","message":"m","path":"p"}}`
	inputs = append(inputs, base)
	for _, member := range []string{`"verb":"patch"`, `"patchType":"application/merge-patch+json"`, `"patch":{"metadata":{}}`, `"error":"NotFound"`,
		`"type":"Normal"`, `"action":0`, `"code":"SyncFailed"`, `"path":"p"`, `"requeueAfterSeconds":1.5`} {
		key, _, _ := strings.Cut(member, ":")
		for _, with := range []string{key + `:null`, member + `,` + member, member + `,"other":1`, key + `:[]`, key + `:{}`, key + `:"0"`, strings.ToUpper(key) + `:1,` + member} {
			inputs = append(inputs, strings.Replace(base, member, with, 1))
		}
	}
	inputs = append(inputs, strings.Replace(base, `"events":[`, `"events":[null,`, 1), strings.Replace(base, `"actions":[`, `"actions":[1,`, 1),
		strings.Replace(base, `"error":{`, `"error":null,"x":{`, 1))
	for _, in := range inputs {
		got, gerr := plan.Decode([]byte(in))
		want, werr := plan.DecodeByParts([]byte(in))
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
			t.Errorf("Decode(%.300s) = %+v, %v; by parts %+v, %v", in, got, gerr, want, werr)
		}
	}
}
