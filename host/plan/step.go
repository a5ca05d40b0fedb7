package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
)

// Reconciler is a reconcile module as a sync calls it: snapshot JSON in, plan JSON out (ABI v1).
// *wasm.Module implements it.
type Reconciler interface {
	Reconcile(ctx context.Context, snapshot []byte) ([]byte, error)
}

// ModuleError is a module that could not answer: it failed to load, trapped, timed out, ran out of memory
// or is over a limit. The module, not the snapshot, is at fault.
type ModuleError struct{ Err error }

func (e *ModuleError) Error() string { return e.Err.Error() }
func (e *ModuleError) Unwrap() error { return e.Err }

// RejectedError is a plan whose error is not SyncFailed: the module refused the snapshot (InvalidSnapshot,
// UnsupportedABI, ...), so there is no sync to carry out.
type RejectedError struct{ Err *abi.Error }

func (e *RejectedError) Error() string { return "the module rejected the snapshot: " + e.Err.Error() }

// Call runs the module once on a snapshot and reads its answer: the plan as returned and as decoded. Its
// errors are a *ModuleError (no answer) or an *InvalidError (an answer that is not an ABI v1 plan).
func Call(ctx context.Context, m Reconciler, snapshot []byte) ([]byte, *abi.Plan, error) {
	raw, err := m.Reconcile(ctx, snapshot)
	if err != nil {
		return nil, nil, &ModuleError{Err: err}
	}
	p, err := Decode(raw)
	if err != nil {
		return raw, nil, err
	}
	return raw, p, nil
}

// Step is one sync of a set as every host runs it (the controller, the replay and through it preview and
// the webhook): the module called on the snapshot, its plan decoded and classified, the firewall, the
// writes, the module asked again after a refused write, and the events in the order they are recorded.
type Step struct {
	Module   Reconciler
	Snapshot []byte
	// WriteFailures: the module's describe says writeFailures, so a refused write goes back to it.
	WriteFailures bool
	Scope         *firewall.Scope
	Writer        Writer
	Set           string       // the set's name (events of refused writes)
	Each          func(Result) // told of every issued write (may be nil)
	// Judge: the set's policies (host/policy's Run.Judge; nil: none), Options.Judge.
	Judge func(ctx context.Context, p *abi.Plan, from int) map[int]Hold
	// Admit: what the policies' allowed writes spend, committed before each is sent (Run.Admit), Options.Admit.
	Admit func(ctx context.Context, p *abi.Plan, i int) *Hold
	// Status: the held writes recorded in the set's status (policy.HoldStatus), Options.Status.
	Status func(a *abi.Action, held []HeldWrite) *abi.Action
}

// StepResult is what a Step did.
type StepResult struct {
	FirstRaw   []byte    // the module's answer for the snapshot, as returned
	First      *abi.Plan // the same, decoded
	Raw        []byte    // the module's last answer (FirstRaw, unless it was asked again), as returned
	ModuleTime time.Duration
	Applied
}

// Run carries out the step. Its errors are typed, for each host to count and word as it does: a
// *ModuleError or *InvalidError (the module), a *RejectedError (the snapshot), a *firewall.RefusedError
// (the plan), a *WriteError (the API server). A plan whose error is SyncFailed is carried out, and the
// result says so (Plan.Error): upstream's sync returned that error after those writes.
func (s *Step) Run(ctx context.Context) (StepResult, error) {
	var res StepResult
	call := func(snapshot []byte) (*abi.Plan, error) {
		t0 := time.Now()
		raw, p, err := Call(ctx, s.Module, snapshot)
		res.ModuleTime += time.Since(t0)
		if err != nil {
			return nil, err
		}
		res.Raw = raw
		return p, nil
	}
	p, err := call(s.Snapshot)
	if err != nil {
		return res, err
	}
	res.First, res.FirstRaw, res.Plan = p, res.Raw, p
	if p.Error != nil && p.Error.Code != abi.CodeSyncFailed {
		return res, &RejectedError{Err: p.Error}
	}
	opts := Options{Set: s.Set, Each: s.Each, Judge: s.Judge, Admit: s.Admit, Status: s.Status}
	if s.WriteFailures {
		opts.Replan = func(ctx context.Context, failures []abi.WriteFailure) (*abi.Plan, error) {
			snap, err := WithWriteFailures(s.Snapshot, failures)
			if err != nil {
				return nil, err
			}
			return call(snap)
		}
	}
	res.Applied, err = Apply(ctx, s.Scope, p, s.Writer, opts)
	return res, err
}

// WithWriteFailures is the snapshot with its writeFailures set (a key appended to the object: where the
// snapshot had one, the last wins, abi/README.md section 4).
func WithWriteFailures(snapshot []byte, failures []abi.WriteFailure) ([]byte, error) {
	trimmed := bytes.TrimRight(snapshot, " \t\r\n")
	if len(trimmed) < 2 || trimmed[len(trimmed)-1] != '}' {
		return nil, errors.New("the snapshot is not a JSON object")
	}
	list, err := json.Marshal(failures)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(trimmed)+len(list)+20)
	out = append(out, trimmed[:len(trimmed)-1]...)
	if len(bytes.TrimSpace(trimmed[1:len(trimmed)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"writeFailures":`...)
	out = append(out, list...)
	return append(out, '}'), nil
}
