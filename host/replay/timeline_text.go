package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/host/rollout"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/jsonv"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
)

func podStateWord(p any) string {
	ph := jsonobj.GetStr(p, "status.phase")
	if kube.PodRunningAndReadyJSON(p.(Obj)) {
		ph = "Ready"
	} else if ph == "Running" {
		ph = "Running, not Ready"
	}
	if jsonobj.Get(p, "metadata.deletionTimestamp") != nil {
		ph += ", terminating"
	}
	return ph
}

// ---- text ----

// podGrid is the pod summary: ordinal:revision/state, "/term" while terminating; consecutive ordinals alike
// are one run, "0..297:A/Ready", so the grid of a 1000-pod set stays a line or two.
func podGrid(pods []PodState) []string {
	if len(pods) == 0 {
		return []string{"(none)"}
	}
	var parts []string
	for _, r := range ordinal.Runs(pods, func(p PodState) int64 { return int64(p.Ordinal) }, func(a, b PodState) bool {
		return a.Label == b.Label && a.State() == b.State() && a.Terminating == b.Terminating
	}) {
		first, last := pods[r[0]], pods[r[1]-1]
		s := fmt.Sprintf("%d:%s/%s", first.Ordinal, first.Label, first.State())
		if r[1]-r[0] > 1 {
			s = fmt.Sprintf("%d..%d:%s/%s", first.Ordinal, last.Ordinal, first.Label, first.State())
		}
		if first.Terminating {
			s += "/term"
		}
		parts = append(parts, s)
	}
	return parts
}

func (a ActionRecord) String() string {
	kind := a.Kind
	if kind == world.KindClaim {
		kind = "PVC"
	}
	s := a.Verb + " " + kind + " " + a.Name
	if a.Detail != "" {
		s += " (" + a.Detail + ")"
	}
	switch {
	case a.Held != nil && a.Held.repeated: // its message was told when the hold began or changed
		s += " -> held by policy " + a.Held.Policy + " (" + a.Held.Reason + "), as before"
	case a.Held != nil:
		s += " -> held by policy " + a.Held.Policy + " (" + a.Held.Reason + "): " + oneLine(a.Held.Message)
	case a.Error != "":
		s += " -> error: " + oneLine(a.Error)
	}
	return s
}

// WriteText prints the timeline for people: the outcome first and last, its warnings first (their codes last)
// and the policies' holds, then the syncs that wrote or saw something, a rollout's repeated syncs once at each end of the run
// (text_fold.go). verbose prints every sync whole, with the controller's events.
func (tl *Timeline) WriteText(w io.Writer, verbose bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "replay %s (%s model)", tl.Scenario, tl.Model)
	if tl.Description != "" {
		fmt.Fprintf(&b, ": %s", oneLine(tl.Description))
	}
	b.WriteString("\n")
	outcome := fmt.Sprintf("== %s after %s, %d syncs: %s\n", tl.Outcome.Result, tl.Outcome.Duration, tl.Outcome.Steps, tl.Outcome.Summary)
	b.WriteString(outcome)
	warnings := tl.warnings()
	writeWarnings(&b, warnings)
	writeHolds(&b, tl.Steps, tl.Outcome.Result)
	fmt.Fprintf(&b, "%s\n", wrapJoin(rollout.RevisionLegendItems(tl.Revisions), " ", 0, 2))
	fmt.Fprintf(&b, "grid: ordinal:revision/state (Running = not Ready), /term = terminating\n")
	var shown []Step
	quiet := 0
	for _, st := range tl.Steps {
		if !verbose && st.quiet() {
			quiet++
			continue
		}
		shown = append(shown, st)
	}
	if verbose {
		for _, st := range shown {
			b.WriteString(stepText(st, true, verbose))
		}
	} else { // a sync repeats another when all but its pod grid does (the grid is shown at each end)
		shapes := make([]shape, len(shown))
		for i, st := range shown {
			shapes[i] = shapeOf(stepText(st, false, false))
		}
		eachFolded(shapes, 4, 12, func(i int) { b.WriteString(stepText(shown[i], true, verbose)) }, func(r run, first, last int) {
			fmt.Fprintf(&b, "\n... %s: #%d +%s .. #%d +%s\n", r.left("times"), shown[first].Index, shown[first].Offset,
				shown[last].Index, shown[last].Offset)
		})
	}
	if quiet > 0 {
		fmt.Fprintf(&b, "\n(%d sync%s that wrote nothing and saw no change %s not shown; -v shows them)\n", quiet,
			map[bool]string{true: "", false: "s"}[quiet == 1], map[bool]string{true: "is", false: "are"}[quiet == 1])
	}
	for _, n := range tl.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	writeWarningsNote(&b, warnings)
	b.WriteString("\n" + outcome)
	fmt.Fprintf(&b, "   (%s)\n", tl.StopReason)
	_, err := io.WriteString(w, termsafe.String(b.String())) // module and scenario text inside
	return err
}

// stepText is one sync as the timeline prints it: with its header and pod grid (full), or only what it
// did (to tell repeated syncs apart). A sync's repeated writes fold unless verbose.
func stepText(st Step, full, verbose bool) string {
	var b strings.Builder
	if full {
		fmt.Fprintf(&b, "\n#%d +%s", st.Index, st.Offset)
	}
	if len(st.Trigger) > 0 {
		fmt.Fprintf(&b, " [%s]", strings.Join(st.Trigger, ","))
	}
	b.WriteString("\n")
	world := world.EventStrings(st.World)
	if !verbose {
		world = foldList(world)
	}
	for _, n := range world {
		fmt.Fprintf(&b, "  . %s\n", n)
	}
	if full {
		fmt.Fprintf(&b, "  pods: %s\n", wrapJoin(podGrid(st.Pods.States()), " ", 8, 8))
	}
	if len(st.Actions) == 0 {
		b.WriteString("  (no writes)\n")
	}
	acts := make([]string, len(st.Actions))
	for i, a := range st.Actions {
		acts[i] = a.String()
	}
	if !verbose {
		acts = foldList(acts)
	}
	for _, a := range acts {
		fmt.Fprintf(&b, "  %s\n", a)
	}
	if st.Requeue > 0 {
		fmt.Fprintf(&b, "  requeue after %ss\n", trimFloat(st.Requeue))
	}
	if st.Error != "" && !st.errorHeld {
		fmt.Fprintf(&b, "  error: %s\n", oneLine(st.Error))
	}
	if verbose {
		for i, ev := range st.Events {
			if i < len(st.holdEvent) && st.holdEvent[i] {
				continue // a held write's refusal: its hold says it (-o json has the event)
			}
			fmt.Fprintf(&b, "  event: %s\n", oneLine(ev))
		}
	}
	return b.String()
}

// writeWarnings writes the warnings of a replay's or a preview's text, each once, near its top: what can fail
// a CI job is said first.
func writeWarnings(b *strings.Builder, ws []Warning) {
	if len(ws) == 0 {
		return
	}
	b.WriteString("warnings:\n")
	for _, w := range ws {
		fmt.Fprintf(b, "  ! %s\n", wrapJoin(strings.Fields(w.Message), " ", 4, 4))
	}
}

// writeWarningsNote ends a text whose warnings writeWarnings wrote with one line naming their codes (how many
// of a code, when several), where a CI log is read: its end, without the warnings said again.
func writeWarningsNote(b *strings.Builder, ws []Warning) {
	var codes []string
	count := map[string]int{}
	for _, w := range ws {
		if count[w.Code]++; count[w.Code] == 1 {
			codes = append(codes, w.Code)
		}
	}
	if len(codes) == 0 {
		return
	}
	for i, c := range codes {
		if count[c] > 1 {
			codes[i] = fmt.Sprintf("%s (%d)", c, count[c])
		}
	}
	const head = "warnings above: "
	fmt.Fprintf(b, "%s%s\n", head, wrapJoin(codes, ", ", len(head), 2))
}

// oneLine keeps module and policy text on its line: line breaks (\n, \r) become spaces, so no text can
// start a line of its own (termsafe escapes what is left).
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "\n\r") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

func trimFloat(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", f), "0"), ".")
}

// Elapsed is the virtual time a step happened at, from the start.
func (s Step) Elapsed() time.Duration { return s.Offset.D() }

// WriteJSON prints the timeline as indented JSON: json.MarshalIndent's bytes, written a step at a time. A
// timeline's steps are most of it (a 1000-pod creation's is over 100 MB), and marshalling it whole held the
// compact encoding, the indented copy and the writer's buffer of it at once.
func (tl *Timeline) WriteJSON(w io.Writer) error {
	head, tail, err := tl.jsonAroundSteps()
	if err != nil {
		return err
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	switch {
	case tl.Steps == nil:
		_, err = io.WriteString(w, "null")
	case len(tl.Steps) == 0:
		_, err = io.WriteString(w, "[]")
	default:
		err = writeStepsJSON(w, tl.Steps)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(append(tail, '\n'))
	return err
}

// stepsMember is the steps' member of the timeline as json.MarshalIndent writes it with no steps: the only
// member at the top level's indent whose key is "steps" (a raw newline is never inside a JSON string).
const stepsMember = "\n  \"steps\": null"

// jsonAroundSteps is the timeline's indented JSON before its steps' value and after it.
func (tl *Timeline) jsonAroundSteps() (head, tail []byte, err error) {
	rest := *tl
	rest.Steps = nil
	b, err := json.MarshalIndent(&rest, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	i := bytes.Index(b, []byte(stepsMember))
	if i < 0 || bytes.Count(b, []byte(stepsMember)) != 1 {
		return nil, nil, fmt.Errorf("replay: the timeline's JSON has no single steps member")
	}
	at := i + len(stepsMember) - len("null")
	return b[:at], b[at+len("null"):], nil
}

// writeStepsJSON writes the steps as the elements of the timeline's indented steps array, one at a time: each
// encoded (Step.appendJSON) and indented (appendIndented) into buffers the steps share.
func writeStepsJSON(w io.Writer, steps []Step) error {
	const indent = "    " // an element of a member of the top level
	var compact, out []byte
	for i := range steps {
		out = out[:0]
		if i == 0 {
			out = append(out, '[')
		} else {
			out = append(out, ',')
		}
		out = append(out, "\n"+indent...)
		var ok bool
		if compact, ok = steps[i].appendJSON(compact[:0]); ok {
			out = appendIndented(out, compact, indent, "  ")
		} else {
			// what encoding/json refuses (a plan that is not JSON, a number that is not finite): its error
			b, err := json.MarshalIndent(&steps[i], indent, "  ")
			if err != nil {
				return err
			}
			out = append(out, b...)
		}
		if i == len(steps)-1 {
			out = append(out, "\n  ]"...)
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return nil
}

// appendJSON appends the step as json.Marshal encodes it, its grid and plans without reflection; ok is false
// where encoding/json fails.
func (s *Step) appendJSON(b []byte) (_ []byte, ok bool) {
	b = append(b, `{"step":`...)
	b = strconv.AppendInt(b, int64(s.Index), 10)
	b = append(b, `,"segment":`...)
	b = strconv.AppendInt(b, int64(s.Segment), 10)
	b = append(b, `,"time":`...)
	b = jsonv.AppendString(b, s.Time)
	b = append(b, `,"offset":`...)
	b = jsonv.AppendString(b, s.Offset.String())
	b = append(b, `,"offsetSeconds":`...)
	var err error
	if b, err = appendFloat(b, s.OffsetSeconds); err != nil {
		return b, false
	}
	if len(s.Trigger) > 0 {
		b = appendStrings(append(b, `,"trigger":`...), s.Trigger)
	}
	if len(s.World) > 0 {
		if b, ok = appendMarshal(append(b, `,"world":`...), s.World); !ok {
			return b, false
		}
	}
	b = s.Pods.appendJSON(append(b, `,"pods":`...))
	if b, ok = appendMarshal(append(b, `,"actions":`...), s.Actions); !ok {
		return b, false
	}
	if s.Requeue != 0 {
		if b, err = appendFloat(append(b, `,"requeueAfterSeconds":`...), s.Requeue); err != nil {
			return b, false
		}
	}
	if s.Error != "" {
		b = jsonv.AppendString(append(b, `,"error":`...), s.Error)
	}
	if len(s.Events) > 0 {
		b = appendStrings(append(b, `,"events":`...), s.Events)
	}
	b = jsonv.AppendString(append(b, `,"status":`...), s.Revisions)
	if b, ok = appendRaw(append(b, `,"plan":`...), s.Plan, 1); !ok {
		return b, false
	}
	if len(s.Replanned) > 0 {
		if b, ok = appendRaw(append(b, `,"replanned":`...), s.Replanned, 1); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// appendStrings appends ss as json.Marshal encodes a []string.
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonv.AppendString(b, s)
	}
	return append(b, ']')
}

// appendMarshal appends json.Marshal's encoding of v.
func appendMarshal(b []byte, v any) ([]byte, bool) {
	enc, err := json.Marshal(v)
	return append(b, enc...), err == nil
}
