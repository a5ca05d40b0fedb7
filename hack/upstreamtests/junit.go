package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"sort"
	"strings"
)

// junitSuites is the part of a JUnit report (ginkgo's, as upstream's e2e.test writes it, or go test's
// converted) the tables read: each test case's name, state, time and failure text.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name  string      `xml:"name,attr"`
	Cases []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Status  string        `xml:"status,attr,omitempty"`
	Time    float64       `xml:"time,attr"`
	Skipped *junitMessage `xml:"skipped"`
	Failure *junitMessage `xml:"failure"`
	Error   *junitMessage `xml:"error"`
}

type junitMessage struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// result is what a test case came to: passed, failed (a failure, an error, a time-out, a panic) or skipped.
type result string

const (
	passed  result = "passed"
	failed  result = "failed"
	skipped result = "skipped"
)

func (c junitCase) result() result {
	switch {
	case c.Failure != nil || c.Error != nil:
		return failed
	case c.Skipped != nil || c.Status == "skipped" || c.Status == "pending":
		return skipped
	case c.Status == "" || c.Status == "passed":
		return passed
	default: // ginkgo's panicked, interrupted, timedout, aborted without a failure element
		return failed
	}
}

// why is the first line of what a failed case reported, for a table cell.
func (c junitCase) why() string {
	m := c.Failure
	if m == nil {
		m = c.Error
	}
	if m == nil {
		return ""
	}
	text := m.Message
	if strings.TrimSpace(text) == "" {
		text = m.Text
	}
	// ginkgo's text: "[FAILED] the message", then where ("In [It] at: ...") and the timeline
	for _, line := range strings.Split(text, "\n") {
		for _, p := range []string{"[FAILED]", "[TIMEDOUT]", "[PANICKED]", "[INTERRUPTED]"} {
			line = strings.TrimPrefix(line, p)
		}
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 200 {
				line = line[:197] + "..."
			}
			return line
		}
	}
	return strings.TrimSpace(text)
}

// readJUnits reads the reports of one run's passes and merges them: a spec counts where it ran (the other
// passes list it as skipped).
func readJUnits(paths ...string) (*junitSuites, error) {
	byName := map[string]junitCase{}
	var names []string
	for _, p := range paths {
		s, err := readJUnit(p)
		if err != nil {
			return nil, err
		}
		for _, suite := range s.Suites {
			for _, c := range suite.Cases {
				prev, seen := byName[c.Name]
				if !seen {
					names = append(names, c.Name)
				}
				if !seen || (prev.result() == skipped && c.result() != skipped) {
					byName[c.Name] = c
				}
			}
		}
	}
	out := &junitSuites{Suites: []junitSuite{{Name: "merged"}}}
	for _, n := range names {
		out.Suites[0].Cases = append(out.Suites[0].Cases, byName[n])
	}
	return out, nil
}

func readJUnit(path string) (*junitSuites, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s junitSuites
	if err := xml.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: not a JUnit report: %w", path, err)
	}
	return &s, nil
}

// cases are the report's test cases whose name contains filter ("" for all), by name, leaf node type
// ("[It] ") dropped from the name.
func (s *junitSuites) cases(filter string) map[string]junitCase {
	out := map[string]junitCase{}
	for _, suite := range s.Suites {
		for _, c := range suite.Cases {
			if filter != "" && !strings.Contains(c.Name, filter) {
				continue
			}
			c.Name = strings.TrimPrefix(c.Name, "[It] ")
			out[c.Name] = c
		}
	}
	return out
}

// trimmed is the report reduced to the filtered cases, with their captured output dropped and failures
// cut to their first lines: what the repository keeps of a run (a full e2e.test report lists every spec of
// every SIG, mostly skipped, and megabytes of logs).
func (s *junitSuites) trimmed(filter string) *junitSuites {
	cases := s.cases(filter)
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	out := &junitSuites{Suites: []junitSuite{{Name: "upstream StatefulSet tests"}}}
	for _, n := range names {
		c := cases[n]
		for _, m := range []*junitMessage{c.Failure, c.Error, c.Skipped} {
			if m != nil {
				m.Text = firstLines(m.Text, 12)
			}
		}
		out.Suites[0].Cases = append(out.Suites[0].Cases, c)
	}
	return out
}

func (s *junitSuites) write(path string) error {
	b, err := xml.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644)
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
