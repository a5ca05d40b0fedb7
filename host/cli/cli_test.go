package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ordinal-dev/ordinal/abi/schemacheck"
	"github.com/ordinal-dev/ordinal/internal/jsoncmp"
)

func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	// No on-disk compilation cache in tests: each test binary compiles once per Load.
	args = append(args, "--cache-dir", "")
	// --timeout bounds the module's compile: its 10 s default is a wall-clock budget a loaded machine misses
	// (TestPreviewHTML: "compile exceeded 10s timeout"). A test that sets its own keeps it.
	if !slices.ContainsFunc(args, func(a string) bool { return a == "--timeout" || strings.HasPrefix(a, "--timeout=") }) {
		args = append(args, "--timeout", "10m")
	}
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
			code, out, errs := run(t, "", "reconcile", "-o", "json", "-f", "../../examples/"+name+".snapshot.json")
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

// terminalStdin is a standard input that says it is a terminal, as an interactive shell's is.
type terminalStdin struct{ *strings.Reader }

func (terminalStdin) IsTerminal() bool { return true }

// A first `ordinal reconcile` typed at a shell neither waits silently on the terminal for a snapshot (-f's
// default is standard input) nor reads a snapshot file given as the argument as a set's name: both say
// that the file goes with -f. Piped in, standard input is read as before.
func TestReconcileSaysWhereTheSnapshotGoes(t *testing.T) {
	snapFile := "../../examples/web-fresh.snapshot.json"
	snap, err := os.ReadFile(snapFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		terminal bool
		args     []string
		code     int
		stderr   string
	}{
		{"no -f on a terminal", true, nil, ExitUsage, "no snapshot: -f FILE reads one"},
		{"the file as the argument, on a terminal", true, []string{snapFile}, ExitUsage, "is a file: reconcile reads its snapshot with -f (ordinal reconcile -f " + snapFile + ")"},
		{"the file as the argument, piped", false, []string{snapFile}, ExitUsage, "is a file: reconcile reads its snapshot with -f"},
		{"-f - on a terminal: asked for", true, []string{"-f", "-"}, ExitOK, ""},
		{"piped, no -f", false, nil, ExitOK, ""},
		{"piped, a set named", false, []string{"web"}, ExitOK, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdin io.Reader = strings.NewReader(string(snap))
			if c.terminal {
				stdin = terminalStdin{strings.NewReader(string(snap))}
			}
			var out, errb bytes.Buffer
			code := Main(append([]string{"reconcile", "--cache-dir", ""}, c.args...), stdin, &out, &errb)
			if code != c.code || !strings.Contains(errb.String(), c.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errb.String(), c.code, c.stderr)
			}
			if c.code != ExitOK && out.Len() > 0 {
				t.Errorf("printed %q before refusing", out.String())
			}
		})
	}
}

// A command given the wrong arguments says what it takes (its usage line), and a file given where a command
// reads its file with -f says so: cobra's "accepts 1 arg(s), received 0" alone leaves a newcomer to --help.
func TestArgumentErrorsSayTheUsage(t *testing.T) {
	manifest := "../../examples/ci/web-new-image.yaml"
	for _, c := range []struct {
		plugin bool
		args   []string
		stderr string
	}{
		{false, []string{"replay"}, "ordinal: no input: give a scenario, snapshot, List or manifest as the argument or with -f; usage: ordinal replay [-f] SCENARIO.yaml|SNAPSHOT|MANIFEST|LIST [statefulset/NAME]"},
		{false, []string{"test"}, "; usage: ordinal test FILE... [flags]"},
		{false, []string{"preview", manifest}, "ordinal: " + manifest + " is a file: ordinal preview reads it with -f; usage: ordinal preview -f edited.yaml (--from snapshot.json | --scenario scenario.yaml)"},
		{false, []string{"preview", "-f", manifest, manifest}, `unknown command "` + manifest + `" for "ordinal preview"; usage: ordinal preview -f`},
		{true, []string{"status"}, "error: accepts 1 arg(s), received 0; usage: kubectl ordinal status statefulset/NAME"},
	} {
		var out, errb bytes.Buffer
		main := Main
		if c.plugin {
			main = PluginMain
		}
		if code := main(c.args, strings.NewReader(""), &out, &errb); code != ExitUsage || !strings.Contains(errb.String(), c.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errb.String(), ExitUsage, c.stderr)
		}
	}
}

// `ordinal preview -f web.yaml` alone, a newcomer's first try with a manifest and no snapshot, says where
// the world to preview against comes from; -f missing, or both worlds given, says which.
func TestPreviewSaysWhatItLacks(t *testing.T) {
	manifest, snap := "../../examples/ci/web-new-image.yaml", "../../examples/ci/web.snapshot.json"
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"-f", manifest}, "need the world to preview the edit against: --from SNAPSHOT (a live set's: kubectl ordinal snapshot statefulset/NAME > FILE"},
		{[]string{"--from", snap}, "need -f, the edited StatefulSet manifest; usage: ordinal preview -f"},
		{[]string{"-f", manifest, "--from", snap, "--scenario", "../../examples/rolling-update.yaml"}, "--from and --scenario both name the world to preview against: give one"},
	} {
		if code, _, stderr := run(t, "", append([]string{"preview"}, c.args...)...); code != ExitUsage || !strings.Contains(stderr, c.stderr) {
			t.Errorf("preview %v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, ExitUsage, c.stderr)
		}
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
			code, out, errs := run(t, c.stdin, append([]string{"reconcile", "-o", "json"}, c.args...)...)
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
	for _, want := range []string{"host:", "module:", "abi 1", "v1.37.2", "MaxUnavailableStatefulSet=true"} {
		if !strings.Contains(out, want) {
			t.Errorf("version output lacks %q:\n%s", want, out)
		}
	}
}

// reconcile's default output is a summary for people; -o json and -o yaml are the plan.
func TestReconcileOutputFormats(t *testing.T) {
	code, out, errs := run(t, "", "reconcile", "-f", "../../examples/web-fresh.snapshot.json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"StatefulSet default/web: 4 writes\n", "  + create ControllerRevision web-f8fdccc5d (revision 1)\n",
		"  + create Pod web-0 (revision web-f8fdccc5d)\n", "  ~ updateStatus StatefulSet web\n", `status.currentRevision: - -> "web-f8fdccc5d"`,
		"events:\n", "  Normal SuccessfulCreate: Create Pod web-0 in StatefulSet web successful\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = run(t, "", "reconcile", "-o", "yaml", "-f", "../../examples/web-fresh.snapshot.json")
	var p struct {
		ABI     int   `json:"abi"`
		Actions []any `json:"actions"`
	}
	if err := yaml.Unmarshal([]byte(out), &p); code != ExitOK || err != nil || p.ABI != 1 || len(p.Actions) != 4 {
		t.Errorf("-o yaml: exit %d, %v: %.200s", code, err, out)
	}
	if code, out, _ := run(t, `{"abi":1,"now":"2026-11-22T10:00:00Z","statefulSet":{`, "reconcile"); code != ExitRejected || !strings.Contains(out, "error: InvalidJSON") {
		t.Errorf("error plan as text: exit %d\n%s", code, out)
	}
	if code, _, errs := run(t, "", "reconcile", "-o", "xml", "-f", "../../examples/web-fresh.snapshot.json"); code != ExitUsage || !strings.Contains(errs, "-o/--output") {
		t.Errorf("-o xml: exit %d %s", code, errs)
	}
}

// A flag a command does not have is answered with the command's usage line, so kubectl's -f given to a
// command that takes its files as arguments shows where they go.
func TestUnknownFlagShowsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"test", "-f", "../../testdata/policies/shipped.test.yaml"}, "ordinal: unknown shorthand flag: 'f' in -f; usage: ordinal test FILE... [flags]\n"},
		{[]string{"preview", "--bogus"}, "ordinal: unknown flag: --bogus; usage: ordinal preview -f edited.yaml "},
		{[]string{"policy", "--bogus"}, "ordinal: unknown flag: --bogus\n"}, // a group of commands: no usage line to show
	} {
		code, _, errs := run(t, "", c.args...)
		if code != ExitUsage || !strings.HasPrefix(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d, %q", c.args, code, errs, ExitUsage, c.want)
		}
	}
}
