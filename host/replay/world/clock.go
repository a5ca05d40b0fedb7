package world

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Clock is the replay's virtual time. Nothing in a replay reads the wall clock, so a rollout of
// hours replays in milliseconds and always gives the same timeline.
type Clock struct{ now time.Time }

// NewClock starts virtual time at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t.UTC()} }

// Now is the current virtual time.
func (c *Clock) Now() time.Time { return c.now }

func (c *Clock) Set(t time.Time) {
	if t.After(c.now) {
		c.now = t
	}
}

// Timer is something scheduled in virtual time: a kubelet transition or a controller requeue.
type Timer struct {
	at   time.Time
	seq  int // insertion order breaks ties, so simultaneous timers fire in a fixed order
	what string
	fire func()
}

// Timers is a small priority queue ordered by (at, seq).
type Timers struct {
	list []*Timer
	seq  int
}

func (t *Timers) add(at time.Time, what string, fire func()) {
	t.seq++
	t.list = append(t.list, &Timer{at: at, seq: t.seq, what: what, fire: fire})
	sort.SliceStable(t.list, func(i, j int) bool {
		if !t.list[i].at.Equal(t.list[j].at) {
			return t.list[i].at.Before(t.list[j].at)
		}
		return t.list[i].seq < t.list[j].seq
	})
}

// next is the time of the earliest timer.
func (t *Timers) Next() (time.Time, bool) {
	if len(t.list) == 0 {
		return time.Time{}, false
	}
	return t.list[0].at, true
}

// PopDue removes and returns the timers due at or before now, in order.
func (t *Timers) PopDue(now time.Time) []*Timer {
	i := 0
	for i < len(t.list) && !t.list[i].at.After(now) {
		i++
	}
	due := t.list[:i:i]
	t.list = t.list[i:]
	return due
}

func (t *Timers) pending() int { return len(t.list) }

// Duration is a time.Duration that reads from YAML/JSON as "90s", "2m30s" or a number of seconds.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return FormatDuration(time.Duration(d)) }

// Seconds is the value in seconds: what an output puts beside the text form, as a number (offsetSeconds
// beside offset), so a program reads no duration text.
func (d Duration) Seconds() float64 { return time.Duration(d).Seconds() }

// MarshalJSON writes the Go duration form ("1m30s").
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON accepts a duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		v, err := time.ParseDuration(str)
		if err != nil {
			if f, ferr := strconv.ParseFloat(str, 64); ferr == nil {
				return d.setSeconds(f, strconv.Quote(str))
			}
			return fmt.Errorf("bad duration %q: %w", str, err)
		}
		*d = Duration(v)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("bad duration %s", s)
	}
	return d.setSeconds(f, s)
}

// setSeconds is a duration given in seconds; one a time.Duration cannot hold is refused (converting it
// would wrap around, and a huge delay read as a negative one).
func (d *Duration) setSeconds(f float64, as string) error {
	ns := f * float64(time.Second)
	if math.IsNaN(ns) || ns >= math.MaxInt64 || ns <= math.MinInt64 {
		return fmt.Errorf("bad duration %s: beyond %s, the longest a duration can be", as, time.Duration(math.MaxInt64))
	}
	*d = Duration(ns)
	return nil
}

// FormatDuration prints a duration compactly: 0s, 5s, 1m30s, 2h5s, 1.5s.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	var b strings.Builder
	if d < 0 {
		b.WriteByte('-')
		d = -d
	}
	h := d / time.Hour
	d -= h * time.Hour
	m := d / time.Minute
	d -= m * time.Minute
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if d > 0 {
		b.WriteString(strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s")
	}
	return b.String()
}

// NonNegative refuses a negative time in a scenario: every time there is an offset or a delay.
func NonNegative(d *Duration, path string) error {
	if d != nil && *d < 0 {
		return fmt.Errorf("%s: %s is negative; times in a scenario are offsets and delays", path, d)
	}
	return nil
}

// Fire runs what the timer was set for.
func (t *Timer) Fire() { t.fire() }
