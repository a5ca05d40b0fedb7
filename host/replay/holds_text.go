package replay

import (
	"fmt"
	"slices"
	"strings"
)

// holdSpan is a policy's hold of one write, over the syncs that planned it, until a sync planned writes
// without it (released) or the replay ended.
type holdSpan struct {
	policy, reason, message, write string
	from, to                       Duration
	released                       bool
}

// holdSpans are the replay's policy holds in the order they began. A sync with no writes neither extends
// nor ends a hold (nothing was planned to hold); one whose writes no longer include the held write ends it.
func holdSpans(steps []Step) []holdSpan {
	var spans []holdSpan
	open := map[string]int{} // policy, reason and write -> its span
	for _, st := range steps {
		if len(st.Actions) == 0 {
			continue
		}
		seen := map[string]bool{}
		for _, a := range st.Actions {
			if a.Held == nil {
				continue
			}
			write := a.Verb + " " + a.Kind + " " + a.Name
			k := a.Held.Policy + "\x00" + a.Held.Reason + "\x00" + write
			seen[k] = true
			if i, ok := open[k]; ok {
				spans[i].to = st.Offset
				continue
			}
			open[k] = len(spans)
			spans = append(spans, holdSpan{policy: a.Held.Policy, reason: a.Held.Reason, message: a.Held.Message, write: write, from: st.Offset, to: st.Offset})
		}
		for k, i := range open {
			if !seen[k] {
				spans[i].to, spans[i].released = st.Offset, true
				delete(open, k)
			}
		}
	}
	return spans
}

// maxHoldLines is how many holds a text lists before folding the rest into a count (-o json has each).
const maxHoldLines = 8

// writeHolds lists the replay's policy holds near the top of its text, where a reader looks first: which
// write waited for which policy, from when until when, and why — otherwise found only among the syncs. The
// holds a "held" outcome ends with are left to its line, which names them.
func writeHolds(b *strings.Builder, steps []Step, outcome string) {
	spans := holdSpans(steps)
	if outcome == OutcomeHeld {
		spans = slices.DeleteFunc(spans, func(s holdSpan) bool { return !s.released })
	}
	if len(spans) == 0 {
		return
	}
	b.WriteString("holds:\n")
	for i, s := range spans {
		if i == maxHoldLines {
			fmt.Fprintf(b, "  ... %d more (-o json has each write's hold)\n", len(spans)-i)
			break
		}
		when := fmt.Sprintf("from +%s until +%s, when it was released", s.from, s.to)
		switch {
		case !s.released:
			when = fmt.Sprintf("from +%s until the end, still held", s.from)
		case s.from == s.to:
			when = fmt.Sprintf("at +%s, released by the next sync", s.from)
		}
		fmt.Fprintf(b, "  %s held %s %s: %s: %s\n", s.policy, s.write, when, s.reason, oneLine(s.message))
	}
}
