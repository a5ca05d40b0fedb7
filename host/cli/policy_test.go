package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// A scenario whose set names the shipped handoff policy replays with it: the primary's delete is held.
func TestReplayRunsTheSetsPolicies(t *testing.T) {
	code, out, errs := run(t, "", "replay", "../../testdata/scenarios/policy-handoff.yaml", "--verbose")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		`delete Pod web-1 -> held by policy handoff (RoleNotHandedOff): pod web-1 still carries role=primary`,
		"event: Normal PolicyReleased policy handoff no longer holds delete Pod web-1",
		"== complete",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// policyScenario is a 2-replica set's scenario whose set carries these annotations.
func policyScenario(t *testing.T, annotations string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "s.yaml")
	sc := `name: p
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: web, namespace: default, annotations: {` + annotations + `}}
    spec:
      replicas: 2
      serviceName: web
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: "registry.k8s.io/nginx-slim:0.27"}]}
`
	if err := os.WriteFile(f, []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// A policy that fails holds nothing back: the rollout completes, and the failure is reported.
func TestReplayPolicyThatFailsHoldsNothing(t *testing.T) {
	f := policyScenario(t, `ordinal.dev/policies: bad, misbehave: trap`)
	code, out, errs := run(t, "", "replay", f, "--verbose", "--policy", "../wasm/testdata/badpolicy.wasm")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "event: Warning PolicyFailed policy bad: ") || !strings.Contains(out, "it held nothing back") || !strings.Contains(out, "== complete") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestReplayPolicyErrors(t *testing.T) {
	code, _, errs := run(t, "", "replay", policyScenario(t, `ordinal.dev/policies: nope`))
	if code != ExitUsage || !strings.Contains(errs, `names the policy "nope"`) || !strings.Contains(errs, "--policy") {
		t.Errorf("unknown policy: exit %d, %s", code, errs)
	}
	code, _, errs = run(t, "", "replay", policyScenario(t, `ordinal.dev/policies: "handoff,handoff"`))
	if code != ExitUsage || !strings.Contains(errs, "twice") {
		t.Errorf("a policy named twice: exit %d, %s", code, errs)
	}
	bad := "../wasm/testdata/badpolicy.wasm"
	code, _, errs = run(t, "", "replay", policyScenario(t, ``), "--policy", bad, "--policy", bad)
	if code != ExitUsage || !strings.Contains(errs, `is the policy "bad" too`) {
		t.Errorf("two files of one policy: exit %d, %s", code, errs)
	}
	code, _, errs = run(t, "", "replay", policyScenario(t, ``), "--policy", "../../host/embedded/ordinal.wasm")
	if code != ExitModuleFailure || !strings.Contains(errs, "evaluate") {
		t.Errorf("a reconcile module as a policy: exit %d, %s", code, errs)
	}
}

// `ordinal test`: the shipped policies' test file passes; a test whose expectations are not met fails with
// exit 5, says what it expected and what was held, and is listed first.
func TestPolicyTestFiles(t *testing.T) {
	code, out, errs := run(t, "", "test", "../../testdata/policies/shipped.test.yaml")
	if code != ExitOK || !strings.Contains(out, "7 tests, 0 failed") {
		t.Fatalf("exit %d: %s\n%s", code, out, errs)
	}
	// a window the operator opens mid-replay ends complete, its hold's retry hours away keeping nothing waiting
	code, out, errs = run(t, "", "test", "../../testdata/policies/window-opened.test.yaml")
	if code != ExitOK || !strings.Contains(out, "1 tests, 0 failed") {
		t.Fatalf("window-opened.test.yaml: exit %d: %s\n%s", code, out, errs)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "t.yaml")
	scenario, _ := filepath.Abs("../../testdata/scenarios/policy-handoff.yaml")
	os.WriteFile(f, []byte(`tests:
  - name: passes
    scenario: `+scenario+`
    expect: {outcome: complete}
  - name: wrong pod and outcome
    scenario: `+scenario+`
    expect:
      outcome: stuck
      holds: [{policy: handoff, name: web-2}]
`), 0o644)
	code, out, _ = run(t, "", "test", f)
	if code != ExitTestFailed {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitTestFailed, out)
	}
	for _, want := range []string{"FAIL  wrong pod and outcome", "outcome complete, expected stuck",
		"expected a hold with policy=handoff name=web-2; held: delete Pod web-1 (handoff RoleNotHandedOff) x2, delete Pod web-0 (handoff RoleNotHandedOff) x3",
		"PASS  passes", "2 tests, 1 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "FAIL") > strings.Index(out, "PASS") {
		t.Errorf("failures are not listed first:\n%s", out)
	}
	code, out, _ = run(t, "", "test", f, "-o", "json")
	var results []testResult
	if err := json.Unmarshal([]byte(out), &results); err != nil || code != ExitTestFailed || len(results) != 2 || results[1].Passed || len(results[1].Holds) != 5 {
		t.Fatalf("-o json: exit %d, %v: %s", code, err, out)
	}
	os.WriteFile(f, []byte("tests:\n  - name: x\n    scenario: s.yaml\n    expct: {}\n"), 0o644)
	if code, _, errs := run(t, "", "test", f); code != ExitUsage || !strings.Contains(errs, "expct") {
		t.Errorf("a misspelled field: exit %d, %s", code, errs)
	}
}

// A preview from a scenario keeps what the scenario's world had beyond its snapshot: its
// PodDisruptionBudgets, so the pdb policy holds the second delete of each pair there as in the replay.
func TestPreviewFromAScenarioKeepsItsBudgets(t *testing.T) {
	b, err := os.ReadFile("../../testdata/scenarios/policy-pdb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var sc struct{ Manifests []map[string]any }
	if err := yaml.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	set := sc.Manifests[0]
	set["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "registry.k8s.io/nginx-slim:0.29"
	edited, _ := yaml.Marshal(set)
	f := filepath.Join(t.TempDir(), "edited.yaml")
	os.WriteFile(f, edited, 0o644)
	code, out, errs := run(t, "", "preview", "-f", f, "--scenario", "../../testdata/scenarios/policy-pdb.yaml")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"delete Pod web-3 -> held by policy pdb (DisruptionBudget): PodDisruptionBudget web",
		"pods taken down, in batches: [web-4] -> [web-3] -> [web-2] -> [web-1] -> [web-0]"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// `ordinal test` prints what a policy said (a hold's message, its error) through termsafe: a hostile policy's
// escapes (window title, clear screen, a right-to-left override) reach the terminal as visible text.
func TestTestResultsAreTerminalSafe(t *testing.T) {
	var b bytes.Buffer
	writeTestResults(&b, []testResult{{File: "t.yaml", Name: "hold", Failures: []string{"held: \x1b]0;pwned\x07\x1b[2J \u202eevil"}}}, 1)
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07\u202e") {
		t.Fatalf("raw control characters reached the output: %q", out)
	}
	if !strings.Contains(out, `\x1b]0;pwned\x07\x1b[2J \u202eevil`) {
		t.Errorf("the message is not shown escaped: %q", out)
	}
}

// A policy that traps at every call is told once, before the steps, with its reason (the end names its code);
// -o json has it typed; --fail-on policy-failed fails on it (exit 8), and by default nothing does.
func TestReplayTellsAFailingPolicy(t *testing.T) {
	f := policyScenario(t, `ordinal.dev/policies: bad, misbehave: trap`)
	bad := "../wasm/testdata/badpolicy.wasm"
	code, out, errs := run(t, "", "replay", f, "--policy", bad)
	line := "! policy bad failed (trap) "
	if code != ExitOK || strings.Count(out, line) != 1 || strings.Index(out, line) > strings.Index(out, "revisions:") || !strings.Contains(out, "\nwarnings above: PolicyFailed\n") {
		t.Fatalf("exit %d (%s): the failure not told once first, its code last:\n%s", code, errs, out)
	}
	code, out, _ = run(t, "", "replay", f, "--policy", bad, "-o", "json")
	var tl struct {
		PolicyFailures []struct {
			Policy, Reason string
			Count          int
		} `json:"policyFailures"`
	}
	if err := json.Unmarshal([]byte(out), &tl); err != nil || code != ExitOK || len(tl.PolicyFailures) != 1 ||
		tl.PolicyFailures[0].Policy != "bad" || tl.PolicyFailures[0].Reason != "trap" || tl.PolicyFailures[0].Count < 1 {
		t.Fatalf("-o json: exit %d, %v: %+v", code, err, tl.PolicyFailures)
	}
	code, _, errs = run(t, "", "replay", f, "--policy", bad, "--fail-on", "policy-failed")
	if code != ExitFailOn || !strings.Contains(errs, "--fail-on: PolicyFailed: policy bad failed (trap)") {
		t.Fatalf("--fail-on policy-failed: exit %d: %s", code, errs)
	}
}

// heldScenario is the shipped window scenario whose signal never comes back: the last delete waits on it.
func heldScenario(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../testdata/scenarios/policy-window.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, _, ok := strings.Cut(string(b), "  - after: 1m\n    signals: {db-healthy: true}")
	if !ok {
		t.Fatal("policy-window.yaml no longer gives the signal back after 1m")
	}
	f := filepath.Join(t.TempDir(), "held.yaml")
	if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// A rollout that ends waiting on a policy's hold is "held" — by which policy, since when, what it waits for —
// not stuck: it fails nothing by default, exits 9 under --fail-on held, and a test may expect it.
func TestReplayEndsHeld(t *testing.T) {
	f := heldScenario(t)
	code, out, errs := run(t, "", "replay", f)
	if code != ExitOK || !strings.Contains(out, "== held after ") ||
		!strings.Contains(out, "policy window holds delete Pod web-0 since +10m20s (OutsideWindow): outside the maintenance window") {
		t.Fatalf("exit %d (%s):\n%s", code, errs, out)
	}
	code, _, errs = run(t, "", "replay", f, "--fail-on", "held")
	if code != ExitHeld || !strings.Contains(errs, "held by a policy: policy window holds") {
		t.Fatalf("--fail-on held: exit %d, want %d: %s", code, ExitHeld, errs)
	}
	test := filepath.Join(t.TempDir(), "t.yaml")
	os.WriteFile(test, []byte("tests:\n  - name: waits\n    scenario: "+f+"\n    expect: {outcome: held, holds: [{policy: window, reason: SignalNotTrue}]}\n"), 0o644)
	if code, out, _ := run(t, "", "test", test); code != ExitOK || !strings.Contains(out, "PASS  waits") {
		t.Fatalf("ordinal test, outcome: held: exit %d:\n%s", code, out)
	}
	for _, cmd := range []string{"replay", "preview", "test"} {
		if codes, block := helpExitCodes(t, cmd); slices.Contains(codes, ExitHeld) != (cmd != "test") {
			t.Errorf("ordinal %s --help: exit 9 listed %v, want %v:\n%s", cmd, slices.Contains(codes, ExitHeld), cmd != "test", block)
		}
	}
}
