package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

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
	var parts []string
	for _, p := range []struct{ k, v string }{{"policy", h.Policy}, {"verb", h.Verb}, {"kind", h.Kind}, {"name", h.Name}, {"reason", h.Reason}} {
		if p.v != "" {
			parts = append(parts, p.k+"="+p.v)
		}
	}
	return "a hold with " + strings.Join(parts, " ")
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
	cmd := &cobra.Command{
		Use:   "test FILE...",
		Short: "Run declarative tests of what a set's policies hold (like kyverno test)",
		Long: `test runs the tests of each FILE (YAML): each replays a scenario (or a snapshot's world, with an edit
applied once it settles) with the policies its set names (ordinal.dev/policies) and checks what it expects:
the outcome (complete, partitioned, waiting, held — nothing but a policy's hold keeps the rollout from going
on —, stuck or limit), the writes held (by policy, verb, kind, name, reason; each at least once), or that
none is.
A policy that fails fails the test unless it expects policyFailures. Paths are relative to the test file.

  tests:
    - name: the primary's delete waits for the handoff
      scenario: ../testdata/scenarios/policy-handoff.yaml
      policies: [./build/my-policy.wasm]        # beside the shipped ones and --policy
      expect:
        outcome: complete
        holds: [{policy: handoff, verb: delete, name: web-1, reason: RoleNotHandedOff}]

Exit codes:
  0  every test passed
  1  usage error, or a test file or its inputs cannot be read
  4  a module or policy could not be loaded
  5  a test failed`,
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
			var results []testResult
			for _, file := range args {
				rs, err := runTestFile(cmd, opts, file, v)
				if err != nil {
					return err
				}
				results = append(results, rs...)
			}
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
	addOutputFlag(cmd, &out, "text, json or yaml (each test: passed, failures, outcome, holds)")
	validate.bind(cmd)
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

// runTestFile runs the tests of file; the Kubernetes objects of their scenarios and edits are v's to judge.
func runTestFile(cmd *cobra.Command, opts *moduleOptions, file string, v fieldValidation) ([]testResult, error) {
	tf, err := readTestFile(file)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(file)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	var out []testResult
	for i, t := range tf.Tests {
		if t.Name == "" {
			t.Name = fmt.Sprintf("tests[%d]", i)
		}
		if t.Scenario == "" {
			return nil, withCode(ExitUsage, fmt.Errorf("%s: %s: a test names its scenario", file, t.Name))
		}
		sc, err := loadReplayInput(cmd.Context(), opts, nil, rel(t.Scenario), setChoice{}, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", file, t.Name, err)
		}
		if t.Edit != "" {
			edited, err := yamljson.ReadFile(rel(t.Edit), replay.MaxScenarioBytes, "edit "+t.Edit, "")
			if err != nil {
				return nil, withCode(ExitUsage, fmt.Errorf("%s: %s: %w", file, t.Name, err))
			}
			j, err := yamljson.ToJSON(edited, replay.MaxScenarioBytes)
			if err != nil {
				return nil, withCode(ExitUsage, fmt.Errorf("%s: %s: edit %s: %w", file, t.Name, t.Edit, err))
			}
			if j, err = v.manifest(j, rel(t.Edit), "StatefulSet"); err != nil {
				return nil, err
			}
			sc.Events = append(sc.Events, replay.Event{Settled: true, Apply: j})
		}
		o := *opts
		o.policyFiles = append(append([]string(nil), opts.policyFiles...), mapPaths(t.Policies, rel)...)
		tl, err := runReplay(cmd.Context(), &o, sc, &rolloutFlags{}, io.Discard)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", file, t.Name, err)
		}
		out = append(out, judgeTest(file, t, tl))
	}
	return out, nil
}

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
	var b bytes.Buffer
	b.WriteString("held: ")
	for i, k := range order {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s x%d", k, count[k])
	}
	return b.String()
}
