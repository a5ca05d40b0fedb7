package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/jsoncmp"
)

// The focused defaulting equals the API server's (captured `oracle defaults` output) on every
// fixture: the StatefulSet with its template and claim templates, pods and claims.
func TestDefaultingMatchesAPIServer(t *testing.T) {
	inputs, _ := filepath.Glob("../../testdata/replay/defaults/*.input.json")
	if len(inputs) == 0 {
		t.Fatal("no defaulting fixtures")
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".input.json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(in, ".input.json") + ".expected.json")
			if err != nil {
				t.Fatal(err)
			}
			s, err := decodeObj(b)
			if err != nil {
				t.Fatal(err)
			}
			ss := getObj(s, "statefulSet")
			DefaultStatefulSet(ss)
			ns := getStr(ss, "metadata.namespace")
			for _, p := range getArr(s, "pods") {
				DefaultPod(p.(Obj), ns)
			}
			for _, c := range getArr(s, "claims") {
				DefaultClaim(c.(Obj), ns)
			}
			wantObj, _ := decodeObj(want)
			for _, key := range []string{"statefulSet", "pods", "claims"} {
				if wantObj[key] == nil && s[key] == nil {
					continue
				}
				if d := jsoncmp.Diff(mustJSON(wantObj[key]), mustJSON(s[key])); d != "" {
					t.Errorf("%s: %s", key, d)
				}
			}
		})
	}
}

// A defaulted object is a fixed point, as API-server defaulting is.
func TestDefaultingIsIdempotent(t *testing.T) {
	b, err := os.ReadFile("../../testdata/replay/defaults/many-fields.expected.json")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := decodeObj(b)
	ss := getObj(s, "statefulSet")
	before := mustJSON(ss)
	DefaultStatefulSet(ss)
	if d := jsoncmp.Diff(before, mustJSON(ss)); d != "" {
		t.Fatal(d)
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	for image, want := range map[string]string{
		"nginx": "Always", "nginx:latest": "Always", "nginx:1.2": "IfNotPresent",
		"example.com:5000/x": "Always", "example.com:5000/x:v1": "IfNotPresent", "x@sha256:ab": "IfNotPresent",
	} {
		if got := defaultPullPolicy(image); got != want {
			t.Errorf("%s: %s, want %s", image, got, want)
		}
	}
}
