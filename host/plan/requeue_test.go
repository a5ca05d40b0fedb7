package plan_test

import (
	"math"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/plan"
)

// Regression (issue 32, finding 4): a requeueAfterSeconds of about 9.22e9 or more wrapped to a negative
// duration, which the work queue took as "requeue now"; the extended module makes such a value at the
// largest recover-stuck-after.
func TestRequeueAfterNeverWraps(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want time.Duration
	}{
		{0, 0}, {-1, 0}, {math.NaN(), 0}, {1.5, 1500 * time.Millisecond},
		{9.22e9, time.Duration(9.22e9 * float64(time.Second))},
		{9.3e9, time.Duration(math.MaxInt64)}, {1e300, time.Duration(math.MaxInt64)}, {math.Inf(1), time.Duration(math.MaxInt64)},
	} {
		if got := plan.RequeueAfter(c.s); got != c.want || got < 0 {
			t.Errorf("RequeueAfter(%g) = %v, want %v", c.s, got, c.want)
		}
	}
}
