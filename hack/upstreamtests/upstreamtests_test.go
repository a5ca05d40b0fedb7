package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The reports in testdata/runs have ginkgo's shape as upstream's e2e.test writes it: "[It] " names, a
// failure element without a message attribute, specs of other SIGs skipped; each run in two passes, the
// [Serial] spec run in the second alone.
func TestImportAndTable(t *testing.T) {
	docs := t.TempDir()
	if err := importRuns("testdata/runs", docs); err != nil {
		t.Fatal(err)
	}
	kept, err := readJUnit(filepath.Join(docs, "e2e.ordinal.xml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := kept.cases(e2eFilter)
	if len(cases) != 5 {
		t.Fatalf("kept %d StatefulSet cases, want 5 (the Deployment spec dropped): %v", len(cases), sortedNames(cases))
	}
	serial := e2eFilter + " Automatically recreate PVC for pending pod when PVC is missing PVC should be recreated when pod is pending due to missing PVC [Disruptive] [Serial]"
	scale := e2eFilter + " Basic StatefulSet functionality [StatefulSetBasic] should have a working scale subresource [Conformance]"
	if cases[serial].result() != passed || cases[scale].result() != passed {
		t.Errorf("merged passes: the serial spec %s, the scale spec %s; want each as the pass that ran it (passed)",
			cases[serial].result(), cases[scale].result())
	}
	status := e2eFilter + " Basic StatefulSet functionality [StatefulSetBasic] should validate Statefulset Status endpoints [Conformance]"
	if c := cases[status]; c.result() != failed || c.why() != "timed out waiting for the condition" {
		t.Errorf("Status endpoints: %s %q, want failed with the failure's first line", c.result(), c.why())
	}

	if got := summarize(cases); !strings.HasPrefix(got, e2eFilter+" specs: 5, run 4, passed 3, failed 1, skipped 1; [Conformance]: 2, run 2, passed 1\n") ||
		!strings.Contains(got, "FAILED Basic StatefulSet functionality should validate Statefulset Status endpoints") {
		t.Errorf("summary:\n%s", got)
	}

	skips := []skip{mustReason(t, "should provide basic identity :: kubectl exec into the pods")}
	out := renderE2E(map[string]map[string]junitCase{ordinal: cases, kcm: mustCases(t, filepath.Join(docs, "e2e.kube-controller-manager.xml"))},
		map[string]runInfo{ordinal: {Date: "d1", Commit: "c1", Command: "make e2e-upstream", Procs: 1}, kcm: {Date: "d2"}}, skips, nil)
	for _, want := range []string{
		"| It blocks run (of 5) | 4 | 4 |",
		"| `[Conformance]` passed (of 2) | 1 | 2 |",
		"Passing under kube-controller-manager, not under Ordinal: Basic StatefulSet functionality should validate Statefulset Status endpoints.",
		"| Basic StatefulSet functionality should provide basic identity |  | skipped | skipped | skipped: kubectl exec into the pods |",
		"| Basic StatefulSet functionality should validate Statefulset Status endpoints | yes | passed (40 s) | failed | timed out waiting for the condition |",
		"d1 at `c1`, `make e2e-upstream`",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	known := []skip{mustReason(t, "Status endpoints :: the cluster's doing")}
	if out := renderE2E(map[string]map[string]junitCase{ordinal: cases, kcm: cases}, nil, nil, known); !strings.Contains(out, "| failed | failed | the cluster's doing |") ||
		!strings.Contains(out, "Every spec that passes under kube-controller-manager passes under Ordinal.") {
		t.Errorf("with a known cause and equal runs:\n%s", out)
	}
}

func TestImportRefusesWhatIsNotARun(t *testing.T) {
	if err := importRuns(t.TempDir(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "no run in") {
		t.Errorf("empty runs dir: %v", err)
	}
	runs := t.TempDir()
	for _, pass := range passes {
		if err := os.MkdirAll(filepath.Join(runs, ordinal, pass), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(runs, ordinal, pass, "junit_01.xml"), []byte("<testsuites/>"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := importRuns(runs, t.TempDir()); err == nil || !strings.Contains(err.Error(), "no [sig-apps] StatefulSet spec in its reports") {
		t.Errorf("a report without StatefulSet specs: %v", err)
	}
}

func TestReadReasons(t *testing.T) {
	for _, tc := range []struct{ text, err string }{
		{"# comment\n\nbasic identity :: exec\n", ""},
		{"basic identity\n", "want REGEXP :: reason"},
		{"basic( :: why\n", "missing closing )"},
		{"x :: \n", "want REGEXP :: reason"},
	} {
		p := filepath.Join(t.TempDir(), "r.txt")
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readReasons(p)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.err)
		}
	}
}

// The committed skip list and known causes parse, and every skip names a spec of the committed runs: a
// pattern that matches nothing would hide nothing but say something false.
func TestCommittedReasons(t *testing.T) {
	for _, f := range []string{"skips.txt", "known-failures.txt"} {
		if _, err := readReasons(f); err != nil {
			t.Error(err)
		}
	}
}

// docs/upstream-tests.md's tables are what the kept runs make of them: nobody edits them by hand.
func TestCommittedTablesAreGenerated(t *testing.T) {
	reasonsDir = "."
	defer func() { reasonsDir = "hack/upstreamtests" }()
	want, err := tables("../../docs/upstream-tests")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/upstream-tests.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), beginMarker)
	got, _, ok2 := strings.Cut(rest, endMarker)
	if !ok || !ok2 {
		t.Fatal("docs/upstream-tests.md has no generated part")
	}
	if got != want {
		t.Errorf("docs/upstream-tests.md is not what the kept runs make (make e2e-upstream-table):\n--- got\n%s\n--- want\n%s", got, want)
	}
	skips, _ := readReasons("skips.txt")
	cases := mustCases(t, "../../docs/upstream-tests/e2e.ordinal.xml")
	for _, s := range skips {
		n := 0
		for name, c := range cases {
			if s.re.MatchString(name) {
				n++
				if c.result() != skipped {
					t.Errorf("skip %q: %s was %s in the kept run", s.re, shortName(name), c.result())
				}
			}
		}
		if n == 0 {
			t.Errorf("skip %q matches no spec of the kept run", s.re)
		}
	}
}

func mustReason(t *testing.T, line string) skip {
	p := filepath.Join(t.TempDir(), "r.txt")
	if err := os.WriteFile(p, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := readReasons(p)
	if err != nil || len(r) != 1 {
		t.Fatal(r, err)
	}
	return r[0]
}

func mustCases(t *testing.T, path string) map[string]junitCase {
	s, err := readJUnit(path)
	if err != nil {
		t.Fatal(err)
	}
	return s.cases(e2eFilter)
}
