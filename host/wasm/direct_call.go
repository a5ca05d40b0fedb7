package wasm

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

const pathDirect = "direct"

// directInstance is one instance of the module called through the direct
// exports: the host writes the snapshot straight into a guest buffer and reads
// the plan straight out, with no host functions involved.
type directInstance struct {
	mod                         api.Module
	mem                         api.Memory
	alloc, reconcile, describer api.Function
	interrupt                   interruptGlobals // the call's work budget and the host's stop flag
	interrupted                 bool             // the flag was set: never reuse the instance
	policy                      bool             // a policy's: reconcile is its ordinal_evaluate
	output                      *tailBuffer
	calls                       int
	id                          uint64 // unique in the process: a Session knows its instance by it
	firstPages                  uint32 // memory after its first call (keepAfter)
}

// instanceIDs numbers direct instances (an address may be reused once an instance is gone).
var instanceIDs atomic.Uint64

// interruptGlobals are an instance's globals that instrumentInterrupts added.
type interruptGlobals struct {
	budget api.MutableGlobal // the work left to the call; the guest counts it down
	stop   api.MutableGlobal // the host sets it to 1 to stop the call at its next check
}

// interruptGlobalsOf finds the globals instrumentInterrupts added to mod.
func interruptGlobalsOf(mod api.Module) (interruptGlobals, bool) {
	budget, ok1 := mod.ExportedGlobal(interruptExport).(api.MutableGlobal)
	stop, ok2 := mod.ExportedGlobal(stopExport).(api.MutableGlobal)
	return interruptGlobals{budget, stop}, ok1 && ok2
}

// guard runs one export call with its work budget set and ctx's end and the module's Close wired to
// its stop flag. An interrupted call's error is the context's, so it classifies as a timeout or
// cancellation; a call that spent its budget is a budgetSpentError (a timeout too).
func (m *Module) guard(ctx context.Context, g interruptGlobals, interrupted *bool, call func() error) error {
	g.budget.Set(uint64(m.cfg.WorkBudget))
	g.stop.Set(0)
	stop := func() { g.stop.Set(1) }
	stopCall, stopClose := context.AfterFunc(ctx, stop), context.AfterFunc(m.life, stop)
	err := call()
	firedCall, firedClose := !stopCall(), !stopClose()
	switch {
	// The deadline (or cancel) may pass while the call runs without its stop having run yet: on a loaded
	// machine the goroutine that sets the flag can wait for a thread longer than the work budget lasts.
	// A call that ends after the caller's deadline reports the deadline, whichever limit stopped it.
	case firedCall || firedClose || err != nil && expired(ctx):
		*interrupted = true
		if err != nil && expired(ctx) {
			cause := ctx.Err()
			if cause == nil {
				cause = context.DeadlineExceeded
			}
			err = fmt.Errorf("%w (%v)", cause, err)
		}
	case err != nil && uint32(g.budget.Get()) == 0:
		*interrupted = true
		err = &budgetSpentError{budget: m.cfg.WorkBudget, err: err}
	}
	return err
}

// expired: the call's context is done, or its deadline has passed though the timer that marks it done
// has not run yet (on a starved machine it can wait for a thread).
func expired(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// budgetSpentError: the call ran through Config.WorkBudget.
type budgetSpentError struct {
	budget uint32
	err    error
}

func (e *budgetSpentError) Error() string {
	return fmt.Sprintf("exceeded its work budget of %d function entries and loop iterations (the bound that holds when the timeout cannot fire)", e.budget)
}

func (e *budgetSpentError) Unwrap() error { return e.err }

func (m *Module) newDirectInstance(ctx context.Context) (*directInstance, error) {
	ctx, cancel := m.callContext(ctx)
	defer cancel()
	output := &tailBuffer{}
	// Anonymous, so the compiled module can be instantiated many times in one
	// runtime; no start functions, because a reactor's _initialize is called
	// below under the call timeout. wazero's defaults give the guest no clock
	// and a fixed random source, which keeps it deterministic.
	mc := wazero.NewModuleConfig().WithName("").WithStartFunctions().WithStdout(output).WithStderr(output)
	mod, err := m.rt.InstantiateModule(experimental.WithMemoryAllocator(ctx, &memTracker{}), m.compiled, mc)
	if err != nil {
		return nil, classify(ctx, "instantiate", pathDirect, err, output.take())
	}
	flag, ok := interruptGlobalsOf(mod)
	if !ok { // instrumentInterrupts always adds them
		mod.Close(context.Background())
		return nil, badModule("instantiate", "the interrupt globals %q and %q are missing", interruptExport, stopExport)
	}
	if init := mod.ExportedFunction("_initialize"); init != nil {
		var interrupted bool
		if err := m.guard(ctx, flag, &interrupted, func() error { _, err := init.Call(ctx); return err }); err != nil || interrupted {
			mod.Close(context.Background())
			if err == nil {
				err = ctx.Err()
			}
			return nil, classify(ctx, "instantiate", pathDirect, err, output.take())
		}
	}
	return &directInstance{
		mod:       mod,
		mem:       mod.ExportedMemory("memory"),
		alloc:     mod.ExportedFunction("ordinal_alloc"),
		reconcile: mod.ExportedFunction(m.directCall()),
		describer: mod.ExportedFunction("ordinal_describe"),
		interrupt: flag,
		policy:    m.policy,
		output:    output,
		id:        instanceIDs.Add(1),
	}, nil
}

func (d *directInstance) close() { d.mod.Close(context.Background()) }

func (d *directInstance) pages() uint32 { return d.mem.Size() / wasmPageSize }

// describeOn calls ordinal_describe on inst.
func (m *Module) describeOn(ctx context.Context, inst *directInstance) ([]byte, error) {
	ctx, cancel := m.callContext(ctx)
	defer cancel()
	inst.output.take()
	var res []uint64
	err := m.guard(ctx, inst.interrupt, &inst.interrupted, func() (err error) { res, err = inst.describer.Call(ctx); return err })
	if err != nil {
		return nil, classify(ctx, "describe", pathDirect, err, inst.output.take())
	}
	out, bad := inst.read(res[0], m.cfg.MaxOutputBytes)
	if bad != nil {
		bad.Op, bad.Path = "describe", pathDirect
		return nil, bad
	}
	return out, nil
}

// directCall is the export a direct call runs: a reconcile module's ordinal_reconcile, a policy's
// ordinal_evaluate (abi/POLICY.md section 1.1).
func (m *Module) directCall() string {
	if m.policy {
		return "ordinal_evaluate"
	}
	return "ordinal_reconcile"
}

// call runs one reconcile (a policy's evaluate): ordinal_alloc, one write, ordinal_reconcile
// (ordinal_evaluate), one read.
func (d *directInstance) call(ctx context.Context, snapshot []byte, maxOutput int) ([]byte, error) {
	d.calls++
	n := uint32(len(snapshot))
	res, err := d.alloc.Call(ctx, uint64(n))
	if err != nil {
		return nil, err
	}
	ptr := uint32(res[0])
	if !d.mem.Write(ptr, snapshot) {
		return nil, badModule("reconcile", "ordinal_alloc(%d) returned %#x, outside guest memory (%d bytes)", n, ptr, d.mem.Size())
	}
	if res, err = d.reconcile.Call(ctx, uint64(ptr), uint64(n)); err != nil {
		return nil, err
	}
	out, bad := d.read(res[0], maxOutput)
	if bad != nil {
		return nil, bad
	}
	if len(out) == 0 {
		if d.policy {
			return nil, badModule("", "ordinal_evaluate returned nothing; ABI v1 policies always return a complete answer")
		}
		return nil, badModule("", "ordinal_reconcile returned an empty plan; ABI v1 modules always return a complete plan")
	}
	return out, nil
}

// read copies out the (ptr<<32)|len result of an export; the guest may reuse
// that memory on the next call.
func (d *directInstance) read(packed uint64, limit int) ([]byte, *Error) {
	ptr, n := uint32(packed>>32), uint32(packed)
	if uint64(n) > uint64(limit) {
		return nil, badModule("", "output of %d bytes is larger than the %d-byte limit (Config.MaxOutputBytes)", n, limit)
	}
	b, ok := d.mem.Read(ptr, n)
	if !ok {
		return nil, badModule("", "output [%#x, +%d) is outside guest memory (%d bytes)", ptr, n, d.mem.Size())
	}
	return append([]byte(nil), b...), nil
}

// Reconcile runs the snapshot through the direct exports and returns the plan
// JSON. A non-nil error means the module failed (trap, timeout, out of memory,
// bad output); problems with the snapshot itself come back inside the plan.
func (m *Module) Reconcile(ctx context.Context, snapshot []byte) ([]byte, error) {
	out, _, err := m.ReconcileWithStats(ctx, snapshot)
	return out, err
}

// ReconcileWithStats is Reconcile plus measurements of the call.
func (m *Module) ReconcileWithStats(ctx context.Context, snapshot []byte) ([]byte, CallStats, error) {
	st := CallStats{Path: pathDirect, InputBytes: len(snapshot)}
	ctx, done, err := m.beginDirect(ctx, len(snapshot))
	if err != nil {
		return nil, st, err
	}
	defer done()

	start := time.Now()
	inst, fresh, err := m.direct.get(ctx)
	st.Acquire, st.FreshInstance = time.Since(start), fresh
	if err != nil {
		return nil, st, poolError(ctx, pathDirect, err)
	}
	out, err := m.callOn(ctx, inst, snapshot, &st)
	return out, st, err
}

// beginDirect starts a direct-path reconcile of an n-byte snapshot: the input bound, the module still open,
// the call counted and bounded by the call timeout. done ends it.
func (m *Module) beginDirect(ctx context.Context, n int) (_ context.Context, done func(), _ error) {
	if err := m.checkInputSize(pathDirect, n); err != nil {
		return ctx, nil, err
	}
	if !m.enter() {
		return ctx, nil, &Error{Kind: ErrClosed, Op: "reconcile", Path: pathDirect, Msg: "module is closed"}
	}
	m.directCounters.calls.Add(1)
	ctx, cancel := m.callContext(ctx)
	return ctx, func() { cancel(); m.calls.Done() }, nil
}

// callOn runs one reconcile on inst, an instance taken from the pool, and gives it back: kept, or closed
// when the call failed or the instance is due for recycling (st.Recycled).
func (m *Module) callOn(ctx context.Context, inst *directInstance, snapshot []byte, st *CallStats) ([]byte, error) {
	inst.output.take()
	var out []byte
	start := time.Now()
	err := m.guard(ctx, inst.interrupt, &inst.interrupted, func() (err error) {
		out, err = inst.call(ctx, snapshot, m.cfg.MaxOutputBytes)
		return err
	})
	st.Guest += time.Since(start)
	st.MemoryPages = inst.pages()
	st.OutputBytes = len(out)
	if inst.calls == 1 {
		inst.firstPages = st.MemoryPages
	}

	keep := m.directCounters.keepAfter(&m.cfg, err, inst.calls, st.MemoryPages, inst.firstPages) && !inst.interrupted
	st.Recycled = !keep
	output := inst.output.take()
	m.direct.put(inst, keep)
	if err != nil {
		return nil, m.callError(ctx, pathDirect, err, output)
	}
	return out, nil
}
