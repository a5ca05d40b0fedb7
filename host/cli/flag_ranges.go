package cli

import (
	"fmt"
	"math"
	"time"
)

// The ranges of the numeric flags of the commands that run (controller, webhook) or reach a cluster,
// checked before anything loads or connects: a value past them costs memory or time in proportion
// (--shards 1000000 made a Lease per shard and grew to 3 GB), is silently replaced by a default (a
// webhook's --max-connections 0 or --preview-timeout -1s), or makes client-go refuse it later. Each flag's
// help names its range; these are the one place that checks it.

// rangeCheck is one flag's check: nil when its value is in range.
type rangeCheck func() error

// firstOutOfRange is the first of checks to fail, in the order given (the flags' order in --help).
func firstOutOfRange(checks ...rangeCheck) error {
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

// intIn checks lo <= v <= hi.
func intIn[T int | int32 | int64](flag string, v, lo, hi T) rangeCheck {
	return func() error {
		if v < lo || v > hi {
			return fmt.Errorf("%s %d: must be from %d to %d", flag, v, lo, hi)
		}
		return nil
	}
}

// durationIn checks a duration is positive (or 0, when zeroOK: the flag says what 0 does) and at most most
// (0: no upper bound).
func durationIn(flag string, v time.Duration, zeroOK bool, most time.Duration) rangeCheck {
	return func() error {
		switch {
		case v < 0 || v == 0 && !zeroOK:
			want := "a positive duration"
			if zeroOK {
				want = "0 or a positive duration"
			}
			return fmt.Errorf("%s %s: must be %s", flag, v, want)
		case most > 0 && v > most:
			return fmt.Errorf("%s %s: must be at most %s", flag, v, most)
		}
		return nil
	}
}

// rateIn checks a rate is a number more than 0 and at most hi (NaN and infinities are not).
func rateIn(flag string, v float32, hi float64) rangeCheck {
	return func() error {
		if f := float64(v); math.IsNaN(f) || f <= 0 || f > hi {
			return fmt.Errorf("%s %v: must be more than 0 and at most %v", flag, v, hi)
		}
		return nil
	}
}
