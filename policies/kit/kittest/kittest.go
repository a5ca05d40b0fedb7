// Package kittest runs a policy's fixtures (policies/NAME/testdata/*.json: an evaluate input and the answer
// it must get) against the policy's Go, natively. policies/fixtures_test.go runs the same fixtures against
// every build of the policy (TinyGo, AssemblyScript), so all give the same decisions.
package kittest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ordinal-dev/ordinal/policies/kit"
)

// Fixture is one fixture file.
type Fixture struct {
	Name        string          `json:"-"`
	Description string          `json:"description"`
	Input       json.RawMessage `json:"input"`
	Answer      json.RawMessage `json:"answer"`
}

// Load reads the fixtures of dir/testdata; a policy without fixtures fails the test.
func Load(t testing.TB, dir string) []Fixture {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "testdata", "*.json"))
	if len(files) == 0 {
		t.Fatalf("no fixtures under %s/testdata", dir)
	}
	var out []Fixture
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fx Fixture
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(fx.Input) == 0 || len(fx.Answer) == 0 {
			t.Fatalf("%s: a fixture has an input and an answer", f)
		}
		fx.Name = filepath.Base(f)
		out = append(out, fx)
	}
	return out
}

// SameAnswer reports whether two answers are the same JSON value.
func SameAnswer(got, want []byte) bool {
	var g, w any
	return json.Unmarshal(got, &g) == nil && json.Unmarshal(want, &w) == nil && reflect.DeepEqual(g, w)
}

// Run checks decide against every fixture of dir (the policy's directory).
func Run(t *testing.T, dir string, decide func(*kit.Input) ([]kit.Hold, error)) {
	for _, fx := range Load(t, dir) {
		t.Run(fx.Name, func(t *testing.T) {
			if got := kit.Evaluate(fx.Input, decide); !SameAnswer(got, fx.Answer) {
				t.Fatalf("%s\nanswer %s\nwant   %s", fx.Description, got, fx.Answer)
			}
		})
	}
}
