package policy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ordinal-dev/ordinal/host/wasm"
)

// A policy that runs out of time holds nothing back (POLICY.md), but it costs its whole timeout on every
// sync it is asked about: one looping policy named by a hundred sets would spend a worker's time on
// timeouts. After a timeout the policy is not asked again for a while — a failure at once, which holds
// nothing, as the timeout did, and says when it will be asked again — and the pause doubles with each
// timeout in a row (5 s up to 5 minutes); an answer ends it. Only the policy's own timeout counts: a caller
// whose deadline came first (a webhook review's budget) is no fault of the policy.

const (
	breakerFirst = 5 * time.Second
	breakerMax   = 5 * time.Minute
)

// ErrSkipped: the policy timed out in a row and is not asked until its pause ends.
var ErrSkipped = errors.New("skipped after timing out")

// breaker is a Module that stops asking its policy for a while after a timeout.
type breaker struct {
	Module
	now func() time.Time

	mu       sync.Mutex
	timeouts int       // in a row
	until    time.Time // not asked before
}

func (b *breaker) Evaluate(ctx context.Context, input []byte) ([]byte, error) {
	b.mu.Lock()
	if now := b.now(); now.Before(b.until) {
		n, until := b.timeouts, b.until
		b.mu.Unlock()
		return nil, fmt.Errorf("policy %s %w %d time(s) in a row: not asked again until %s (in %s)",
			b.Name(), ErrSkipped, n, until.UTC().Format(time.RFC3339), until.Sub(now).Round(time.Second))
	}
	b.mu.Unlock()
	out, err := b.Module.Evaluate(ctx, input)
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case errors.Is(err, wasm.ErrTimeout) && ctx.Err() == nil:
		b.timeouts++
		pause := breakerFirst << min(b.timeouts-1, 10)
		b.until = b.now().Add(min(pause, breakerMax))
	case err == nil:
		b.timeouts, b.until = 0, time.Time{}
	}
	return out, err
}

// OnClock is m behind a breaker of its own whose pauses run on now: a replay's virtual clock, so that which of
// a timeline's syncs ask a policy that timed out follows the timeline, not the machine's speed. The breaker
// Registry.Get put m behind (on the process's clock, and remembering the live syncs' timeouts, which a
// replay must neither read nor add to) is left out.
func OnClock(m Module, now func() time.Time) Module {
	if b, ok := m.(*breaker); ok {
		m = b.Module
	}
	return &breaker{Module: m, now: now}
}

// guarded is p behind its breaker, the same one for every Get (a breaker's memory is the policy's).
func (r *Registry) guarded(p *wasm.Policy) Module {
	r.bmu.Lock()
	defer r.bmu.Unlock()
	if r.breakers == nil {
		r.breakers = map[*wasm.Policy]*breaker{}
	}
	b := r.breakers[p]
	if b == nil {
		now := r.now
		if now == nil {
			now = time.Now
		}
		b = &breaker{Module: p, now: now}
		r.breakers[p] = b
	}
	return b
}

// forget drops a policy's breaker when the policy is replaced: its timeouts were that module's.
func (r *Registry) forget(p *wasm.Policy) {
	r.bmu.Lock()
	delete(r.breakers, p)
	r.bmu.Unlock()
}
