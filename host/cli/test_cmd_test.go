package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/internal/wasmbuild"
)

// testFiles writes files (name: content) into a directory of their own, the scenarios of testdata/scenarios
// reachable as $S, and returns the directory.
func testFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	scenarios, err := filepath.Abs("../../testdata/scenarios")
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(content, "$S", scenarios)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// allows: each entry must match a write issued unheld (not held by a policy, carried out) at least once;
// one that matches only held writes, or none, fails the test and says which writes of its verb and kind
// there were. An entry has no policy or reason (an unheld write has none): naming one is an unknown field.
func TestTestAllows(t *testing.T) {
	dir := testFiles(t, map[string]string{"t.yaml": `tests:
  - name: deletes go through once the window opens and the signal is back
    scenario: $S/policy-window.yaml
    expect:
      allows: [{verb: delete, kind: Pod, name: web-2}, {verb: delete, name: web-0}, {kind: StatefulSet}]
  - name: a write never issued unheld
    scenario: $S/policy-handoff.yaml
    expect:
      allows: [{verb: delete, kind: Pod, name: web-7}]
`})
	code, out, errs := run(t, "", "test", filepath.Join(dir, "t.yaml"))
	if code != ExitTestFailed {
		t.Fatalf("exit %d, want %d: %s\n%s", code, ExitTestFailed, out, errs)
	}
	for _, want := range []string{
		"PASS  deletes go through once the window opens and the signal is back",
		"FAIL  a write never issued unheld",
		"expected an unheld write with verb=delete kind=Pod name=web-7; writes: delete Pod web-2 (issued) x1, delete Pod web-1 (held: handoff RoleNotHandedOff) x2, delete Pod web-1 (issued) x1, delete Pod web-0 (held: handoff RoleNotHandedOff) x3, delete Pod web-0 (issued) x1",
		"2 tests, 1 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// In handoff, web-1's delete is held twice before it is issued: an allow of it passes (at least once),
	// and a policy field in allows is refused before anything runs.
	dir = testFiles(t, map[string]string{"t.yaml": `tests:
  - name: held, then issued
    scenario: $S/policy-handoff.yaml
    expect:
      holds: [{policy: handoff, verb: delete, name: web-1}]
      allows: [{verb: delete, name: web-1}]
`, "p.yaml": `tests:
  - name: x
    scenario: $S/policy-handoff.yaml
    expect: {allows: [{policy: handoff}]}
`})
	if code, out, errs := run(t, "", "test", filepath.Join(dir, "t.yaml")); code != ExitOK {
		t.Errorf("held, then issued: exit %d: %s\n%s", code, out, errs)
	}
	if code, _, errs := run(t, "", "test", filepath.Join(dir, "p.yaml")); code != ExitUsage || !strings.Contains(errs, "expect.allows[0].policy: unknown field") {
		t.Errorf("a policy in allows: exit %d: %s", code, errs)
	}
}

// Every file and test is read and checked before any runs: the problems of all of them are reported
// together (a malformed scenario, a policy file that is not there, a test without a scenario, in a file
// after one whose tests are fine), and nothing runs.
func TestTestChecksEveryTestBeforeRunningAny(t *testing.T) {
	dir := testFiles(t, map[string]string{
		"good.yaml": "tests:\n  - name: ok\n    scenario: $S/policy-window.yaml\n",
		"bad.yaml": `tests:
  - name: malformed scenario
    scenario: badpath.yaml
  - name: missing policy
    scenario: $S/policy-window.yaml
    policies: [nope.wasm]
  - name: no scenario
    expect: {outcome: complete}
`,
		"badpath.yaml": `name: p
manifests:
  - {apiVersion: apps/v1, kind: StatefulSet, metadata: {name: web, namespace: default},
     spec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x}]}}}}
events:
  - settled: true
    set: {'metadata.annotations["oops': x}
`,
	})
	code, out, errs := run(t, "", "test", filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml"))
	if code != ExitUsage || out != "" {
		t.Fatalf("exit %d, want %d, and no results: %s\n%s", code, ExitUsage, out, errs)
	}
	for _, want := range []string{
		"3 problems in the tests; no test was run:",
		`bad.yaml: malformed scenario: ` + filepath.Join(dir, "badpath.yaml") + `: events[0].set: path "metadata.annotations[\"oops", character 27: the quoted key is not closed by "`,
		"bad.yaml: missing policy: policies[0]: stat " + filepath.Join(dir, "nope.wasm") + ": no such file or directory",
		"bad.yaml: no scenario: a test names its scenario",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

// A test whose replay fails (here its edit, which the API server refuses: the selector is immutable) fails
// alone: the tests after it run.
func TestTestReplayErrorFailsOnlyItsTest(t *testing.T) {
	dir := testFiles(t, map[string]string{
		"edit.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  serviceName: web
  selector: {matchLabels: {app: other}}
  template:
    metadata: {labels: {app: other}}
    spec: {containers: [{name: nginx, image: registry.k8s.io/nginx-slim:0.28}]}
`,
		"t.yaml": `tests:
  - name: refused edit
    scenario: $S/policy-window.yaml
    edit: edit.yaml
  - name: after it
    scenario: $S/policy-window.yaml
    expect: {outcome: complete}
`})
	code, out, errs := run(t, "", "test", filepath.Join(dir, "t.yaml"))
	if code != ExitTestFailed {
		t.Fatalf("exit %d, want %d: %s\n%s", code, ExitTestFailed, out, errs)
	}
	for _, want := range []string{"FAIL  refused edit", "the replay failed: invalid world: event 4 (apply, at +11m22s): apply: Invalid:", "field is immutable",
		"PASS  after it", "2 tests, 1 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// --test-timeout stops a test's replay (a safety stop, in wall-clock time): past it, the test fails saying
// so and the next runs. A timeout already spent when a replay starts makes this independent of speed.
func TestTestTimeout(t *testing.T) {
	dir := testFiles(t, map[string]string{"t.yaml": `tests:
  - name: one
    scenario: $S/policy-window.yaml
  - name: two
    scenario: $S/policy-handoff.yaml
`})
	code, out, errs := run(t, "", "test", filepath.Join(dir, "t.yaml"), "--test-timeout", "1ns")
	if code != ExitTestFailed || strings.Count(out, "stopped after 1ns (--test-timeout): the replay had not ended") != 2 || !strings.Contains(out, "2 tests, 2 failed") {
		t.Fatalf("exit %d: %s\n%s", code, out, errs)
	}
	if code, _, errs := run(t, "", "test", filepath.Join(dir, "t.yaml"), "--test-timeout", "0"); code != ExitUsage || !strings.Contains(errs, "--test-timeout 0s: the limit for one test must be positive") {
		t.Errorf("--test-timeout 0: exit %d: %s", code, errs)
	}
}

// YAML aliases count against the YAML limit: a test file whose aliases name one long string a thousand
// times (10 MB expanded from 14 kB, which the YAML library's own alias check lets through) is refused
// before it is converted, naming the aliases.
func TestTestAliasBombRefused(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "x: {s: &s %q, l: [", strings.Repeat("x", 10000))
	for range 1000 {
		b.WriteString("*s, ")
	}
	b.WriteString(strings.Repeat("1, ", 30) + "1]}\ntests:\n  - {name: x, scenario: $S/policy-window.yaml}\n")
	dir := testFiles(t, map[string]string{"t.yaml": b.String()})
	code, _, errs := run(t, "", "test", filepath.Join(dir, "t.yaml"))
	if code != ExitUsage || !strings.Contains(errs, "t.yaml: the document with its aliases expanded is larger than the 8 MiB limit for YAML") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// `ordinal test` loads the module once for all its tests, each test's own policies beside it: the module
// file is read while the tests are prepared and not again (it is gone when they run), and a test with a
// policy of its own and one without both run on it.
func TestTestLoadsTheModuleOnce(t *testing.T) {
	dir := testFiles(t, map[string]string{"t.test.yaml": `tests:
  - name: its own policy
    scenario: $S/policy-pdb.yaml
    policies: [` + mustAbs(t, "../../policies/pdb/pdb.wasm") + `]
    expect: {outcome: complete}
  - name: no policy
    scenario: $S/rolling-update-maxunavailable2.yaml
    expect: {outcome: complete, noHolds: true}
`})
	module := filepath.Join(dir, "module.wasm")
	b, err := os.ReadFile("../embedded/ordinal.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(module, b, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := &moduleOptions{path: module, timeout: time.Minute, memoryLimitMB: 256}
	mods := opts.commandModules()
	defer mods.close()
	ctx := context.Background()
	tests, err := prepareTests(ctx, mods, []string{filepath.Join(dir, "t.test.yaml")}, fieldValidation{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(module); err != nil {
		t.Fatal(err)
	}
	for _, pt := range tests {
		if r := runTest(ctx, mods, pt, time.Minute); !r.Passed {
			t.Errorf("%s: %v", pt.test.Name, r.Failures)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A test whose scenario is a snapshot is judged by the module before any test runs, as `replay` judges one:
// a snapshot the module rejects is exit 2 and one it fails on exit 4, and the help of `ordinal test` says so.
func TestTestSnapshotJudgedByTheModule(t *testing.T) {
	snapshot := mustAbs(t, "../../examples/web-fresh.snapshot.json")
	dir := testFiles(t, map[string]string{"t.test.yaml": "tests:\n  - name: a snapshot\n    scenario: " + snapshot + "\n    expect: {outcome: complete}\n"})
	_, help, _ := run(t, "", "test", "--help")
	for _, tc := range []struct {
		plan string
		code int
	}{
		{`{"abi":1,"error":{"code":"InvalidSnapshot","path":"statefulSet.spec","message":"no"},"actions":[],"requeueAfterSeconds":0,"events":[]}`, ExitRejected},
		{`not a plan`, ExitModuleFailure},
	} {
		module := filepath.Join(dir, "module.wasm")
		if err := os.WriteFile(module, wasmbuild.FixedOutput(tc.plan), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := run(t, "", "test", filepath.Join(dir, "t.test.yaml"), "--module", module)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d (%s)", tc.plan, code, tc.code, stderr)
		}
		if !strings.Contains(help, fmt.Sprintf("\n  %d  ", code)) {
			t.Errorf("exit %d is not in the help of ordinal test:\n%s", code, help)
		}
	}
}
