package policies_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ordinal-dev/ordinal/abi/schemacheck"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/policies"
	"github.com/ordinal-dev/ordinal/policies/kit/kittest"
)

// Every build of every shipped policy — TinyGo and AssemblyScript alike — loads through the host's policy
// loader and gives each fixture of its policy the answer the fixture says, as the policy's Go does natively
// (its own test): the same fixtures, the same decisions, in every language, through the Extism exports and,
// where the build has them, the direct ones.
func TestEveryBuildAnswersItsFixtures(t *testing.T) {
	builds := policies.Builds()
	dirs, _ := filepath.Glob("*/testdata")
	if len(dirs) != len(builds) {
		t.Fatalf("%d policies have fixtures, %d are shipped: each shipped policy has fixtures", len(dirs), len(builds))
	}
	for name, langs := range builds {
		fixtures := kittest.Load(t, name)
		for lang, code := range langs {
			t.Run(name+"/"+lang, func(t *testing.T) {
				p, err := wasm.LoadPolicy(context.Background(), code, wasm.Config{})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close(context.Background())
				if p.Name() != name {
					t.Fatalf("the %s build describes itself as %q", lang, p.Name())
				}
				if err := schemacheck.ValidatePolicyDescribe(p.DescribeJSON()); err != nil {
					t.Fatal(err)
				}
				paths := map[string]func(context.Context, []byte) ([]byte, error){"extism": p.EvaluateExtism}
				if p.Direct() { // the TinyGo builds have the direct exports too (abi/POLICY.md section 1.1): the same answers
					paths["direct"] = p.Evaluate
				} else if lang == "tinygo" {
					t.Errorf("the %s build has no direct exports (policies/kit writes them)", lang)
				}
				for path, evaluate := range paths {
					for _, fx := range fixtures {
						if err := schemacheck.ValidatePolicyInput(fx.Input); err != nil {
							t.Fatalf("%s: the fixture's input: %v", fx.Name, err)
						}
						got, err := evaluate(context.Background(), fx.Input)
						if err != nil {
							t.Fatalf("%s (%s path): %v", fx.Name, path, err)
						}
						if !kittest.SameAnswer(got, fx.Answer) {
							t.Errorf("%s (%s, %s path)\nanswer %s\nwant   %s", fx.Name, fx.Description, path, got, fx.Answer)
						}
						if err := schemacheck.ValidatePolicyAnswer(got); err != nil {
							t.Errorf("%s (%s path): %v", fx.Name, path, err)
						}
					}
				}
			})
		}
	}
}
