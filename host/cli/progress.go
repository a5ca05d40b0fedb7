package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/replay/world"
)

// When a long replay's progress line is first drawn, and how often it is redrawn, in real time: a replay
// shorter than progressAfter prints nothing.
const (
	progressAfter = time.Second
	progressEvery = 100 * time.Millisecond
)

// progressNow is the progress line's clock (a test's own, so that no test depends on the machine's speed).
var progressNow = time.Now

// progress draws one line on standard error while a replay runs (`ordinal replay`, `ordinal preview`,
// kubectl ordinal preview and timeline): "previewing: 120 syncs, +35m virtual, 40/100 pods at the new
// revision", rewritten in place (\r) and cleared when the replay ends. Only text output on a terminal
// gets it: never -o json|yaml, never a pipe or a file.
type progress struct {
	w       io.Writer
	on      bool
	doing   string // "replaying", "previewing"
	started time.Time
	last    time.Time
	drawn   bool
}

// newProgress is the progress line of a replay whose output is format, drawn on stderr when it is a
// terminal; doing names the work ("previewing").
func newProgress(stderr io.Writer, format, doing string) *progress {
	return &progress{w: stderr, on: format == "text" && redraws(stderr), doing: doing, started: progressNow()}
}

// redraws reports whether w is a terminal that can rewrite a line in place (not TERM=dumb).
func redraws(w io.Writer) bool {
	if _, ok := w.(*os.File); ok && os.Getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(w)
}

// update is replay.Options.Progress: after each sync, the line redrawn when it is due.
func (p *progress) update(r replay.Progress) {
	if !p.on {
		return
	}
	now := progressNow()
	if now.Sub(p.started) < progressAfter || p.drawn && now.Sub(p.last) < progressEvery {
		return
	}
	p.last, p.drawn = now, true
	fmt.Fprintf(p.w, "\r%s\033[K", progressLine(p.doing, r))
}

// progressLine is the text of the line for r.
func progressLine(doing string, r replay.Progress) string {
	return fmt.Sprintf("%s: %d syncs, +%s virtual, %d/%d pods at the new revision",
		doing, r.Syncs, world.FormatDuration(r.Elapsed.Round(time.Second)), r.Updated, r.Replicas)
}

// done clears the line, when one was drawn.
func (p *progress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
