package wasm

import (
	"context"
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
	output                      *tailBuffer
	calls                       int
}

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
	if init := mod.ExportedFunction("_initialize"); init != nil {
		if _, err := init.Call(ctx); err != nil {
			mod.Close(context.Background())
			return nil, classify(ctx, "instantiate", pathDirect, err, output.take())
		}
	}
	return &directInstance{
		mod:       mod,
		mem:       mod.ExportedMemory("memory"),
		alloc:     mod.ExportedFunction("ordinal_alloc"),
		reconcile: mod.ExportedFunction("ordinal_reconcile"),
		describer: mod.ExportedFunction("ordinal_describe"),
		output:    output,
	}, nil
}

func (d *directInstance) close() { d.mod.Close(context.Background()) }

func (d *directInstance) pages() uint32 { return d.mem.Size() / wasmPageSize }

// describeOn calls ordinal_describe on inst.
func (m *Module) describeOn(ctx context.Context, inst *directInstance) ([]byte, error) {
	ctx, cancel := m.callContext(ctx)
	defer cancel()
	inst.output.take()
	res, err := inst.describer.Call(ctx)
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

// call runs one reconcile: ordinal_alloc, one write, ordinal_reconcile, one read.
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
	if err := m.checkInputSize(pathDirect, len(snapshot)); err != nil {
		return nil, st, err
	}
	m.directCounters.calls.Add(1)
	ctx, cancel := m.callContext(ctx)
	defer cancel()

	start := time.Now()
	inst, fresh, err := m.direct.get(ctx)
	st.Acquire, st.FreshInstance = time.Since(start), fresh
	if err != nil {
		return nil, st, poolError(ctx, pathDirect, err)
	}

	inst.output.take()
	start = time.Now()
	out, err := inst.call(ctx, snapshot, m.cfg.MaxOutputBytes)
	st.Guest = time.Since(start)
	st.MemoryPages = inst.pages()
	st.OutputBytes = len(out)

	keep := m.directCounters.keepAfter(&m.cfg, err, inst.calls, st.MemoryPages)
	st.Recycled = !keep
	output := inst.output.take()
	m.direct.put(inst, keep)
	if err != nil {
		return nil, st, m.callError(ctx, pathDirect, err, output)
	}
	return out, st, nil
}
