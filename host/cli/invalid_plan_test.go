package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/wasmbuild"
)

// A module whose output is not an ABI v1 plan is a failed module (exit 4), and nothing it returned is
// printed as if it were a plan. (Issue 11 hole 7: these once exited 0, "plan printed".)
func TestPlanValidationInCLI(t *testing.T) {
	for name, out := range map[string]string{
		"null":               `null`,
		"empty object":       `{}`,
		"wrong abi":          `{"abi":2,"actions":"nope"}`,
		"unknown error code": `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[],"error":{"code":"Oops","message":"m"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			module := filepath.Join(t.TempDir(), "m.wasm")
			if err := os.WriteFile(module, wasmbuild.FixedOutput(out), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, compact := range []bool{false, true} {
				args := []string{"reconcile", "--module", module, "-f", "../../examples/web-fresh.snapshot.json"}
				if compact {
					args = append(args, "--compact")
				}
				code, stdout, stderr := run(t, "", args...)
				if code != ExitModuleFailure {
					t.Fatalf("%v: exit %d, want %d; stderr %s", args, code, ExitModuleFailure, stderr)
				}
				if stdout != "" {
					t.Fatalf("%v: printed %q", args, stdout)
				}
				if !strings.Contains(stderr, "invalid plan") {
					t.Fatalf("%v: stderr does not say the plan is invalid: %s", args, stderr)
				}
			}
		})
	}
	// The same module returning a valid plan is accepted: what failed above is the plan, not the module.
	module := filepath.Join(t.TempDir(), "ok.wasm")
	valid := `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[]}`
	if err := os.WriteFile(module, wasmbuild.FixedOutput(valid), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, "", "reconcile", "--module", module, "-f", "../../examples/web-fresh.snapshot.json", "--compact"); code != ExitOK || strings.TrimSpace(stdout) != valid {
		t.Fatalf("valid fixed plan: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
}

// Limits that cannot be meant are usage errors (exit 1), not silently replaced: --timeout 0 meant 30 s, a
// negative --timeout meant none, and --memory-limit-mib above 4096 was clamped or overflowed.
func TestModuleLimitFlagsOutOfRange(t *testing.T) {
	for _, args := range [][]string{
		{"--timeout", "0"}, {"--timeout", "-1s"},
		{"--memory-limit-mib", "0"}, {"--memory-limit-mib", "4097"}, {"--memory-limit-mib", "268435457"},
	} {
		full := append([]string{"reconcile", "-f", "../../examples/web-fresh.snapshot.json"}, args...)
		code, stdout, stderr := run(t, "", full...)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, args[0]) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 naming %s", args, code, stdout, stderr, args[0])
		}
	}
	if code, _, stderr := run(t, "", "reconcile", "-f", "../../examples/web-fresh.snapshot.json", "--memory-limit-mib", "4096", "--timeout", "1m"); code != ExitOK {
		t.Errorf("the largest limits are refused: exit %d: %s", code, stderr)
	}
}
