package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

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

// Issue 32, finding 9: the same snapshot exited 2 from reconcile and preview but 1 from replay. The rule
// (exit_codes.go): a snapshot is the module's input, so a snapshot the module rejects is exit 2 whichever
// command is given it — replay now has the module judge a snapshot first, as preview --from always did,
// instead of letting the in-memory API server refuse it (1). A replicas of 1e400 is an InvalidSnapshot;
// JSON nested deeper than the module reads is InvalidJSON, reported as JSON (it was a YAML depth error
// from replay). YAML that does not parse is unreadable input (1) from all three, and a manifest (an edit,
// a creation: never a snapshot) the API server would refuse is a refused world (1) from both commands.
func TestSameSnapshotSameExitCodeFromEveryCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	snap, err := os.ReadFile("../../examples/web-fresh.snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Replace(string(snap), `"replicas": 3`, `"replicas": 1e400`, 1)
	if huge == string(snap) {
		t.Fatal("the example snapshot has no replicas: 3")
	}
	deep := strings.TrimSuffix(strings.TrimSpace(string(snap)), "}") + `, "x": ` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}"
	edit := write("edit.yaml", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec: {replicas: 2}\n")
	for _, tc := range []struct {
		name, file string
		want       int
		says       string
	}{
		{"replicas 1e400", write("huge.json", huge), ExitRejected, "statefulSet.spec.replicas"},
		{"deep JSON", write("deep.json", deep), ExitRejected, "InvalidJSON"},
		{"deep YAML", write("deep.yaml", "# YAML\n"+deep), ExitUsage, "exceeded max depth"},
	} {
		for _, args := range [][]string{{"reconcile", "-f", tc.file}, {"preview", "-f", edit, "--from", tc.file}, {"replay", tc.file}} {
			code, _, stderr := run(t, "", args...)
			if code != tc.want || !strings.Contains(stderr, tc.says) {
				t.Errorf("%s: %s: exit %d, want %d; stderr %.300q should say %q", tc.name, args[0], code, tc.want, stderr, tc.says)
			}
			if tc.want == ExitRejected && strings.Contains(stderr, "yaml") {
				t.Errorf("%s: %s: a JSON file's error reported as YAML: %.300q", tc.name, args[0], stderr)
			}
		}
	}
	var doc map[string]any
	json.Unmarshal(snap, &doc)
	set, _ := json.Marshal(doc["statefulSet"])
	manifest := write("huge-manifest.json", strings.Replace(string(set), `"replicas":3`, `"replicas":1e400`, 1))
	for _, args := range [][]string{{"preview", "-f", manifest, "--from", "../../examples/web-fresh.snapshot.json"}, {"replay", manifest}} {
		if code, _, stderr := run(t, "", args...); code != ExitUsage || !strings.Contains(stderr, "spec.replicas") {
			t.Errorf("a manifest with replicas 1e400: %s: exit %d, want %d: %.300q", args[0], code, ExitUsage, stderr)
		}
	}
}

// Issue 32, finding 9: -o yaml exited 4 on plans -o json printed with exit 0: YAML's parser, which the
// conversion reads the JSON with, refuses DEL, C1 controls, U+FFFF and invalid UTF-8 that JSON strings
// may hold. Every -o yaml goes through writeJSONAs, which escapes them first.
func TestYAMLOutputPrintsWhatJSONPrints(t *testing.T) {
	message := "del \x7f c1 \u0085\u009b nonchar \uffff bad \xff\xfe utf-8 esc \\u001b bidi \u202e end"
	plan := `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[{"type":"Normal","reason":"R","message":"` + message + `"}]}`
	module := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(module, wasmbuild.FixedOutput(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	web := "../../examples/web-fresh.snapshot.json"
	code, js, stderr := run(t, "", "reconcile", "-f", web, "--module", module, "-o", "json")
	if code != ExitOK {
		t.Fatalf("-o json: exit %d: %s", code, stderr)
	}
	code, y, stderr := run(t, "", "reconcile", "-f", web, "--module", module, "-o", "yaml")
	if code != ExitOK {
		t.Fatalf("-o yaml: exit %d, want 0 as -o json: %s", code, stderr)
	}
	var fromJSON, fromYAML struct{ Events []struct{ Message string } }
	if err := json.Unmarshal([]byte(js), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(y), &fromYAML); err != nil || len(fromYAML.Events) != 1 {
		t.Fatalf("-o yaml is not YAML (%v):\n%s", err, y)
	}
	// the same message, invalid UTF-8 read as U+FFFD (as encoding/json reads it)
	if got, want := fromYAML.Events[0].Message, fromJSON.Events[0].Message; got != want {
		t.Errorf("-o yaml message %q, -o json %q", got, want)
	}
	for _, args := range [][]string{{"replay", "../../testdata/scenarios/create-parallel.yaml"}, {"preview", "-f", "../../examples/ci/web-new-image.yaml", "--from", "../../examples/ci/web.snapshot.json"}} {
		if code, _, stderr := run(t, "", append(args, "--module", module, "-o", "yaml", "--fail-on", "none")...); code != ExitOK {
			t.Errorf("%s -o yaml: exit %d: %s", args[0], code, stderr)
		}
	}
}
