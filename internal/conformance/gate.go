package conformance

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Pinned returns the cases with their snapshots' gates pinned to OracleFeatures (PinFeatures): the
// form a gate runs them in.
func Pinned(cases []Case) ([]Case, error) {
	out := make([]Case, len(cases))
	for i, c := range cases {
		snap, err := PinFeatures(c.Snapshot)
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", c.Name, err)
		}
		out[i] = Case{Name: c.Name, Snapshot: snap, Plan: c.Plan}
	}
	return out, nil
}

// GateResult is the outcome of running a module over the cases.
type GateResult struct {
	Cases    int
	Failed   int
	Failures []string // the first few failures: "<case>: <difference or error>"
	Duration time.Duration
	// callErr is the first error of reconcile (a trap, a timeout) or the interruption's cause, when no
	// failure is a plan's difference: what Err wraps.
	callErr error
	differs bool
}

// Err is the result as an error (nil when every case passed), its text String's. When no failure is a
// plan's difference it wraps reconcile's first error (or the interruption's cause), so a caller tells a
// gate that ran out of time (errors.Is a timeout) from a verdict on the module's plans.
func (r GateResult) Err() error {
	if r.OK() {
		return nil
	}
	e := &gateError{text: r.String()}
	if !r.differs {
		e.err = r.callErr
	}
	return e
}

type gateError struct {
	text string
	err  error
}

func (e *gateError) Error() string { return e.text }
func (e *gateError) Unwrap() error { return e.err }

// OK reports whether every case passed.
func (r GateResult) OK() bool { return r.Failed == 0 && r.Cases > 0 }

func (r GateResult) String() string {
	if r.OK() {
		return fmt.Sprintf("all %d conformance cases passed in %s", r.Cases, r.Duration.Round(time.Millisecond))
	}
	s := fmt.Sprintf("%d of %d conformance cases failed", r.Failed, r.Cases)
	for _, f := range r.Failures {
		s += "; " + f
	}
	return s
}

// maxFailures is how many failures a GateResult describes.
const maxFailures = 3

// Gate runs every case through reconcile, parallel at a time, and compares each plan with the case's
// expected plan. It stops early after stopAfter failures (0: never); an error of reconcile (a trap, a
// timeout) is a failure of that case.
func Gate(ctx context.Context, cases []Case, reconcile func(context.Context, []byte) ([]byte, error), parallel, stopAfter int) GateResult {
	start := time.Now()
	if parallel < 1 {
		parallel = 1
	}
	var (
		mu     sync.Mutex
		res    = GateResult{Cases: len(cases)}
		next   atomic.Int64
		failed atomic.Int64
		wg     sync.WaitGroup
	)
	for w := 0; w < parallel; w++ {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cases) || ctx.Err() != nil || (stopAfter > 0 && int(failed.Load()) >= stopAfter) {
					return
				}
				c := cases[i]
				plan, err := reconcile(ctx, c.Snapshot)
				diff := ""
				switch {
				case err != nil:
					diff = err.Error()
				default:
					diff = c.Check(plan)
				}
				if diff == "" {
					continue
				}
				failed.Add(1)
				mu.Lock()
				res.Failed++
				if err == nil {
					res.differs = true
				} else if res.callErr == nil {
					res.callErr = err
				}
				if len(res.Failures) < maxFailures {
					if len(diff) > 300 {
						diff = diff[:300] + "..."
					}
					res.Failures = append(res.Failures, c.Name+": "+diff)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil && res.Failed == 0 {
		res.Failed = 1
		res.Failures = append(res.Failures, "interrupted: "+context.Cause(ctx).Error()) // the cause names the limit
		res.callErr = context.Cause(ctx)
	}
	res.Duration = time.Since(start)
	return res
}
