// Command window is a policy module (abi/POLICY.md): a set's pods are deleted — replaced by a rollout,
// removed by a scale-down — only inside its maintenance windows and while a health signal the host fetched
// holds. Creations are never held: a missing pod is always put back. An in-place update of a pod (the
// extended module's pod-update-policy: its containers restart) is held as its delete would be, by its first
// write (abi/POLICY.md section 2.1).
//
// The set chooses with annotations (times are UTC):
//
//	window.ordinal.dev/allow:  Sat-Sun 02:00-06:00, Wed 22:00-02:00   windows: [DAY[-DAY] ]HH:MM-HH:MM, comma-separated;
//	                                                                  an end at or before the start runs past midnight
//	window.ordinal.dev/signal: db-healthy                             deletes wait while the host's signal is not true
//
// A value the policy cannot read holds every delete (with a message saying why) rather than let a rollout
// run outside the window someone meant to set.
package main

import (
	"errors"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/policies/kit"
)

const (
	annotationAllow  = "window.ordinal.dev/allow"
	annotationSignal = "window.ordinal.dev/signal"
	signalRetry      = 30 * time.Second
	maxRetry         = 24 * time.Hour
)

func main() {}

func decide(in *kit.Input) ([]kit.Hold, error) {
	ann := in.Set().Get("metadata.annotations")
	allow, signal := ann.Get(gjson.Escape(annotationAllow)), ann.Get(gjson.Escape(annotationSignal))
	if !allow.Exists() && !signal.Exists() {
		return nil, nil
	}
	reason, message, retry := "", "", time.Duration(0)
	if allow.Exists() {
		windows, err := parseWindows(allow.String())
		switch {
		case err != nil:
			reason, message, retry = "InvalidWindow", annotationAllow+" "+q(allow.String())+": "+err.Error(), time.Minute
		default:
			if open, next := windowAt(windows, in.Now); !open {
				reason, message = "OutsideWindow", "outside the maintenance window "+allow.String()+" (UTC); it opens at "+next.Format(time.RFC3339)
				retry = min(next.Sub(in.Now), maxRetry)
			}
		}
	}
	if reason == "" && signal.Exists() {
		name := signal.String()
		switch v := in.Signal(name); {
		case !v.Exists():
			reason, message, retry = "SignalUnknown", "the host supplies no signal "+q(name), signalRetry
		case v.Type != gjson.True && !(v.Type == gjson.String && v.String() == "true"):
			shown := v.Raw
			if v.Type == gjson.String {
				shown = q(v.String())
			}
			reason, message, retry = "SignalNotTrue", "signal "+q(name)+" is "+shown, signalRetry
		}
	}
	if reason == "" {
		return nil, nil
	}
	var holds []kit.Hold
	for _, d := range in.Disruptions() {
		if d.Index >= in.From && d.Errors.String() == "" {
			holds = append(holds, kit.Hold{Action: d.Index, Reason: reason, Message: message, RetryAfter: retry})
		}
	}
	return holds, nil
}

// window is one allowed span: on days (a bit per weekday, Sunday 0), from start for length.
type window struct {
	days          uint8
	start, length time.Duration
}

var dayNames = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// q quotes a value in a message (kit.Evaluate escapes what JSON must): the same in every build of the policy.
func q(s string) string { return `"` + s + `"` }

// fields splits on ASCII white space only, as the AssemblyScript build does.
func fields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' })
}

func trimASCII(s string) string { return strings.Trim(s, " \t\n\r\v\f") }

func parseWindows(s string) ([]window, error) {
	var out []window
	for _, part := range strings.Split(s, ",") {
		fs := fields(part)
		w := window{days: 0x7f}
		switch len(fs) {
		case 1:
		case 2:
			d, err := parseDays(fs[0])
			if err != nil {
				return nil, err
			}
			w.days = d
			fs = fs[1:]
		default:
			return nil, errors.New("a window is [DAY[-DAY] ]HH:MM-HH:MM, not " + q(trimASCII(part)))
		}
		from, to, ok := strings.Cut(fs[0], "-")
		start, err1 := parseClock(from)
		end, err2 := parseClock(to)
		if !ok || err1 != nil || err2 != nil {
			return nil, errors.New("a span is HH:MM-HH:MM, not " + q(fs[0]))
		}
		w.start, w.length = start, end-start
		if w.length <= 0 {
			w.length += 24 * time.Hour
		}
		out = append(out, w)
	}
	return out, nil
}

func parseDays(s string) (uint8, error) {
	from, to, isRange := strings.Cut(s, "-")
	a, b := dayIndex(from), dayIndex(to)
	if !isRange {
		b = a
	}
	if a < 0 || b < 0 {
		return 0, errors.New("days are Mon, Tue, Wed, Thu, Fri, Sat, Sun or a range like Sat-Sun, not " + q(s))
	}
	var d uint8
	for i := a; ; i = (i + 1) % 7 {
		d |= 1 << i
		if i == b {
			return d, nil
		}
	}
}

// dayIndex folds ASCII case only, as the AssemblyScript build does.
func dayIndex(s string) int {
	for i, n := range dayNames {
		if len(s) == len(n) && asciiLower(s) == asciiLower(n) {
			return i
		}
	}
	return -1
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// digits reads a run of ASCII digits (no sign), -1 when it is not one.
func digits(s string) int {
	if s == "" || len(s) > 9 {
		return -1
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func parseClock(s string) (time.Duration, error) {
	h, m, ok := strings.Cut(s, ":")
	hh, mm := digits(h), digits(m)
	if !ok || hh < 0 || mm < 0 || len(m) != 2 || hh > 24 || mm > 59 || (hh == 24 && mm != 0) {
		return 0, errors.New("bad time")
	}
	return time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute, nil
}

// windowAt says whether now is inside a window, and else when the next one opens.
func windowAt(windows []window, now time.Time) (open bool, next time.Time) {
	now = now.UTC()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	for day := -1; day <= 7; day++ { // a window that began yesterday may still be open
		d := midnight.AddDate(0, 0, day)
		for _, w := range windows {
			if w.days&(1<<int(d.Weekday())) == 0 {
				continue
			}
			from := d.Add(w.start)
			if !now.Before(from) && now.Before(from.Add(w.length)) {
				return true, time.Time{}
			}
			if from.After(now) && (next.IsZero() || from.Before(next)) {
				next = from
			}
		}
	}
	return false, next
}
