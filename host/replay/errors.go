package replay

import (
	"errors"
	"fmt"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/replay/world"
)

// The ways a replay fails, told apart by type so every command maps them to the same exit code: the
// scenario or its world is invalid (InvalidWorldError), a preview's edit is one the API server would refuse
// (RefusedEditError), the module rejected a snapshot of the world (RejectedError), or the module itself
// failed (the wasm or plan error, wrapped as it came).

// InvalidWorldError says a scenario, or the world it builds, is not what an API server would hold.
type InvalidWorldError struct{ Err error }

func (e *InvalidWorldError) Error() string { return "invalid world: " + e.Err.Error() }
func (e *InvalidWorldError) Unwrap() error { return e.Err }

func invalidWorld(format string, args ...any) error {
	return &InvalidWorldError{Err: fmt.Errorf(format, args...)}
}

// RefusedEditError says a preview's edit is one the API server would refuse (changing an immutable field, a
// negative partition, ...): nothing is replayed, and the message is the API server's. The world is fine;
// "invalid world" sent a newcomer looking for what was wrong with the snapshot.
type RefusedEditError struct{ Err error }

func (e *RefusedEditError) Error() string {
	msg := e.Err.Error()
	var ae *world.APIError
	if errors.As(e.Err, &ae) {
		msg = ae.Message // "StatefulSet.apps "web" is invalid: ...", kubectl's wording, without "Invalid: "
	}
	return "the API server would refuse this edit: " + msg
}
func (e *RefusedEditError) Unwrap() error { return e.Err }

// RejectedError says the module rejected the snapshot the replay built at a step (its error plan).
type RejectedError struct {
	Step int
	Plan *abi.Error
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("step %d: the module rejected the world: %s", e.Step, e.Plan.Error())
}
