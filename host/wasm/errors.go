package wasm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/sys"
)

// Error kinds. Every error from this package that concerns the module wraps
// exactly one of them, so callers can use errors.Is to tell them apart.
var (
	// ErrBadModule: the wasm cannot be used (invalid, missing exports, unknown
	// imports, unreadable describe output, output out of bounds).
	ErrBadModule = errors.New("bad module")
	// ErrUnsupportedABI: the module describes an ABI version other than abi.Version.
	// Errors of this kind also match ErrBadModule.
	ErrUnsupportedABI = errors.New("unsupported ABI")
	// ErrTimeout: the call ran longer than Config.Timeout or the caller's deadline.
	ErrTimeout = errors.New("timeout")
	// ErrCanceled: the caller's context was canceled.
	ErrCanceled = errors.New("canceled")
	// ErrTrap: the guest trapped (e.g. a Go panic, which TinyGo turns into
	// unreachable) or exited.
	ErrTrap = errors.New("trap")
	// ErrOutOfMemory: the guest ran out of memory under Config.MemoryLimitPages,
	// or the snapshot cannot fit in it.
	ErrOutOfMemory = errors.New("out of memory")
	// ErrClosed: the Module was closed.
	ErrClosed = errors.New("module closed")
)

// Error is what a failed call returns: the operation, what happened, and the
// tail of what the guest printed (TinyGo prints panic messages to stdout).
type Error struct {
	Kind   error  // one of the Err* sentinels above
	Op     string // "load", "instantiate", "describe" or "reconcile"
	Path   string // "direct" or "extism"; empty for load
	Msg    string // what happened, e.g. "module trapped: unreachable"
	Output string // last bytes the guest wrote to stdout/stderr during the call, if any
	Err    error  // underlying wazero / extism error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("ordinal module")
	if e.Path != "" {
		b.WriteString(" (" + e.Path + " path)")
	}
	b.WriteString(": ")
	if e.Op != "" {
		b.WriteString(e.Op)
		// "reconcile exceeded 2s timeout" reads better than "reconcile: exceeded ...".
		if strings.HasPrefix(e.Msg, "exceeded ") {
			b.WriteString(" ")
		} else {
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Msg)
	if e.Output != "" {
		b.WriteString(" (guest output: ")
		b.WriteString(e.Output)
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap exposes both the kind and the cause to errors.Is / errors.As.
func (e *Error) Unwrap() []error {
	errs := []error{e.Kind}
	if e.Kind == ErrUnsupportedABI {
		errs = append(errs, ErrBadModule)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

func badModule(op, format string, args ...any) *Error {
	return &Error{Kind: ErrBadModule, Op: op, Msg: fmt.Sprintf(format, args...)}
}

// timeoutCause marks contexts whose deadline is ours (Config.Timeout), so a
// timeout can say which limit it hit.
type timeoutCause struct{ limit string }

func (t *timeoutCause) Error() string { return "exceeded " + t.limit + " timeout" }

// classify turns an error from calling into the guest into an *Error.
// ctx is the call's context, output what the guest printed during the call.
func classify(ctx context.Context, op, path string, err error, output string) *Error {
	e := &Error{Op: op, Path: path, Err: err, Output: strings.TrimSpace(output)}
	var stub *stubCalledError
	var exit *sys.ExitError
	var budget *budgetSpentError
	switch {
	case errors.As(err, &stub):
		e.Kind, e.Msg = ErrTrap, stub.Error()
	case errors.As(err, &budget):
		e.Kind, e.Msg = ErrTimeout, budget.Error()
	// Only the call's context says a call timed out or was canceled: a guest can exit with any code,
	// wazero's own "deadline exceeded" code included (proc_exit(0xefffffff) once read as a timeout).
	case (errors.Is(ctx.Err(), context.DeadlineExceeded) || ctx.Err() == nil && expired(ctx)) &&
		(errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded || errors.Is(err, context.DeadlineExceeded)):
		e.Kind, e.Msg = ErrTimeout, "exceeded the caller's deadline"
		var tc *timeoutCause
		if errors.As(context.Cause(ctx), &tc) {
			e.Msg = tc.Error()
		}
	case errors.Is(ctx.Err(), context.Canceled) &&
		(errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeContextCanceled || errors.Is(err, context.Canceled)):
		e.Kind, e.Msg = ErrCanceled, "call canceled by the caller"
	case errors.As(err, &exit):
		e.Kind, e.Msg = ErrTrap, fmt.Sprintf("module exited with code %d", exit.ExitCode())
	default:
		e.Kind, e.Msg = ErrTrap, "module trapped: "+trapReason(err)
	}
	// TinyGo and Go both print heap exhaustion before trapping/exiting.
	if e.Kind == ErrTrap && strings.Contains(e.Output, "out of memory") {
		e.Kind, e.Msg = ErrOutOfMemory, "module ran out of memory ("+e.Msg+")"
	}
	return e
}

// trapReason extracts "unreachable" from wazero's
// "wasm error: unreachable\nwasm stack trace: ...".
func trapReason(err error) string {
	msg := err.Error()
	msg, _, _ = strings.Cut(msg, "\n")
	msg = strings.TrimPrefix(msg, "wasm error: ")
	return msg
}
