package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/replay/world"
)

// fakeTerminal is a standard error that says it is a terminal.
type fakeTerminal struct{ bytes.Buffer }

func (*fakeTerminal) IsTerminal() bool { return true }

// useClock makes the progress line's clock advance by step at every reading, for the test.
func useClock(t *testing.T, step time.Duration) {
	t.Helper()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	saved := progressNow
	progressNow = func() time.Time { now = now.Add(step); return now }
	t.Cleanup(func() { progressNow = saved })
}

// stderrBuffer is a test's standard error: a fakeTerminal, or a bytes.Buffer (a pipe).
type stderrBuffer interface {
	io.Writer
	String() string
}

// runOn runs the CLI as run does, with stderr as given.
func runOn(t *testing.T, stderr stderrBuffer, args ...string) (code int, stdout, errs string) {
	t.Helper()
	var out bytes.Buffer
	code = Main(append(args, "--cache-dir", ""), strings.NewReader(""), &out, stderr)
	return code, out.String(), stderr.String()
}

var progressRE = regexp.MustCompile(`\r(\w[\w ]*): (\d+) syncs, \+(\S+) virtual, (\d+)/(\d+) pods at the new revision\x1b\[K`)

type drawnLine struct {
	doing                    string
	syncs, updated, replicas int
	virtual                  string
}

// drawnLines are the progress lines drawn on a terminal, in order.
func drawnLines(t *testing.T, stderr string) []drawnLine {
	t.Helper()
	var lines []drawnLine
	for _, m := range progressRE.FindAllStringSubmatch(stderr, -1) {
		n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
		lines = append(lines, drawnLine{doing: m[1], syncs: n(2), virtual: m[3], updated: n(4), replicas: n(5)})
	}
	return lines
}

// A clock that reads one second later at every sync draws the line after every sync: the last one drawn
// is where the preview ended (its syncs and virtual time as -o json tells them, every pod at the new
// revision), an earlier one had fewer pods there, and the line is cleared at the end.
func TestPreviewProgressOnTerminal(t *testing.T) {
	args := []string{"preview", "--scenario", "../../examples/rolling-update.yaml", "-f", "../../examples/rolling-update-next.yaml"}
	code, out, _ := run(t, "", append(args, "-o", "json")...)
	var res struct{ Outcome replay.Outcome }
	if code != ExitOK || json.Unmarshal([]byte(out), &res) != nil || res.Outcome.Steps == 0 {
		t.Fatalf("preview -o json: exit %d, %.300s", code, out)
	}
	useClock(t, time.Second)
	var term fakeTerminal
	code, _, errs := runOn(t, &term, args...)
	if code != ExitOK {
		t.Fatalf("exit %d: %q", code, errs)
	}
	var previewing []drawnLine
	for _, l := range drawnLines(t, errs) {
		if l.doing == "previewing" {
			previewing = append(previewing, l)
		}
	}
	if len(previewing) < 2 {
		t.Fatalf("want a progress line after every sync, got %d in %q", len(previewing), errs)
	}
	last := previewing[len(previewing)-1]
	wantTime := world.FormatDuration(time.Duration(res.Outcome.DurationSeconds * float64(time.Second)).Round(time.Second))
	if last.syncs != res.Outcome.Steps || last.virtual != wantTime || last.updated != 5 || last.replicas != 5 {
		t.Errorf("last line %+v, want %d syncs, +%s, 5/5 pods at the new revision", last, res.Outcome.Steps, wantTime)
	}
	if first := previewing[0]; first.updated >= 5 || first.syncs >= last.syncs {
		t.Errorf("first line %+v: not the start of the rollout (last %+v)", first, last)
	}
	if !strings.HasSuffix(errs, "\r\x1b[K") {
		t.Errorf("the line is not cleared at the end: %q", errs)
	}
}

// replay draws the same line ("replaying: ...").
func TestReplayProgressOnTerminal(t *testing.T) {
	useClock(t, time.Second)
	var term fakeTerminal
	code, _, errs := runOn(t, &term, "replay", "../../examples/rolling-update.yaml")
	lines := drawnLines(t, errs)
	if code != ExitOK || len(lines) == 0 {
		t.Fatalf("exit %d, no progress line: %q", code, errs)
	}
	if l := lines[len(lines)-1]; l.doing != "replaying" || l.updated != 5 || l.replicas != 5 || l.syncs < len(lines) {
		t.Errorf("last line %+v: want replaying, 5/5 pods at the new revision", l)
	}
}

// No line for -o json or yaml, even on a terminal, nor for text to a pipe or file.
func TestProgressOnlyForTextOnTerminal(t *testing.T) {
	useClock(t, time.Second)
	preview := []string{"preview", "--scenario", "../../examples/rolling-update.yaml", "-f", "../../examples/rolling-update-next.yaml"}
	for _, c := range []struct {
		name   string
		stderr stderrBuffer
		args   []string
	}{
		{"preview -o json on a terminal", &fakeTerminal{}, append(preview, "-o", "json")},
		{"preview -o yaml on a terminal", &fakeTerminal{}, append(preview, "-o", "yaml")},
		{"replay -o json on a terminal", &fakeTerminal{}, []string{"replay", "../../examples/rolling-update.yaml", "-o", "json"}},
		{"preview text to a pipe", &bytes.Buffer{}, preview},
		{"replay text to a pipe", &bytes.Buffer{}, []string{"replay", "../../examples/rolling-update.yaml"}},
	} {
		code, out, errs := runOn(t, c.stderr, c.args...)
		if code != ExitOK || out == "" {
			t.Fatalf("%s: exit %d: %q", c.name, code, errs)
		}
		if strings.ContainsAny(errs, "\r\x1b") || strings.Contains(errs, "syncs") {
			t.Errorf("%s: progress drawn: %q", c.name, errs)
		}
	}
}

// The line waits a second, then is redrawn at most every 100ms; it is cleared only when it was drawn.
func TestProgressLineTiming(t *testing.T) {
	var now time.Time
	saved := progressNow
	progressNow = func() time.Time { return now }
	t.Cleanup(func() { progressNow = saved })
	var term fakeTerminal
	p := newProgress(&term, "text", "previewing")
	at := func(d time.Duration, syncs int) string {
		now = time.Time{}.Add(d)
		term.Reset()
		p.update(replay.Progress{Syncs: syncs, Elapsed: time.Duration(syncs) * 90 * time.Second, Updated: syncs / 2, Replicas: 300})
		return term.String()
	}
	if got := at(999*time.Millisecond, 10); got != "" {
		t.Errorf("drawn before a second: %q", got)
	}
	if got, want := at(time.Second, 12), "\rpreviewing: 12 syncs, +18m virtual, 6/300 pods at the new revision\x1b[K"; got != want {
		t.Errorf("at 1s: %q, want %q", got, want)
	}
	if got := at(time.Second+99*time.Millisecond, 13); got != "" {
		t.Errorf("redrawn within 100ms: %q", got)
	}
	if got, want := at(time.Second+100*time.Millisecond, 41), "\rpreviewing: 41 syncs, +1h1m30s virtual, 20/300 pods at the new revision\x1b[K"; got != want {
		t.Errorf("at 1.1s: %q, want %q", got, want)
	}
	term.Reset()
	p.done()
	if term.String() != "\r\x1b[K" {
		t.Errorf("done: %q, want the line cleared", term.String())
	}
	quiet := newProgress(&term, "text", "previewing")
	term.Reset()
	quiet.done()
	if term.String() != "" {
		t.Errorf("done without a line drawn: %q", term.String())
	}
}
