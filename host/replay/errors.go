package replay

import (
	"fmt"

	"github.com/ordinal-dev/ordinal/abi"
)

// The three ways a replay fails, told apart by type so every command maps them to the same exit code:
// the scenario or its world is invalid (InvalidWorldError), the module rejected a snapshot of the world
// (RejectedError), or the module itself failed (the wasm or plan error, wrapped as it came).

// InvalidWorldError says a scenario, or the world it builds, is not what an API server would hold.
type InvalidWorldError struct{ Err error }

func (e *InvalidWorldError) Error() string { return "invalid world: " + e.Err.Error() }
func (e *InvalidWorldError) Unwrap() error { return e.Err }

func invalidWorld(format string, args ...any) error {
	return &InvalidWorldError{Err: fmt.Errorf(format, args...)}
}

// RejectedError says the module rejected the snapshot the replay built at a step (its error plan).
type RejectedError struct {
	Step int
	Plan *abi.Error
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("step %d: the module rejected the world: %s", e.Step, e.Plan.Error())
}
