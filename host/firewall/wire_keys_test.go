package firewall

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/internal/conformance"
)

// upstreamWire is every object and patch of every conformance case's plan: what the firewall reads of real
// plans.
func upstreamWire(t *testing.T) [][]byte {
	t.Helper()
	cases, err := conformance.All()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, c := range cases {
		var p abi.Plan
		if err := json.Unmarshal(c.Plan, &p); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for _, a := range p.Actions {
			for _, b := range [][]byte{a.Object, a.Patch} {
				if len(b) > 0 {
					out = append(out, b)
				}
			}
		}
	}
	if len(out) < 500 {
		t.Fatalf("only %d objects and patches in the conformance plans", len(out))
	}
	return out
}

// The fast path decides every object and patch of upstream's plans (a real plan's keys are plain and
// distinct), without allocating: it is what made checkKeys cheap.
func TestCheckKeysFastOnUpstreamPlans(t *testing.T) {
	for _, b := range upstreamWire(t) {
		if !keysPlainlyUnique(b) {
			t.Fatalf("the fast path left to the token decoder: %.300s", b)
		}
	}
	pod := []byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","labels":{"app":"web","a":"b"},` +
		`"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"u","controller":true}]},` +
		`"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]},"status":{}}`)
	if n := testing.AllocsPerRun(20, func() { _ = checkKeys(pod) }); n != 0 {
		t.Errorf("checkKeys of a plain pod allocated %v times a call", n)
	}
}

// checkKeys says what checkKeysByToken says, word for word, on upstream's objects and on keys repeated,
// repeated but for case, escaped, non-ASCII, nested and in arrays, and on what is not one JSON value.
func TestCheckKeysFastPathAgrees(t *testing.T) {
	inputs := upstreamWire(t)
	for _, s := range []string{
		`{}`, `[]`, `"x"`, `1`, `null`, ``, ` `, `{`, `{"a":1}x`, `{"a":1} {"b":2}`, `{"a":1,}`, `[1,]`, `{"a" 1}`,
		`{"a":1,"a":2}`, `{"a":1,"A":2}`, `{"apiVersion":1,"apiversion":2}`, `{"a":{"b":1,"b":2}}`, `[{"a":1},{"a":1,"a":1}]`,
		`{"a":{"a":1},"b":{"a":1}}`, `{"a":[{"b":1}],"b":[{"b":1}]}`, `{"\u0061":1,"a":2}`, `{"\u0041":1,"a":2}`, `{"a\"":1,"a\\"":2}`,
		`{"k":1,"\u212a":2}`, `{"K":1,"\u212a":2}`, `{"s":1,"ſ":2}`, `{"é":1,"É":2}`, `{"é":1,"é":2}`, `{"a":"\u0000","b":"é"}`,
		`{"x":[1,2.5e3,-0,true,false,null,"s",{"y":{}}],"z":{"y":[[],[{}]]}}`, " {\n\t\"a\" : [ 1 , {\"b\" : 2 } ] , \"c\" : null }\r\n",
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"A":18}`,
	} {
		inputs = append(inputs, []byte(s))
	}
	wide, deep := []byte(`{`), []byte(``)
	for i := range 70 { // more keys than the fast path's stack holds, the last a repeat but for case
		wide = fmt.Appendf(wide, `"k%d":%d,`, i, i)
	}
	for range 70 {
		deep = append(deep, `{"a":[`...)
	}
	deep = append(deep, `{"b":1,"B":2}`...)
	for range 70 {
		deep = append(deep, `]}`...)
	}
	inputs = append(inputs, append(wide, `"K0":0}`...), append(wide, `"k70":0}`...), deep)
	for _, b := range inputs {
		if msg := fastPathDisagrees(b); msg != "" {
			t.Error(msg)
		}
	}
}

// fastPathDisagrees says how checkKeys or its fast path answers b otherwise than the token decoder ("" when
// they agree).
func fastPathDisagrees(b []byte) string {
	got, want := fmt.Sprint(checkKeys(b)), fmt.Sprint(checkKeysByToken(b))
	if got != want {
		return fmt.Sprintf("checkKeys(%.200q) = %s, the token decoder says %s", b, got, want)
	}
	if keysPlainlyUnique(b) && want != "<nil>" {
		return fmt.Sprintf("the fast path passed %.200q, which the token decoder refuses: %s", b, want)
	}
	return ""
}

// FuzzCheckKeysFastPath: whatever the bytes, checkKeys answers word for word as the token decoder does,
// and the fast path passes nothing the token decoder refuses (a key escaped, folded, non-ASCII or invalid
// UTF-8, repeated at any depth).
func FuzzCheckKeysFastPath(f *testing.F) {
	for _, s := range []string{`{"a":1,"A":2}`, `{"\u006detadata":{},"metadata":{}}`, "{\"a\xff\":1,\"a\xfe\":2}",
		`[{"a":{"b":[1,{"c":null,"C":true}]}}]`, `{"a" : 1 , "b":-0.5e+3}`, `{"a":"\"}"}`, `{"k":1,"\u212a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if msg := fastPathDisagrees(b); msg != "" {
			t.Fatal(msg)
		}
	})
}

// Keys that encoding/json matches to one field (its case-insensitive match is bytes.EqualFold, by
// unicode.SimpleFold, under which "ſ" U+017F is "s" and "µ" U+00B5 is "μ") are refused, though
// strings.ToLower keeps them apart: the host reads some of a module's objects with encoding/json
// (plan.AddsSetOwner reads a claim's ownerReferences so), and {"ownerReferences":[…],"ownerReferenceſ":[]}
// is no ownerReference there and one for the API server, which reads case-sensitively.
func TestCheckKeysRefusesKeysEncodingJSONFolds(t *testing.T) {
	obj := []byte(`{"metadata":{"ownerReferences":[{"uid":"u"}],"ownerReferenceſ":[]}}`)
	var o struct {
		Metadata struct {
			OwnerReferences []json.RawMessage `json:"ownerReferences"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(obj, &o); err != nil || len(o.Metadata.OwnerReferences) != 0 {
		t.Fatalf("encoding/json no longer reads the last of the two keys: %v, %s", err, o.Metadata.OwnerReferences)
	}
	for _, s := range []string{string(obj), `{"ſpec":{},"spec":{}}`, `{"status":1,"ſtatuſ":2}`, `{"σ":1,"ς":2}`, `{"µ":1,"μ":2}`,
		`{"a":[{"x":{"θ":1,"ϑ":2}}]}`, `{"k":1,"\u212a":2}`, `{"i":1,"İ":2}`} {
		if err := checkKeys([]byte(s)); err == nil || !strings.Contains(err.Error(), "differ only by case") {
			t.Errorf("checkKeys(%s) = %v, want the keys refused as differing only by case", s, err)
		}
	}
	for _, s := range []string{`{"s":1,"t":2}`, `{"σ":1,"τ":2}`, `{"i":1,"ı":2}`} {
		if err := checkKeys([]byte(s)); err != nil {
			t.Errorf("checkKeys(%s) = %v, want no refusal", s, err)
		}
	}
}
