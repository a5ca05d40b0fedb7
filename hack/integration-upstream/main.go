// Command integration-upstream turns the runs of upstream Kubernetes' StatefulSet integration tests
// (scripts/integration-upstream.sh) into reports: for each run directory (its test.json, the `go test -json`
// stream, and run.json, what was run) a JUnit report junit.xml beside them, and one markdown page with a
// table of every test and subtest: its result in each run and, where it failed, why (the failure messages
// from its own output). Nothing in the page is written by hand.
//
//	go run ./hack/integration-upstream -md docs/integration-upstream.md RUN_DIR...
package main

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// event is one line of the `go test -json` stream (cmd/test2json's TestEvent).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// Run is what run.json says about a run: written by scripts/integration-upstream.sh.
type Run struct {
	Mode        string `json:"mode"`        // "ordinal" or "upstream" (calibration)
	Description string `json:"description"` // what ran the tests' StatefulSets
	Date        string `json:"date"`
	Commit      string `json:"commit"`
	Command     string `json:"command"`
	Args        string `json:"ordinal_args,omitempty"`
}

// Result is one test's (or subtest's) outcome in a run.
type Result struct {
	Name    string
	Status  string // pass, fail, skip, or incomplete (no verdict: the binary died or timed out)
	Elapsed float64
	Output  []string // the test's own output lines, in order
}

// Report is a run's results, in the order the tests started; Package is the binary's own verdict
// (a failure of no test: e.g. a goroutine leak found after the tests, or a crash).
type Report struct {
	Run            Run
	Results        []*Result
	Package        string
	PackageOutput  []string
	PackageElapsed float64
}

// Parse reads a `go test -json` stream.
func Parse(r io.Reader) (*Report, error) {
	rep := &Report{}
	byName := map[string]*Result{}
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 1<<20), 16<<20)
	partial := map[string]string{} // output split across events, by test
	for s.Scan() {
		line := s.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("go test -json line %q: %w", line, err)
		}
		if e.Test == "" {
			switch e.Action {
			case "output":
				rep.PackageOutput = append(rep.PackageOutput, strings.TrimRight(e.Output, "\n"))
			case "pass", "fail", "skip":
				rep.Package, rep.PackageElapsed = e.Action, e.Elapsed
			}
			continue
		}
		res := byName[e.Test]
		if res == nil {
			res = &Result{Name: e.Test, Status: "incomplete"}
			byName[e.Test] = res
			rep.Results = append(rep.Results, res)
		}
		switch e.Action {
		case "output":
			text := partial[e.Test] + e.Output
			for {
				i := strings.IndexByte(text, '\n')
				if i < 0 {
					break
				}
				res.Output = append(res.Output, text[:i])
				text = text[i+1:]
			}
			partial[e.Test] = text
		case "pass", "fail", "skip":
			res.Status, res.Elapsed = e.Action, e.Elapsed
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	for name, text := range partial {
		if text != "" {
			byName[name].Output = append(byName[name].Output, text)
		}
	}
	return rep, nil
}

// message matches a line t.Log/t.Error/t.Fatal writes: "    file.go:123: text".
var message = regexp.MustCompile(`^\s+([A-Za-z0-9_.-]+\.go):\d+: (.*)$`)

// Filter says which of a test's messages explain a failure: those written from Files (the test package's
// own sources; messages of the framework's helpers are progress, not verdicts) that begin with none of
// Info (the substitution's progress lines).
type Filter struct {
	Files map[string]bool
	Info  []string
}

// Reasons are the failure messages of a test: its own messages (continuation lines joined) that Filter
// keeps, in order. A test failed with none of them (a failed subtest, a panic) gets its last output line.
func (f Filter) Reasons(r *Result) []string {
	var out []string
	for i := 0; i < len(r.Output); i++ {
		m := message.FindStringSubmatch(r.Output[i])
		if m == nil || !f.Files[m[1]] || f.info(m[2]) {
			continue
		}
		text := strings.TrimSpace(m[2])
		for i+1 < len(r.Output) && strings.HasPrefix(r.Output[i+1], "        ") && message.FindStringSubmatch(r.Output[i+1]) == nil {
			i++
			text += " " + strings.TrimSpace(r.Output[i])
		}
		out = append(out, text)
	}
	return out
}

// Why explains a failed test: its reasons, else its failed subtests, else its last output line (a panic).
func (rep *Report) Why(r *Result, f Filter) []string {
	if rs := f.Reasons(r); len(rs) > 0 {
		return rs
	}
	var sub []string
	for _, o := range rep.Results {
		if strings.HasPrefix(o.Name, r.Name+"/") && (o.Status == "fail" || o.Status == "incomplete") {
			sub = append(sub, strings.TrimPrefix(o.Name, r.Name+"/"))
		}
	}
	if len(sub) > 0 {
		return []string{"failed subtests: " + strings.Join(sub, ", ")}
	}
	if len(r.Output) > 0 {
		return []string{strings.TrimSpace(r.Output[len(r.Output)-1])}
	}
	return nil
}

func (f Filter) info(text string) bool {
	for _, p := range f.Info {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// Notes are a test's messages beginning with prefix (e.g. the sets Ordinal left alone).
func Notes(r *Result, prefix string) []string {
	var out []string
	for _, line := range r.Output {
		if m := message.FindStringSubmatch(line); m != nil && strings.HasPrefix(m[2], prefix) {
			out = append(out, strings.TrimSpace(m[2]))
		}
	}
	return out
}

// JUnit writes the report as a JUnit XML document: one testsuite, a testcase per test and subtest, and a
// testcase "TestMain" when the binary failed with no test failing.
func JUnit(w io.Writer, rep *Report, pkg string, f Filter) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	type testcase struct {
		Classname string    `xml:"classname,attr"`
		Name      string    `xml:"name,attr"`
		Time      string    `xml:"time,attr"`
		Failure   *failure  `xml:"failure,omitempty"`
		Skipped   *struct{} `xml:"skipped,omitempty"`
	}
	type testsuite struct {
		XMLName  xml.Name   `xml:"testsuite"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Time     string     `xml:"time,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type testsuites struct {
		XMLName xml.Name    `xml:"testsuites"`
		Suites  []testsuite `xml:"testsuite"`
	}
	suite := testsuite{Name: pkg, Time: fmt.Sprintf("%.3f", rep.PackageElapsed)}
	failed := false
	for _, r := range rep.Results {
		c := testcase{Classname: pkg, Name: r.Name, Time: fmt.Sprintf("%.3f", r.Elapsed)}
		switch r.Status {
		case "fail", "incomplete":
			failed = true
			msg := r.Status
			if rs := rep.Why(r, f); len(rs) > 0 {
				msg = rs[0]
			}
			c.Failure = &failure{Message: msg, Type: r.Status, Text: strings.Join(r.Output, "\n")}
			suite.Failures++
		case "skip":
			c.Skipped = &struct{}{}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, c)
	}
	if rep.Package != "pass" && !failed {
		msg := "the test binary failed with no test failing"
		if rep.Package == "" {
			msg = "the test binary gave no verdict"
		}
		suite.Cases = append(suite.Cases, testcase{Classname: pkg, Name: "TestMain", Time: "0.000",
			Failure: &failure{Message: msg, Type: "package", Text: strings.Join(rep.PackageOutput, "\n")}})
		suite.Failures++
	}
	suite.Tests = len(suite.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(testsuites{Suites: []testsuite{suite}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// cell makes text fit one markdown table cell.
func cell(text string, max int) string {
	text = strings.Join(strings.Fields(text), " ")
	if len([]rune(text)) > max {
		text = string([]rune(text)[:max-1]) + "…"
	}
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(text)
}

var verdict = map[string]string{"pass": "pass", "fail": "**FAIL**", "skip": "skip", "incomplete": "**no verdict**", "": "not run"}

// Markdown writes the page: what each run was, then one table with every test's result in each run and
// the reasons and notes of the first run (the Ordinal run; the others are calibration).
func Markdown(w io.Writer, reps []*Report, f Filter, notePrefix string) error {
	b := &strings.Builder{}
	fmt.Fprintln(b, "<!-- Generated by hack/integration-upstream from the runs of scripts/integration-upstream.sh (`make integration-upstream`); do not edit. -->")
	fmt.Fprintln(b)
	fmt.Fprintln(b, "| run | what ran the StatefulSets | date | commit | command | passed |")
	fmt.Fprintln(b, "|---|---|---|---|---|---|")
	for _, rep := range reps {
		pass, total := 0, 0
		for _, r := range rep.Results {
			total++
			if r.Status == "pass" {
				pass++
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s | `%s` | `%s` | %d of %d (binary: %s) |\n", cell(rep.Run.Mode, 40), cell(rep.Run.Description, 200),
			cell(rep.Run.Date, 40), cell(rep.Run.Commit, 60), cell(rep.Run.Command, 200), pass, total, verdict[rep.Package])
	}
	fmt.Fprintln(b)
	// every test of any run, in the first run's order, then the others' new ones
	var names []string
	seen := map[string]bool{}
	results := make([]map[string]*Result, len(reps))
	for i, rep := range reps {
		results[i] = map[string]*Result{}
		for _, r := range rep.Results {
			results[i][r.Name] = r
			if !seen[r.Name] {
				seen[r.Name] = true
				names = append(names, r.Name)
			}
		}
	}
	fmt.Fprint(b, "| test |")
	for _, rep := range reps {
		fmt.Fprintf(b, " %s |", cell(rep.Run.Mode, 40))
	}
	fmt.Fprintf(b, " time (s) | reason for failure, notes (%s) |\n|---|", cell(reps[0].Run.Mode, 40))
	for range reps {
		fmt.Fprint(b, "---|")
	}
	fmt.Fprintln(b, "---|---|")
	for _, name := range names {
		fmt.Fprintf(b, "| %s |", cell(name, 120))
		for i := range reps {
			status := ""
			if r := results[i][name]; r != nil {
				status = r.Status
			}
			fmt.Fprintf(b, " %s |", verdict[status])
		}
		var why []string
		elapsed := ""
		if r := results[0][name]; r != nil {
			elapsed = fmt.Sprintf("%.1f", r.Elapsed)
			if r.Status == "fail" || r.Status == "incomplete" {
				why = reps[0].Why(r, f)
			}
			if notePrefix != "" {
				if n := Notes(r, notePrefix); len(n) > 0 {
					why = append(why, fmt.Sprintf("%d × %s", len(n), n[0]))
				}
			}
		}
		fmt.Fprintf(b, " %s | %s |\n", elapsed, cell(strings.Join(why, "; "), 600))
	}
	if reps[0].Package != "pass" && !reps[0].anyFailed() {
		fmt.Fprintf(b, "\nThe %s run's test binary: %s; its last lines:\n\n```\n%s\n```\n", reps[0].Run.Mode, verdict[reps[0].Package], strings.Join(tail(reps[0].PackageOutput, 10), "\n"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (rep *Report) anyFailed() bool {
	for _, r := range rep.Results {
		if r.Status == "fail" || r.Status == "incomplete" {
			return true
		}
	}
	return false
}

func tail(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

func load(dir string) (*Report, error) {
	f, err := os.Open(filepath.Join(dir, "test.json"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	meta, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(meta, &rep.Run); err != nil {
		return nil, fmt.Errorf("%s/run.json: %w", dir, err)
	}
	return rep, nil
}

func main() {
	md := flag.String("md", "", "write the markdown page here (default: none)")
	pkg := flag.String("package", "k8s.io/kubernetes/test/integration/statefulset", "the tests' package (JUnit classname)")
	files := flag.String("files", "statefulset_test.go,util.go,zz_ordinal_substitute.go", "the sources whose messages can explain a failure")
	info := flag.String("info", "ordinal: started,ordinal: YIELDED,ordinal: feature gate", "prefixes of messages that are progress, not failures")
	note := flag.String("note", "ordinal: YIELDED", "prefix of messages listed as notes in the table")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: integration-upstream [-md PAGE] RUN_DIR... (the first run's reasons go in the table)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	f := Filter{Files: map[string]bool{}}
	for _, name := range strings.Split(*files, ",") {
		f.Files[strings.TrimSpace(name)] = true
	}
	for _, p := range strings.Split(*info, ",") {
		if p = strings.TrimSpace(p); p != "" {
			f.Info = append(f.Info, p)
		}
	}
	var reps []*Report
	for _, dir := range flag.Args() {
		rep, err := load(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "integration-upstream:", err)
			os.Exit(1)
		}
		out, err := os.Create(filepath.Join(dir, "junit.xml"))
		if err == nil {
			err = JUnit(out, rep, *pkg, f)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "integration-upstream:", err)
			os.Exit(1)
		}
		reps = append(reps, rep)
		failed := []string{}
		for _, r := range rep.Results {
			if r.Status != "pass" && r.Status != "skip" {
				failed = append(failed, r.Name)
			}
		}
		sort.Strings(failed)
		fmt.Printf("%s: %d tests and subtests, failed: %v; binary: %s; %s\n", rep.Run.Mode, len(rep.Results), failed, verdict[rep.Package], filepath.Join(dir, "junit.xml"))
	}
	if *md != "" {
		out, err := os.Create(*md)
		if err == nil {
			err = Markdown(out, reps, f, *note)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "integration-upstream:", err)
			os.Exit(1)
		}
	}
}
