package wasm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/singleflight"
)

// GateTimeout bounds one check of a module supplied at run time (Gates.Do): the conformance gate takes
// about a second, so a check still running after this long is the module's doing, and is its verdict.
const GateTimeout = 10 * time.Minute

// ErrStillChecking is Gates.Do's error for a caller that stopped waiting (its deadline or cancel) while
// the check goes on; the next caller gets its verdict.
var ErrStillChecking = errors.New("still being checked")

// Gates runs the checks of modules supplied at run time (the controller's conformance gate, a policy's
// fixtures), one at a time per key. A check runs on a context of its own, bounded by GateTimeout and
// never by a caller's deadline: a caller that runs out of time (a webhook review's 3 s) is not the
// module's fault, so it stops that caller's wait and never the check, and what the check returns is a
// verdict about the module alone, which the registries keep.
type Gates struct {
	flight singleflight.Group
}

// Do runs check for key, or joins the run under way, and waits for it while ctx lasts; past that it
// returns an error wrapping ErrStillChecking and ctx's cause, and the check goes on. check gets ctx's
// values, not its deadline or cancel; it keeps its own verdict, since no caller may be left to.
func (g *Gates) Do(ctx context.Context, key string, check func(ctx context.Context) (any, error)) (any, error) {
	ch := g.flight.DoChan(key, func() (any, error) {
		gctx, cancel := context.WithTimeoutCause(context.WithoutCancel(ctx), GateTimeout,
			&timeoutCause{limit: "the gate's " + GateTimeout.String()})
		defer cancel()
		return check(gctx)
	})
	select {
	case r := <-ch:
		return r.Val, r.Err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w (the check goes on; this caller stopped waiting: %w)", ErrStillChecking, context.Cause(ctx))
	}
}
