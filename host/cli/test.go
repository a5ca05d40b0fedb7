package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/internal/fieldcheck"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
	"github.com/ordinal-dev/ordinal/internal/yamljson"
)

// testFile is an `ordinal test` file (docs/policy-modules.md): tests of what a set's policies hold, each a replay.
type testFile struct {
	Tests []policyTest `json:"tests"`
}

type policyTest struct {
	Name string `json:"name"`
	// Scenario is the replay (a scenario, or a snapshot whose world is replayed as it is), relative to the
	// test file. Edit, when set, is a StatefulSet manifest applied once the world settled (a preview).
	Scenario string `json:"scenario"`
	Edit     string `json:"edit,omitempty"`
	// Policies are policy modules (.wasm, relative to the test file) the set may name beside the shipped
	// ones and --policy's.
	Policies []string   `json:"policies,omitempty"`
	Expect   testExpect `json:"expect"`
}

type testExpect struct {
	// Outcome is the replay's outcome: complete, partitioned, waiting, held, stuck or limit ("": any).
	Outcome string `json:"outcome,omitempty"`
	// Holds must each happen at least once; fields left out match anything.
	Holds []expectedHold `json:"holds,omitempty"`
	// Allows must each be issued unheld at least once: a write of the replay that matches (verb, kind,
	// name; fields left out match anything), that no policy held and that the API server carried out.
	Allows []expectedWrite `json:"allows,omitempty"`
	// NoHolds: no write is held at all.
	NoHolds bool `json:"noHolds,omitempty"`
	// PolicyFailures: a policy may fail (PolicyFailed events) without failing the test.
	PolicyFailures bool `json:"policyFailures,omitempty"`
}

type expectedHold struct {
	Policy string `json:"policy,omitempty"`
	Verb   string `json:"verb,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Name   string `json:"name,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func (h expectedHold) String() string {
	return "a hold with " + fieldsSet([][2]string{{"policy", h.Policy}, {"verb", h.Verb}, {"kind", h.Kind}, {"name", h.Name}, {"reason", h.Reason}})
}

// expectedWrite is an entry of allows: a write issued unheld.
type expectedWrite struct {
	Verb string `json:"verb,omitempty"`
	Kind string `json:"kind,omitempty"`
	Name string `json:"name,omitempty"`
}

func (w expectedWrite) String() string {
	return "an unheld write with " + fieldsSet([][2]string{{"verb", w.Verb}, {"kind", w.Kind}, {"name", w.Name}})
}

// matches: each field given is the write's.
func (w expectedWrite) matches(verb, kind, name string) bool {
	return (w.Verb == "" || w.Verb == verb) && (w.Kind == "" || w.Kind == kind) && (w.Name == "" || w.Name == name)
}

// fieldsSet is "k=v k=v" of the fields given ("any fields" when none is).
func fieldsSet(fields [][2]string) string {
	var parts []string
	for _, f := range fields {
		if f[1] != "" {
			parts = append(parts, f[0]+"="+f[1])
		}
	}
	if len(parts) == 0 {
		return "any fields"
	}
	return strings.Join(parts, " ")
}

// testResult is one test's result (-o json).
type testResult struct {
	File     string       `json:"file"`
	Name     string       `json:"name"`
	Passed   bool         `json:"passed"`
	Failures []string     `json:"failures,omitempty"`
	Outcome  string       `json:"outcome,omitempty"`
	Holds    []heldInTest `json:"holds,omitempty"`
}

type heldInTest struct {
	Step   int    `json:"step"`
	Verb   string `json:"verb"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Policy string `json:"policy"`
	Reason string `json:"reason"`
}

func newTestCommand(opts *moduleOptions) *cobra.Command {
	var out outputFlag
	var validate validateFlag
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "test FILE...",
		Short: "Run declarative tests of what a set's policies hold (like kyverno test)",
		Long: `test runs the tests of each FILE (YAML): each replays a scenario (or a snapshot's world, with an edit
applied once it settles) with the policies its set names (ordinal.dev/policies) and checks what it expects:
the outcome (complete, partitioned, waiting, held — nothing but a policy's hold keeps the rollout from going
on —, stuck or limit), the writes held (holds: by policy, verb, kind, name, reason; each at least once), the
writes issued unheld (allows: by verb, kind, name; each at least once), or that none is held (noHolds). A
policy that fails fails the test unless it expects policyFailures. Paths are relative to the test file. The
test file format: docs/policy-modules.md, "The test file".

  tests:
    - name: the primary's delete waits for the handoff
      scenario: ../testdata/scenarios/policy-handoff.yaml
      policies: [./build/my-policy.wasm]        # beside the shipped ones and --policy
      expect:
        outcome: complete
        holds: [{policy: handoff, verb: delete, name: web-1, reason: RoleNotHandedOff}]
        allows: [{verb: delete, kind: Pod, name: web-1}]

Every file and test is read and checked (scenarios, edits, policy files) before any test runs; a problem
in any is reported, with all the others, and nothing runs. A test whose replay fails (an edit the API
server refuses, a policy that cannot be loaded) or runs past --test-timeout (a safety stop for a replay
that would not end) fails, and the others run. -o json|yaml gives each test's passed, failures, outcome
and holds.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := out.resolve(cmd)
			if err != nil {
				return err
			}
			v, err := validate.resolve(cmd)
			if err != nil {
				return err
			}
			if timeout <= 0 {
				return withCode(ExitUsage, fmt.Errorf("--test-timeout %s: the limit for one test must be positive", timeout))
			}
			mods := opts.commandModules() // the module, loaded once for every test
			defer mods.close()
			tests, err := prepareTests(cmd.Context(), mods, args, v)
			if err != nil {
				return err
			}
			var results []testResult
			for _, pt := range tests {
				if err := cmd.Context().Err(); err != nil {
					return err
				}
				results = append(results, runTest(cmd.Context(), mods, pt, timeout))
			}
			mods.close()
			failed := 0
			for _, r := range results {
				if !r.Passed {
					failed++
				}
			}
			w := cmd.OutOrStdout()
			switch format {
			case "json", "yaml":
				if err := writeJSONAs(w, format, func(w io.Writer) error {
					enc := json.NewEncoder(w)
					enc.SetIndent("", "  ")
					return enc.Encode(results)
				}); err != nil {
					return err
				}
			default:
				writeTestResults(w, results, failed)
			}
			if failed > 0 {
				return withCode(ExitTestFailed, fmt.Errorf("%d of %d tests failed", failed, len(results)))
			}
			return nil
		},
	}
	addOutputFlag(cmd, &out, "text, json or yaml")
	validate.bind(cmd)
	cmd.Flags().DurationVar(&timeout, "test-timeout", 5*time.Minute, "wall-clock limit of one test's replay (positive)")
	return cmd
}

// writeTestResults prints the results for people. A failure quotes what a policy said (its hold's message,
// its error), which a hostile policy can fill with terminal escapes: the text goes through termsafe, as
// replay's does.
func writeTestResults(w io.Writer, results []testResult, failed int) {
	var b strings.Builder
	// What fails a CI job first.
	for _, r := range results {
		if !r.Passed {
			fmt.Fprintf(&b, "FAIL  %s (%s)\n", r.Name, r.File)
			for _, f := range r.Failures {
				fmt.Fprintf(&b, "        %s\n", f)
			}
		}
	}
	for _, r := range results {
		if r.Passed {
			fmt.Fprintf(&b, "PASS  %s (%s: %s, %d holds)\n", r.Name, r.File, r.Outcome, len(r.Holds))
		}
	}
	fmt.Fprintf(&b, "%d tests, %d failed\n", len(results), failed)
	_, _ = io.WriteString(w, termsafe.String(b.String()))
}

// readTestFile is the one reading of an `ordinal test` file: an unknown field is an error, with the field
// meant (a misspelt expectation would otherwise expect nothing).
func readTestFile(file string) (testFile, error) {
	var tf testFile
	b, err := yamljson.ReadFile(file, replay.MaxScenarioBytes, "test file "+file, "")
	if err != nil {
		return tf, withCode(ExitUsage, err)
	}
	var unknown []fieldcheck.Unknown
	j, err := yamljson.ToJSON(b, replay.MaxScenarioBytes)
	if err == nil {
		unknown, err = fieldcheck.Check(j, &tf)
	}
	if err != nil {
		return tf, withCode(ExitUsage, fmt.Errorf("%s: %w", file, err))
	}
	if len(unknown) > 0 {
		return tf, ownFormat(file, unknown)
	}
	if len(tf.Tests) == 0 {
		return tf, withCode(ExitUsage, fmt.Errorf("%s: no tests", file))
	}
	return tf, nil
}

// preparedTest is a test read and checked, ready to run: its scenario loaded (with the edit as its last
// event) and its policy files found.
type preparedTest struct {
	file     string
	test     policyTest
	sc       *replay.Scenario
	policies []string
}

// prepareTests reads and checks every test of files before any runs: the problems of all of them are one
// error, and no test runs (a malformed scenario in the last file once surfaced after the others had run).
// Then the module is loaded once, so that a module that cannot be loaded is one problem, not every test's.
func prepareTests(ctx context.Context, mods *commandModules, files []string, v fieldValidation) ([]preparedTest, error) {
	var tests []preparedTest
	var problems []error
	for _, file := range files {
		ts, errs := prepareFile(ctx, mods, file, v)
		tests, problems = append(tests, ts...), append(problems, errs...)
	}
	if len(problems) > 0 {
		return nil, testProblems(problems)
	}
	if _, _, err := mods.reconciler(ctx); err != nil {
		return nil, err
	}
	return tests, nil
}

// testProblems is the one error of the problems found in the test files: all of them, one a line, with
// their exit code when they share one, else exit 1.
func testProblems(problems []error) error {
	if len(problems) == 1 {
		return problems[0]
	}
	code := codeOf(problems[0])
	lines := []string{fmt.Sprintf("%d problems in the tests; no test was run:", len(problems))}
	for _, p := range problems {
		if codeOf(p) != code {
			code = ExitUsage
		}
		lines = append(lines, "  "+p.Error())
	}
	return withCode(code, errors.New(strings.Join(lines, "\n")))
}

// codeOf is the exit code err carries (ExitUsage when none).
func codeOf(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitUsage
}

// prepareFile reads file and checks each of its tests, going on past a test with a problem.
func prepareFile(ctx context.Context, mods *commandModules, file string, v fieldValidation) ([]preparedTest, []error) {
	tf, err := readTestFile(file)
	if err != nil {
		return nil, []error{err}
	}
	var out []preparedTest
	var problems []error
	for i, t := range tf.Tests {
		if t.Name == "" {
			t.Name = fmt.Sprintf("tests[%d]", i)
		}
		pt, err := prepareTest(ctx, mods, file, t, v)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		out = append(out, pt)
	}
	return out, problems
}

// prepareTest loads a test's scenario, reads its edit and finds its policy files; the Kubernetes objects
// of the scenario and the edit are v's to judge.
func prepareTest(ctx context.Context, mods *commandModules, file string, t policyTest, v fieldValidation) (preparedTest, error) {
	pt := preparedTest{file: file, test: t}
	fail := func(code int, err error) (preparedTest, error) {
		return pt, withCode(code, fmt.Errorf("%s: %s: %w", file, t.Name, err))
	}
	if t.Scenario == "" {
		return fail(ExitUsage, errors.New("a test names its scenario"))
	}
	rel := relativeTo(file)
	sc, err := loadReplayInput(ctx, mods, nil, rel(t.Scenario), setChoice{}, v)
	if err != nil {
		return fail(codeOf(err), err)
	}
	if t.Edit != "" {
		edited, err := yamljson.ReadFile(rel(t.Edit), replay.MaxScenarioBytes, "edit "+t.Edit, "")
		if err != nil {
			return fail(ExitUsage, err)
		}
		j, err := yamljson.ToJSON(edited, replay.MaxScenarioBytes)
		if err != nil {
			return fail(ExitUsage, fmt.Errorf("edit %s: %w", t.Edit, err))
		}
		if j, err = v.manifest(j, rel(t.Edit), "StatefulSet"); err != nil {
			return fail(codeOf(err), err)
		}
		sc.Events = append(sc.Events, replay.Event{Settled: true, Apply: j})
	}
	pt.sc, pt.policies = sc, mapPaths(t.Policies, rel)
	for i, p := range pt.policies {
		if st, err := os.Stat(p); err != nil {
			return fail(ExitUsage, fmt.Errorf("policies[%d]: %w", i, err))
		} else if !st.Mode().IsRegular() {
			return fail(ExitUsage, fmt.Errorf("policies[%d]: %s is not a file", i, p))
		}
	}
	return pt, nil
}

// relativeTo resolves the paths of a test file: relative ones against its directory.
func relativeTo(file string) func(string) string {
	dir := filepath.Dir(file)
	return func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
}

// runTest replays a prepared test and judges it. A replay that fails, or runs past timeout (wall-clock, a
// safety stop for a replay that would not end, never a measure of speed), fails the test alone.
func runTest(ctx context.Context, mods *commandModules, pt preparedTest, timeout time.Duration) testResult {
	tctx, cancel := context.WithTimeoutCause(ctx, timeout, errTestTimeout)
	defer cancel()
	tm := mods.withPolicyFiles(pt.policies) // the test's own policies beside the command's
	defer tm.close()
	tl, err := runReplay(tctx, tm, pt.sc, &rolloutFlags{}, &progress{}) // no progress line: the tests print their own
	if err != nil {
		why := "the replay failed: " + err.Error()
		if errors.Is(context.Cause(tctx), errTestTimeout) {
			why = fmt.Sprintf("stopped after %s (--test-timeout): the replay had not ended", timeout)
		}
		return testResult{File: pt.file, Name: pt.test.Name, Failures: []string{why}}
	}
	return judgeTest(pt.file, pt.test, tl)
}

var errTestTimeout = errors.New("--test-timeout")

func mapPaths(ps []string, f func(string) string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = f(p)
	}
	return out
}

// judgeTest checks a test's expectations against its replay.
func judgeTest(file string, t policyTest, tl *replay.Timeline) testResult {
	r := testResult{File: file, Name: t.Name, Outcome: tl.Outcome.Result}
	var failures []string
	for _, st := range tl.Steps {
		for _, a := range st.Actions {
			if a.Held != nil {
				r.Holds = append(r.Holds, heldInTest{Step: st.Index, Verb: a.Verb, Kind: a.Kind, Name: a.Name, Policy: a.Held.Policy, Reason: a.Held.Reason})
			}
		}
	}
	if !t.Expect.PolicyFailures {
		for _, f := range tl.PolicyFailures {
			failures = append(failures, fmt.Sprintf("step %d: %s", f.FirstStep, replay.PolicyFailureText(f)))
		}
	}
	if e := t.Expect.Outcome; e != "" && e != tl.Outcome.Result {
		failures = append(failures, fmt.Sprintf("outcome %s, expected %s: %s", tl.Outcome.Result, e, tl.Outcome.Summary))
	}
	for _, want := range t.Expect.Holds {
		if !anyHold(r.Holds, want) {
			failures = append(failures, "expected "+want.String()+"; "+holdsSeen(r.Holds))
		}
	}
	for _, want := range t.Expect.Allows {
		if !anyIssued(tl, want) {
			failures = append(failures, "expected "+want.String()+"; "+writesLike(tl, want))
		}
	}
	if t.Expect.NoHolds && len(r.Holds) > 0 {
		failures = append(failures, "expected no hold; "+holdsSeen(r.Holds))
	}
	r.Failures, r.Passed = failures, len(failures) == 0
	return r
}

func anyHold(holds []heldInTest, want expectedHold) bool {
	for _, h := range holds {
		if (want.Policy == "" || want.Policy == h.Policy) && (want.Verb == "" || want.Verb == h.Verb) &&
			(want.Kind == "" || want.Kind == h.Kind) && (want.Name == "" || want.Name == h.Name) &&
			(want.Reason == "" || want.Reason == h.Reason) {
			return true
		}
	}
	return false
}

// anyIssued: the replay issued a write like want that no policy held and the API server carried out.
func anyIssued(tl *replay.Timeline, want expectedWrite) bool {
	for _, st := range tl.Steps {
		for _, a := range st.Actions {
			if a.Held == nil && a.Error == "" && want.matches(a.Verb, a.Kind, a.Name) {
				return true
			}
		}
	}
	return false
}

// writesLike folds the writes of the replay of want's verb and kind (any name) into one line: each distinct
// write once, with how many times it was issued, held or refused.
func writesLike(tl *replay.Timeline, want expectedWrite) string {
	var order []string
	count := map[string]int{}
	for _, st := range tl.Steps {
		for _, a := range st.Actions {
			if !(expectedWrite{Verb: want.Verb, Kind: want.Kind}).matches(a.Verb, a.Kind, a.Name) {
				continue
			}
			k := fmt.Sprintf("%s %s %s (issued)", a.Verb, a.Kind, a.Name)
			switch {
			case a.Held != nil:
				k = fmt.Sprintf("%s %s %s (held: %s %s)", a.Verb, a.Kind, a.Name, a.Held.Policy, a.Held.Reason)
			case a.Error != "":
				k = fmt.Sprintf("%s %s %s (refused)", a.Verb, a.Kind, a.Name)
			}
			if count[k] == 0 {
				order = append(order, k)
			}
			count[k]++
		}
	}
	if len(order) == 0 {
		return "no such write was planned"
	}
	return "writes: " + foldCounts(order, count)
}

// foldCounts is "k x2, j x1" of keys in order.
func foldCounts(order []string, count map[string]int) string {
	var b bytes.Buffer
	for i, k := range order {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s x%d", k, count[k])
	}
	return b.String()
}

// holdsSeen folds the holds of a replay into one line: each distinct hold once, with how many syncs held it.
func holdsSeen(holds []heldInTest) string {
	if len(holds) == 0 {
		return "no write was held"
	}
	var order []string
	count := map[string]int{}
	for _, h := range holds {
		k := fmt.Sprintf("%s %s %s (%s %s)", h.Verb, h.Kind, h.Name, h.Policy, h.Reason)
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	return "held: " + foldCounts(order, count)
}
