package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The e2e suite's StatefulSet specs: every spec of test/e2e/apps/statefulset.go has this in its full text.
const e2eFilter = "[sig-apps] StatefulSet"

// The two controllers a run is made with; kube-controller-manager's is the calibration.
const (
	ordinal = "ordinal"
	kcm     = "kube-controller-manager"
)

// runInfo is what scripts/e2e-upstream.sh records of a run beside its report (run.json).
type runInfo struct {
	Controller string `json:"controller"`
	Commit     string `json:"commit"`
	Date       string `json:"date"`
	Seconds    int    `json:"seconds"`
	Procs      int    `json:"procs"`
	Load       string `json:"load"`
	Command    string `json:"command"`
}

// The passes of a run (scripts/e2e-upstream.sh), each with its report in its own directory.
var passes = []string{"parallel", "serial"}

// importRuns keeps each controller's run of runsDir (CONTROLLER/PASS/junit_01.xml and CONTROLLER/run.json)
// in docsDir as e2e.CONTROLLER.xml (the passes merged, trimmed to the StatefulSet specs) and
// e2e.CONTROLLER.json.
func importRuns(runsDir, docsDir string) error {
	n := 0
	for _, ctrl := range []string{ordinal, kcm} {
		if _, err := os.Stat(filepath.Join(runsDir, ctrl)); os.IsNotExist(err) {
			continue
		}
		var reports []string
		for _, pass := range passes {
			reports = append(reports, filepath.Join(runsDir, ctrl, pass, "junit_01.xml"))
		}
		s, err := readJUnits(reports...)
		if err != nil {
			return err
		}
		if len(s.cases(e2eFilter)) == 0 {
			return fmt.Errorf("%s: no %s spec in its reports", filepath.Join(runsDir, ctrl), e2eFilter)
		}
		info, err := os.ReadFile(filepath.Join(runsDir, ctrl, "run.json"))
		if err != nil {
			return err
		}
		var ri runInfo
		if err := json.Unmarshal(info, &ri); err != nil || ri.Controller != ctrl {
			return fmt.Errorf("%s/run.json: not the run of %s (%v)", filepath.Join(runsDir, ctrl), ctrl, err)
		}
		if err := os.MkdirAll(docsDir, 0o755); err != nil {
			return err
		}
		if err := s.trimmed(e2eFilter).write(filepath.Join(docsDir, "e2e."+ctrl+".xml")); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(docsDir, "e2e."+ctrl+".json"), info, 0o644); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no run in %s (want %s/ or %s/: make e2e-upstream)", runsDir, ordinal, kcm)
	}
	return nil
}

// skip is one line of skips.txt: the specs it matches and why they are not run.
type skip struct {
	re  *regexp.Regexp
	why string
}

// readReasons reads a file of "REGEXP :: reason" lines (# comments): the skip list, or the known causes
// of failures that are not the controller's.
func readReasons(path string) ([]skip, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []skip
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		pat, why, ok := strings.Cut(t, " :: ")
		if !ok || strings.TrimSpace(why) == "" {
			return nil, fmt.Errorf("%s:%d: want REGEXP :: reason", path, line)
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, skip{re, strings.TrimSpace(why)})
	}
	return out, sc.Err()
}

func reasonFor(reasons []skip, name string) string {
	for _, r := range reasons {
		if r.re.MatchString(name) {
			return r.why
		}
	}
	return ""
}

// summarize counts one report's specs: run, passed, failed, skipped, and of them the Conformance ones.
func summarize(cases map[string]junitCase) string {
	var b strings.Builder
	c := count(cases)
	fmt.Fprintf(&b, "%s specs: %d, run %d, passed %d, failed %d, skipped %d; [Conformance]: %d, run %d, passed %d\n",
		e2eFilter, c.all, c.run, c.passed, c.failed, c.all-c.run, c.conf, c.confRun, c.confPassed)
	for _, n := range sortedNames(cases) {
		if cases[n].result() == failed {
			fmt.Fprintf(&b, "  FAILED %s\n         %s\n", shortName(n), cases[n].why())
		}
	}
	return b.String()
}

type counts struct{ all, run, passed, failed, conf, confRun, confPassed int }

func count(cases map[string]junitCase) counts {
	var c counts
	for n, tc := range cases {
		r, conf := tc.result(), strings.Contains(n, "[Conformance]")
		c.all++
		if conf {
			c.conf++
		}
		if r == skipped {
			continue
		}
		c.run++
		if conf {
			c.confRun++
		}
		switch r {
		case passed:
			c.passed++
			if conf {
				c.confPassed++
			}
		case failed:
			c.failed++
		}
	}
	return c
}

func sortedNames(cases map[string]junitCase) []string {
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

var labelsRE = regexp.MustCompile(`\s*\[(Conformance|Slow|Serial|Disruptive|StatefulSetBasic|Feature:[^\]]*|FeatureGate:[^\]]*|Alpha|Beta|Feature:OffByDefault)\]`)

// shortName is a spec's text without the suite's prefix and its bracketed labels.
func shortName(n string) string {
	n = strings.TrimPrefix(n, e2eFilter+" ")
	return strings.TrimSpace(labelsRE.ReplaceAllString(n, ""))
}

// tables renders docs/upstream-tests.md's generated part from the runs kept in docsDir (import) and the
// reasons beside this command (skips.txt, known-failures.txt), read from docsDir's sibling hack dir.
func tables(docsDir string) (string, error) {
	runs := map[string]map[string]junitCase{}
	infos := map[string]runInfo{}
	for _, ctrl := range []string{ordinal, kcm} {
		s, err := readJUnit(filepath.Join(docsDir, "e2e."+ctrl+".xml"))
		if err != nil {
			return "", err
		}
		runs[ctrl] = s.cases(e2eFilter)
		b, err := os.ReadFile(filepath.Join(docsDir, "e2e."+ctrl+".json"))
		if err != nil {
			return "", err
		}
		var ri runInfo
		if err := json.Unmarshal(b, &ri); err != nil {
			return "", fmt.Errorf("e2e.%s.json: %w", ctrl, err)
		}
		infos[ctrl] = ri
	}
	skips, err := readReasons(filepath.Join(reasonsDir, "skips.txt"))
	if err != nil {
		return "", err
	}
	known, err := readReasons(filepath.Join(reasonsDir, "known-failures.txt"))
	if err != nil {
		return "", err
	}
	return renderE2E(runs, infos, skips, known), nil
}

// reasonsDir holds skips.txt and known-failures.txt; relative to the repository root, where make runs.
var reasonsDir = "hack/upstreamtests"

func renderE2E(runs map[string]map[string]junitCase, infos map[string]runInfo, skips, known []skip) string {
	var b strings.Builder
	o, k := count(runs[ordinal]), count(runs[kcm])
	fmt.Fprintf(&b, "| figure | Ordinal | kube-controller-manager |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| It blocks run (of %d) | %d | %d |\n", o.all, o.run, k.run)
	fmt.Fprintf(&b, "| passed | %d | %d |\n", o.passed, k.passed)
	fmt.Fprintf(&b, "| failed | %d | %d |\n", o.failed, k.failed)
	fmt.Fprintf(&b, "| `[Conformance]` passed (of %d) | %d | %d |\n", o.conf, o.confPassed, k.confPassed)
	fmt.Fprintf(&b, "| ran | %s | %s |\n", runLine(infos[ordinal]), runLine(infos[kcm]))

	var regressions []string
	for n, c := range runs[kcm] {
		if c.result() == passed && runs[ordinal][n].result() != passed {
			regressions = append(regressions, shortName(n))
		}
	}
	sort.Strings(regressions)
	if len(regressions) == 0 {
		b.WriteString("\nEvery spec that passes under kube-controller-manager passes under Ordinal.\n")
	} else {
		fmt.Fprintf(&b, "\nPassing under kube-controller-manager, not under Ordinal: %s.\n", strings.Join(regressions, "; "))
	}

	b.WriteString("\n| # | spec | Conformance | kube-controller-manager | Ordinal | why not passed |\n|---|---|---|---|---|---|\n")
	names := map[string]bool{}
	for _, ctrl := range []string{ordinal, kcm} {
		for n := range runs[ctrl] {
			names[n] = true
		}
	}
	all := make([]string, 0, len(names))
	for n := range names {
		all = append(all, n)
	}
	sort.Slice(all, func(i, j int) bool { return shortName(all[i]) < shortName(all[j]) })
	for i, n := range all {
		conf := ""
		if strings.Contains(n, "[Conformance]") {
			conf = "yes"
		}
		oc, kc := runs[ordinal][n], runs[kcm][n]
		why := ""
		switch {
		case oc.result() == skipped:
			why = "skipped: " + reasonFor(skips, n)
		case oc.result() == failed:
			if r := reasonFor(known, n); r != "" {
				why = r
			} else {
				why = oc.why()
			}
		case kc.result() == failed:
			if r := reasonFor(known, n); r != "" {
				why = "kube-controller-manager: " + r
			} else {
				why = "kube-controller-manager: " + kc.why()
			}
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", i+1, cell(shortName(n)), conf, cellResult(kc, runs[kcm], n), cellResult(oc, runs[ordinal], n), cell(why))
	}
	return b.String()
}

func cellResult(c junitCase, run map[string]junitCase, name string) string {
	if _, ok := run[name]; !ok {
		return "not in the run"
	}
	switch r := c.result(); r {
	case passed:
		return fmt.Sprintf("passed (%.0f s)", c.Time)
	default:
		return string(r)
	}
}

func runLine(ri runInfo) string {
	return fmt.Sprintf("%s at `%s`, `%s`, %d s (%d process(es), load %s)", ri.Date, ri.Commit, ri.Command, ri.Seconds, ri.Procs, ri.Load)
}

// cell escapes what would break a markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
