// Package kittest runs a policy's fixtures (policies/NAME/testdata/*.json: an evaluate input and the answer
// it must get) against the policy's Go, natively. policies/fixtures_test.go runs the same fixtures against
// every build of the policy (TinyGo, AssemblyScript), so all give the same decisions; `ordinal policy test`
// runs them against any build, as the in-cluster gate does.
package kittest

import (
	"path/filepath"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/policyfixture"
	"github.com/ordinal-dev/ordinal/policies/kit"
)

// Fixture is one fixture file.
type Fixture = policyfixture.Fixture

// Load reads the fixtures of dir/testdata; a policy without fixtures fails the test.
func Load(t testing.TB, dir string) []Fixture {
	t.Helper()
	fs, err := policyfixture.ReadDir(filepath.Join(dir, "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// SameAnswer reports whether two answers are the same JSON value.
func SameAnswer(got, want []byte) bool { return policyfixture.SameAnswer(got, want) }

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
