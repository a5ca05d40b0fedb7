package plan

import (
	"strings"
	"unicode/utf8"

	"github.com/ordinal-dev/ordinal/abi"
)

// Events decides which of a plan's events are recorded, and when, as the controller records them and
// the replay shows them. An event is recorded only once the write it reports (events[].action, asked
// for with the snapshot's eventActions) has been issued with the outcome the plan predicted; a write
// that fails unexpectedly records upstream's Failed<Verb> warning instead; events that report no write
// (e.g. ConflictingController), and all events of a module that does not give the index, are recorded
// once the whole plan was applied.
type Events struct {
	set      string
	byAction map[int][]abi.Event
	rest     []abi.Event
}

// NewEvents sorts the events of p, a plan for the set named set.
func NewEvents(p *abi.Plan, set string) *Events {
	e := &Events{set: set, byAction: map[int][]abi.Event{}}
	for _, ev := range p.Events {
		if ev.Action == nil {
			e.rest = append(e.rest, ev)
			continue
		}
		e.byAction[*ev.Action] = append(e.byAction[*ev.Action], ev)
	}
	return e
}

// After returns the events to record once r's write has been answered.
func (e *Events) After(r Result) []abi.Event {
	if r.Outcome != Failed {
		return e.byAction[r.Index]
	}
	if r.Err == nil {
		return nil // a predicted rejection that did not come: the snapshot was stale, upstream's sync was another
	}
	if ev, ok := failureEvent(e.set, r.Action, r.Err); ok {
		return []abi.Event{ev}
	}
	return nil
}

// AtEnd returns the events to record once Apply returned err.
func (e *Events) AtEnd(err error) []abi.Event {
	if err != nil {
		return nil
	}
	return e.rest
}

// failureEvent is the event upstream records when a pod or claim write fails (recordPodEvent,
// recordClaimEvent); other kinds record none.
func failureEvent(set string, a *abi.Action, err error) (abi.Event, bool) {
	t := a.Verb
	if t != "" {
		t = strings.ToUpper(t[:1]) + t[1:]
	}
	switch a.Kind {
	case abi.KindPod:
		return abi.Event{Type: abi.EventWarning, Reason: "Failed" + t,
			Message: t + " Pod " + a.Name + " in StatefulSet " + set + " failed error: " + err.Error()}, true
	case abi.KindPersistentVolumeClaim:
		pod := set
		if i := strings.LastIndexByte(a.Name, '-'); i >= 0 {
			pod += a.Name[i:]
		}
		return abi.Event{Type: abi.EventWarning, Reason: "Failed" + t,
			Message: t + " Claim " + a.Name + " for Pod " + pod + " in StatefulSet " + set + " failed error: " + err.Error()}, true
	}
	return abi.Event{}, false
}

// Truncate cuts an event message (or a log's detail) to at most n bytes, at a character boundary, and marks
// the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// MaxEventMessage is how long an event message a module or a policy chose may be when recorded: events.k8s.io's
// limit on a note (1 KiB), which kube-apiserver enforces there; a longer one is cut (Truncate).
const MaxEventMessage = 1024
