// Package deadline reads the value of extension progress-deadline's ordinal.dev/progress-deadline-seconds:
// the module (guest/statefulset) and the hosts (host/kube) read it with this one function, so they never
// disagree about which values set a deadline.
package deadline

import "strconv"

// MaxSeconds is the longest deadline taken: about 34 years (a Deployment's int32 progressDeadlineSeconds,
// halved for the arithmetic on it).
const MaxSeconds = 1 << 30

// Seconds reads a deadline: a whole number of seconds from 1 to MaxSeconds, in decimal; ok is false for
// anything else.
func Seconds(v string) (n int64, ok bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > MaxSeconds {
		return 0, false
	}
	return n, true
}
