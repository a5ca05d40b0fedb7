//go:build e2e

package e2e

// The soak's verdict (soak_test.go, `make soak`): whether a series sampled from the controller while it
// works (RSS, goroutines, open file descriptors) is flat or grows. The rule, by trend and not by wall
// clock: split the series in halves; it leaks when the line fitted to the second half still rises, across
// that half, by more than the metric's tolerance of the first half's median (a fraction plus an absolute
// floor), and the second half's median is above the first's. A warm-up (caches filling) rises in the
// first half and levels off; a leak keeps rising in the second.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// soakTolerance is how much a series may still rise across the second half: frac of the first half's
// median, plus abs (in the series' unit: MiB for RSS, soakUnit).
type soakTolerance struct {
	frac, abs float64
}

var soakTolerances = map[string]soakTolerance{
	"process_resident_memory_bytes": {frac: 0.10, abs: 8},
	"go_goroutines":                 {frac: 0.10, abs: 10},
	"process_open_fds":              {frac: 0.10, abs: 5},
}

// soakUnit is what a metric's samples are divided by for its series: RSS in MiB.
var soakUnit = map[string]float64{"process_resident_memory_bytes": 1 << 20, "go_goroutines": 1, "process_open_fds": 1}

// minSoakSamples is the fewest samples a verdict is made from (three a half).
const minSoakSamples = 6

type soakVerdict struct {
	Flat           bool
	Median1        float64 // the first half's median
	Median2        float64
	Slope1, Slope2 float64 // least-squares slope of each half, per sample
	Rise2          float64 // the second half's fitted rise across it
	Allowed        float64 // the tolerance of that rise
}

func (v soakVerdict) String() string {
	word := "flat"
	if !v.Flat {
		word = "LEAK"
	}
	return fmt.Sprintf("%s: median %.4g -> %.4g; slope per sample %.3g -> %.3g; rise across the second half %.4g (allowed %.4g)",
		word, v.Median1, v.Median2, v.Slope1, v.Slope2, v.Rise2, v.Allowed)
}

// judgeSoak applies the rule to one series.
func judgeSoak(series []float64, tol soakTolerance) (soakVerdict, error) {
	if len(series) < minSoakSamples {
		return soakVerdict{}, fmt.Errorf("%d samples: a verdict needs at least %d (a longer SOAK_DURATION or a shorter interval)", len(series), minSoakSamples)
	}
	h1, h2 := series[:len(series)/2], series[len(series)/2:]
	v := soakVerdict{Median1: median(h1), Median2: median(h2), Slope1: slope(h1), Slope2: slope(h2)}
	v.Rise2 = v.Slope2 * float64(len(h2)-1)
	v.Allowed = tol.frac*v.Median1 + tol.abs
	v.Flat = !(v.Rise2 > v.Allowed && v.Median2 > v.Median1)
	return v, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// slope is the least-squares slope of xs against their index.
func slope(xs []float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i, y := range xs {
		x := float64(i)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

// The rule on made-up series: noise, a warm-up and a step are flat; steady growth, even slow or noisy,
// is a leak; too few samples are no verdict.
func TestSoakVerdict(t *testing.T) {
	t.Parallel()
	rss := soakTolerances["process_resident_memory_bytes"]
	const mib = 1 // RSS series are in MiB
	gen := func(n int, f func(i int) float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	noise := func(i int) float64 { return float64((i*7919)%11-5) * mib } // ±5 MiB, deterministic
	cases := []struct {
		name   string
		series []float64
		flat   bool
	}{
		{"flat with noise", gen(30, func(i int) float64 { return 120*mib + noise(i) }), true},
		{"warm-up, then flat", gen(30, func(i int) float64 { return 120*mib + float64(min(i, 8))*10*mib + noise(i) }), true},
		{"a step up, then flat", gen(30, func(i int) float64 {
			if i >= 15 {
				return 160*mib + noise(i)
			}
			return 120*mib + noise(i)
		}), true},
		{"a leak of 2 MiB a sample", gen(30, func(i int) float64 { return 120*mib + float64(i)*2*mib + noise(i) }), false},
		{"a leak only in the second half", gen(30, func(i int) float64 { return 120*mib + float64(max(i-15, 0))*3*mib + noise(i) }), false},
		{"falling", gen(30, func(i int) float64 { return 200*mib - float64(i)*mib + noise(i) }), true},
	}
	for _, tc := range cases {
		v, err := judgeSoak(tc.series, rss)
		if err != nil || v.Flat != tc.flat {
			t.Errorf("%s: %v %v, want flat=%v", tc.name, v, err, tc.flat)
		}
	}
	gor := soakTolerances["go_goroutines"]
	if v, _ := judgeSoak(gen(20, func(i int) float64 { return 80 + float64(i%3) }), gor); !v.Flat {
		t.Errorf("goroutines 80-82: %v", v)
	}
	if v, _ := judgeSoak(gen(20, func(i int) float64 { return 80 + float64(i)*3 }), gor); v.Flat {
		t.Errorf("goroutines +3 a sample: %v", v)
	}
	if _, err := judgeSoak([]float64{1, 2, 3, 4, 5}, rss); err == nil || !strings.Contains(err.Error(), "at least 6") {
		t.Errorf("5 samples: %v, want an error naming the minimum", err)
	}
}
