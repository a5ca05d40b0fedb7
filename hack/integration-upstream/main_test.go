package main

import (
	"encoding/xml"
	"strings"
	"testing"
)

// stream is a `go test -json` stream shaped like a run of the upstream tests: a pass, a failure with a
// Fatalf (continued on a second line) after framework and substitution messages, output split across
// events, a subtest failing, a skip, and a test cut off by the binary's death.
const stream = `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    zz_ordinal_substitute.go:70: ordinal: started pid 1: ordinal controller\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (1.50s)\n"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":1.5}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    testserver.go:200: Resolved testserver package path\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    util.go:239: failed to verify .Status.Replicas "}
{"Action":"output","Package":"p","Test":"TestB","Output":"is equal to .Spec.Replicas for sts sts: context deadline exceeded\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"        second | line <x>\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    zz_ordinal_substitute.go:150: ordinal: YIELDED: Leaving the StatefulSet alone\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- FAIL: TestB (60.10s)\n"}
{"Action":"fail","Package":"p","Test":"TestB","Elapsed":60.1}
{"Action":"run","Package":"p","Test":"TestC"}
{"Action":"run","Package":"p","Test":"TestC/sub_one"}
{"Action":"output","Package":"p","Test":"TestC/sub_one","Output":"    statefulset_test.go:733: Unexpected pod names\n"}
{"Action":"fail","Package":"p","Test":"TestC/sub_one","Elapsed":2}
{"Action":"fail","Package":"p","Test":"TestC","Elapsed":3}
{"Action":"run","Package":"p","Test":"TestD"}
{"Action":"skip","Package":"p","Test":"TestD","Elapsed":0}
{"Action":"run","Package":"p","Test":"TestE"}
{"Action":"output","Package":"p","Test":"TestE","Output":"panic: boom\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t70.0s\n"}
{"Action":"fail","Package":"p","Elapsed":70}
`

var filter = Filter{Files: map[string]bool{"statefulset_test.go": true, "util.go": true, "zz_ordinal_substitute.go": true},
	Info: []string{"ordinal: started", "ordinal: YIELDED"}}

func parse(t *testing.T) *Report {
	t.Helper()
	rep, err := Parse(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	rep.Run = Run{Mode: "ordinal", Description: "Ordinal", Date: "2026-11-28", Commit: "abc", Command: "make integration-upstream"}
	return rep
}

func TestParse(t *testing.T) {
	rep := parse(t)
	var got []string
	for _, r := range rep.Results {
		got = append(got, r.Name+"="+r.Status)
	}
	want := "TestA=pass TestB=fail TestC=fail TestC/sub_one=fail TestD=skip TestE=incomplete"
	if strings.Join(got, " ") != want {
		t.Errorf("results %v, want %s", got, want)
	}
	if rep.Package != "fail" || rep.PackageElapsed != 70 {
		t.Errorf("package %q %v, want fail 70", rep.Package, rep.PackageElapsed)
	}
	if b := rep.Results[1]; len(b.Output) != 5 || !strings.Contains(b.Output[1], "util.go:239: failed to verify .Status.Replicas is equal") {
		t.Errorf("output split across events not joined: %q", b.Output)
	}
}

func TestReasons(t *testing.T) {
	rep := parse(t)
	got := filter.Reasons(rep.Results[1])
	want := "failed to verify .Status.Replicas is equal to .Spec.Replicas for sts sts: context deadline exceeded second | line <x>"
	if len(got) != 1 || got[0] != want {
		t.Errorf("reasons %q, want only the Fatalf with its continuation (not the framework's or the substitution's progress)", got)
	}
	if got := filter.Reasons(rep.Results[0]); len(got) != 0 {
		t.Errorf("a passing test's progress lines are not reasons: %q", got)
	}
	if n := Notes(rep.Results[1], "ordinal: YIELDED"); len(n) != 1 {
		t.Errorf("notes %q, want the yield", n)
	}
}

func TestJUnit(t *testing.T) {
	rep := parse(t)
	var b strings.Builder
	if err := JUnit(&b, rep, "p", filter); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Skipped  int `xml:"skipped,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	s := doc.Suites[0]
	if s.Tests != 6 || s.Failures != 4 || s.Skipped != 1 {
		t.Errorf("tests %d failures %d skipped %d, want 6 4 1", s.Tests, s.Failures, s.Skipped)
	}
	if f := s.Cases[1].Failure; f == nil || !strings.HasPrefix(f.Message, "failed to verify .Status.Replicas") {
		t.Errorf("TestB's failure message: %+v", f)
	}

	// a binary failing with every test passed (upstream's goroutine leak check) is a failure too
	rep.Results = rep.Results[:1]
	b.Reset()
	if err := JUnit(&b, rep, "p", filter); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `name="TestMain"`) || !strings.Contains(b.String(), `failures="1"`) {
		t.Errorf("no TestMain failure for the failed binary:\n%s", b.String())
	}
}

func TestMarkdown(t *testing.T) {
	ord := parse(t)
	cal := parse(t)
	cal.Run.Mode = "upstream"
	for _, r := range cal.Results {
		r.Status = "pass"
	}
	cal.Results = cal.Results[:5]
	cal.Package = "pass"
	var b strings.Builder
	if err := Markdown(&b, []*Report{ord, cal}, filter, "ordinal: YIELDED"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "test binary") {
		t.Errorf("the binary's tail is shown although tests failed (it only explains a binary failing on its own):\n%s", page)
	}
	for _, want := range []string{
		"| ordinal | Ordinal | 2026-11-28 | `abc` | `make integration-upstream` | 1 of 6 (binary: **FAIL**) |",
		"| upstream |",
		"| TestB | **FAIL** | pass | 60.1 | failed to verify .Status.Replicas is equal to .Spec.Replicas for sts sts: context deadline exceeded second \\| line &lt;x&gt;; 1 × ordinal: YIELDED: Leaving the StatefulSet alone |",
		"| TestE | **no verdict** | not run | 0.0 | panic: boom |",
		"| TestA | pass | pass | 1.5 |  |",
		"| TestC | **FAIL** | pass | 3.0 | failed subtests: sub_one |",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
}
