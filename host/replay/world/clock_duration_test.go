package world

import (
	"strings"
	"testing"
	"time"
)

// A duration in seconds a time.Duration cannot hold is refused as such, not wrapped into a negative one.
func TestDurationBeyondInt64(t *testing.T) {
	for _, in := range []string{`1e20`, `"1e20"`, `-1e20`, `9223372037`} {
		var d Duration
		err := d.UnmarshalJSON([]byte(in))
		if err == nil || !strings.Contains(err.Error(), "beyond 2562047h47m16.854775807s") {
			t.Errorf("%s: %v, %v", in, time.Duration(d), err)
		}
	}
	for in, want := range map[string]time.Duration{`1.5`: 1500 * time.Millisecond, `"2s"`: 2 * time.Second, `"0.25"`: 250 * time.Millisecond, `9223372036`: 9223372036 * time.Second} {
		var d Duration
		if err := d.UnmarshalJSON([]byte(in)); err != nil || time.Duration(d) != want {
			t.Errorf("%s: %v, %v; want %v", in, time.Duration(d), err, want)
		}
	}
}
