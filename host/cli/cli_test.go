package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi/schemacheck"
	"github.com/ordinal-dev/ordinal/internal/jsoncmp"
)

func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	// No on-disk compilation cache in tests: each test binary compiles once per Load.
	args = append(args, "--cache-dir", "")
	code = Main(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// The embedded module returns the golden plan for every bundled example.
func TestReconcileGolden(t *testing.T) {
	goldens, _ := filepath.Glob("../../testdata/golden/*.plan.json")
	if len(goldens) == 0 {
		t.Fatal("no golden plans under testdata/golden")
	}
	for _, g := range goldens {
		name := strings.TrimSuffix(filepath.Base(g), ".plan.json")
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(g)
			if err != nil {
				t.Fatal(err)
			}
			code, out, errs := run(t, "", "reconcile", "-f", "../../examples/"+name+".snapshot.json")
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %s", code, errs)
			}
			if d := jsoncmp.Diff(want, []byte(out)); d != "" {
				t.Fatalf("plan differs from golden: %s", d)
			}
			if err := schemacheck.ValidatePlan([]byte(out)); err != nil {
				t.Fatalf("plan does not validate: %v", err)
			}
		})
	}
}

func TestReconcileStdinCompact(t *testing.T) {
	snap, err := os.ReadFile("../../examples/web-fresh.snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, string(snap), "reconcile", "--compact")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Count(strings.TrimSpace(out), "\n") != 0 || !json.Valid([]byte(out)) {
		t.Fatalf("--compact should print one line of JSON, got %q", out)
	}
}

func TestReconcileExitCodes(t *testing.T) {
	cases := []struct {
		name, stdin string
		args        []string
		code        int
		stderr      string
	}{
		{"truncated", `{"abi":1,"now":"2026-11-22T10:00:00Z","statefulSet":{`, nil, ExitRejected, "InvalidJSON"},
		{"wrong type", `{"abi":1,"now":"2026-11-22T10:00:00Z","statefulSet":{"metadata":{"name":"web","namespace":"default","uid":"u"},"spec":{"replicas":"three"}}}`, nil, ExitRejected, "statefulSet.spec.replicas"},
		{"unknown abi", `{"abi":7,"now":"2026-11-22T10:00:00Z","statefulSet":{}}`, nil, ExitRejected, "UnsupportedABI"},
		{"missing file", "", []string{"-f", "/nonexistent/snap.json"}, ExitUsage, "reading snapshot"},
		{"missing module", "{}", []string{"--module", "/nonexistent/m.wasm"}, ExitUsage, "reading module"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := run(t, c.stdin, append([]string{"reconcile"}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, c.code, errs)
			}
			if !strings.Contains(errs, c.stderr) {
				t.Fatalf("stderr %q does not mention %q", errs, c.stderr)
			}
			if c.code == ExitRejected {
				if err := schemacheck.ValidatePlan([]byte(out)); err != nil {
					t.Fatalf("error plan does not validate: %v\n%s", err, out)
				}
			}
		})
	}
}

func TestReconcileRefusesNonWasmModule(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.wasm")
	if err := os.WriteFile(bad, []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, "{}", "reconcile", "--module", bad)
	if code != ExitModuleFailure || errs == "" {
		t.Fatalf("exit %d, stderr %q; want %d and a message", code, errs, ExitModuleFailure)
	}
}

func TestVersion(t *testing.T) {
	code, out, errs := run(t, "", "version")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"host:", "module:", "abi 1", "v1.37.1", "MaxUnavailableStatefulSet=true"} {
		if !strings.Contains(out, want) {
			t.Errorf("version output lacks %q:\n%s", want, out)
		}
	}
}
