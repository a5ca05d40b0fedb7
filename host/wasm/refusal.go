package wasm

import (
	"errors"
	"time"
)

// RecheckAfter is how long a registry holds a supplied module's check that ran out of time before it
// checks the module again: long enough that a loaded machine is not loaded further by a check on every
// sync, short enough that the module is used once the machine has room.
const RecheckAfter = time.Minute

// Refusal is what a registry remembers of a supplied module whose check failed. A check that failed on
// the module's content is a verdict on its bytes, kept until they change; one that ran out of time
// (ErrTimeout, ErrCanceled: a compile or a case under a loaded machine) says nothing of them, and holds
// only until RetryAt, when the next use checks the module again.
type Refusal struct {
	Err     error
	RetryAt time.Time // zero: for good
}

// RefusalOf is err, a check's failure at now, as a registry remembers it.
func RefusalOf(err error, now time.Time) Refusal {
	if errors.Is(err, ErrTimeout) || errors.Is(err, ErrCanceled) {
		return Refusal{Err: err, RetryAt: now.Add(RecheckAfter)}
	}
	return Refusal{Err: err}
}

// Holds reports whether the refusal still stands at now.
func (r Refusal) Holds(now time.Time) bool {
	return r.Err != nil && (r.RetryAt.IsZero() || now.Before(r.RetryAt))
}
