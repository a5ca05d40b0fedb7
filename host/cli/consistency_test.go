package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/wasmbuild"
)

// writeScenario writes create-parallel.yaml with the given replacements into a temporary directory.
func writeScenario(t *testing.T, replace ...string) string {
	t.Helper()
	b, err := os.ReadFile("../../testdata/scenarios/create-parallel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer(replace...).Replace(string(b))
	p := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Issue 11 hole 8: a set the API server refuses (ordinals.start -5 under Parallel created the same claim
// twice), negative times and a missing swapModule file were replayed, and exited 0.
func TestReplayRefusesWhatAnAPIServerWould(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		replace    []string
	}{
		{"negative ordinals.start", `spec.ordinals.start: Invalid value: -5: must be greater than or equal to 0`,
			[]string{"      replicas: 3\n", "      replicas: 3\n      ordinals: {start: -5}\n"}},
		{"negative replicas", `spec.replicas: Invalid value: -1: must be greater than or equal to 0`,
			[]string{"      replicas: 3\n", "      replicas: -1\n"}},
		{"negative event time", `events[0].at: -5s is negative`,
			[]string{"volumeClaimTemplates:", "volumeClaimTemplates:"}},
		{"missing swap module", `events[0].swapModule:`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p string
			switch tc.name {
			case "negative event time":
				p = writeScenario(t)
				appendTo(t, p, "events:\n  - at: -5s\n    deletePod: web-0\n")
			case "missing swap module":
				p = writeScenario(t)
				appendTo(t, p, "events:\n  - at: 10s\n    swapModule: no-such-module.wasm\n")
			default:
				p = writeScenario(t, tc.replace...)
			}
			code, stdout, stderr := run(t, "", "replay", p)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q, stdout %.300q; want exit 1 and %q", code, stderr, stdout, tc.want)
			}
		})
	}
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// The same bad input exits the same way from reconcile and preview, and a forbidden edit is refused by
// preview with the API server's message.
func TestSameInputSameExitCode(t *testing.T) {
	snap, err := os.ReadFile("../../examples/web-fresh.snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	// A snapshot the module rejects (a pod whose metadata is not an object): exit 2 from both.
	bad := filepath.Join(t.TempDir(), "bad.json")
	var doc map[string]any
	if err := json.Unmarshal(snap, &doc); err != nil {
		t.Fatal(err)
	}
	doc["pods"] = []any{map[string]any{"metadata": "oops"}}
	badJSON, _ := json.Marshal(doc)
	if err := os.WriteFile(bad, badJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	edit := filepath.Join(t.TempDir(), "edit.yaml")
	if err := os.WriteFile(edit, []byte("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec: {replicas: 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "", "reconcile", "-f", bad); code != ExitRejected {
		t.Fatalf("reconcile: exit %d: %s", code, stderr)
	}
	code, _, stderr := run(t, "", "preview", "-f", edit, "--from", bad)
	if code != ExitRejected || !strings.Contains(stderr, "pods[0].metadata") {
		t.Fatalf("preview of a bad snapshot: exit %d: %s", code, stderr)
	}

	// A module failure: exit 4 from both (preview once said 1 for a wrapped module error).
	module := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(module, wasmbuild.FixedOutput(`null`), 0o644); err != nil {
		t.Fatal(err)
	}
	web := "../../examples/web-fresh.snapshot.json"
	for _, args := range [][]string{{"reconcile", "-f", web}, {"preview", "-f", edit, "--from", web}} {
		if code, _, stderr := run(t, "", append(args, "--module", module)...); code != ExitModuleFailure {
			t.Errorf("%v with a broken module: exit %d: %s", args, code, stderr)
		}
	}

	// A forbidden edit: the API server's message, exit 1.
	forbidden := filepath.Join(t.TempDir(), "forbidden.yaml")
	if err := os.WriteFile(forbidden, []byte("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec: {replicas: 3, ordinals: {start: -5}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(t, "", "preview", "-f", forbidden, "--from", web)
	if code != ExitUsage || !strings.Contains(stderr, "spec.ordinals.start: Invalid value: -5") {
		t.Fatalf("preview of a forbidden edit: exit %d: %s", code, stderr)
	}
}

// Module text reaches the terminal escaped: an error message with an escape sequence is printed as
// visible text.
func TestModuleTextIsSanitized(t *testing.T) {
	plan := `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[],"error":{"code":"InvalidSnapshot","message":"bad \u001b]0;pwned\u0007 \u202eevil"}}`
	module := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(module, wasmbuild.FixedOutput(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", "reconcile", "-f", "../../examples/web-fresh.snapshot.json", "--module", module)
	if code != ExitRejected {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.ContainsAny(stderr, "\x1b\x07\u202e") || !strings.Contains(stderr, `bad \x1b]0;pwned\x07 \u202eevil`) {
		t.Fatalf("stderr not sanitized: %q", stderr)
	}
	if strings.ContainsRune(stdout, '\u202e') {
		t.Fatalf("pretty plan carries a raw bidi override: %q", stdout)
	}
}
