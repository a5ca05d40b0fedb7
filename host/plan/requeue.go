package plan

import (
	"math"
	"time"
)

// maxRequeueSeconds is the longest requeue a time.Duration holds (about 292 years).
const maxRequeueSeconds = float64(math.MaxInt64) / float64(time.Second)

// RequeueAfter is a plan's requeueAfterSeconds as a duration: 0 for none, and the longest duration for a
// delay past it (9.3e9 s and more would wrap to a negative duration, which a work queue takes as "now").
func RequeueAfter(seconds float64) time.Duration {
	switch {
	case !(seconds > 0): // 0, negative, NaN (Decode refuses the last two)
		return 0
	case seconds >= maxRequeueSeconds:
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(seconds * float64(time.Second))
}
