package wasm

import (
	"context"
	"errors"
	"strings"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
)

const pathExtism = "extism"

// extismPath calls the module's Extism-PDK exports through the Extism Go SDK,
// exactly as any Extism host would: the portable path. The plugin is compiled
// once (NewCompiledPlugin, sharing the Module's compilation cache) and each
// pooled instance is a Plugin, which the SDK documents as not goroutine-safe.
type extismPath struct {
	compiled *extism.CompiledPlugin
	pool     *pool[*extismInstance]
}

type extismInstance struct {
	plugin *extism.Plugin
	mem    *memTracker
	output *tailBuffer
	calls  int
}

func (i *extismInstance) close() { i.plugin.Close(context.Background()) }

func (p *extismPath) close(ctx context.Context) error {
	p.pool.close()
	return p.compiled.Close(ctx)
}

// extismExports are the PDK exports the Extism path needs: () -> i32 each (a policy module's: describe and
// evaluate).
func (m *Module) extismExports() []string {
	if m.policy {
		return []string{"describe", "evaluate"}
	}
	return []string{"describe", "reconcile"}
}

func (m *Module) extismPath(ctx context.Context) (*extismPath, error) {
	m.extismOnce.Do(func() {
		exports := m.compiled.ExportedFunctions()
		for _, name := range m.extismExports() {
			if _, ok := exports[name]; !ok {
				if m.policy {
					m.extismErr = badModule("load", "module has no Extism export %q: not a policy module (abi/POLICY.md)", name)
				} else {
					m.extismErr = badModule("load", "module has no Extism export %q; only the direct path can call it", name)
				}
				return
			}
		}
		manifest := extism.Manifest{
			Wasm:   []extism.Wasm{extism.WasmData{Data: m.wasm, Name: "main"}},
			Memory: &extism.ManifestMemory{MaxPages: m.cfg.MemoryLimitPages},
		}
		if m.cfg.Timeout > 0 {
			// A backstop only: the call's own context (Config.Timeout) fires first,
			// so timeout errors name the configured limit.
			manifest.Timeout = uint64((m.cfg.Timeout + time.Second).Milliseconds())
		}
		cp, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{
			EnableWasi:    true,
			RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(m.cache).WithCloseOnContextDone(true),
		}, nil)
		if err != nil {
			m.extismErr = &Error{Kind: ErrBadModule, Op: "load", Path: pathExtism, Msg: err.Error(), Err: err}
			return
		}
		p := &extismPath{compiled: cp}
		p.pool = newPool(m.cfg.MaxInstances, &m.extismCounters, p.newInstance, (*extismInstance).close)
		m.extism = p
	})
	return m.extism, m.extismErr
}

func (p *extismPath) newInstance(ctx context.Context) (*extismInstance, error) {
	inst := &extismInstance{mem: &memTracker{}, output: &tailBuffer{}}
	ctx = experimental.WithMemoryAllocator(ctx, inst.mem)
	mc := wazero.NewModuleConfig().WithStdout(inst.output).WithStderr(inst.output)
	plugin, err := p.compiled.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		return nil, classify(ctx, "instantiate", pathExtism, err, inst.output.take())
	}
	plugin.SetLogger(func(extism.LogLevel, string) {}) // the guest does not log; never write to the host's log
	inst.plugin = plugin
	return inst, nil
}

// ReconcileExtism runs the snapshot through the module's Extism "reconcile"
// export via the Extism Go SDK. Its plan must be byte-identical to Reconcile's.
func (m *Module) ReconcileExtism(ctx context.Context, snapshot []byte) ([]byte, error) {
	out, _, err := m.ReconcileExtismWithStats(ctx, snapshot)
	return out, err
}

// ReconcileExtismWithStats is ReconcileExtism plus measurements of the call.
// The first call compiles the Extism plugin (fast: the compilation is cached).
func (m *Module) ReconcileExtismWithStats(ctx context.Context, snapshot []byte) ([]byte, CallStats, error) {
	return m.callExtism(ctx, "reconcile", snapshot)
}

// callExtism calls the Extism export fn (reconcile, or a policy's evaluate) with input, under the module's
// limits: memory, the call timeout, the output size.
func (m *Module) callExtism(ctx context.Context, fn string, input []byte) ([]byte, CallStats, error) {
	st := CallStats{Path: pathExtism, InputBytes: len(input)}
	p, err := m.extismPath(ctx)
	if err != nil {
		return nil, st, err
	}
	// The Extism kernel holds the input in its memory and the guest copies it into
	// its own; the limit applies to each memory.
	if err := m.checkInputSize(pathExtism, len(input)); err != nil {
		return nil, st, err
	}
	m.extismCounters.calls.Add(1)
	ctx, cancel := m.callContext(ctx)
	defer cancel()

	start := time.Now()
	inst, fresh, err := p.pool.get(ctx)
	st.Acquire, st.FreshInstance = time.Since(start), fresh
	if err != nil {
		return nil, st, poolError(ctx, pathExtism, err)
	}

	inst.output.take()
	inst.calls++
	start = time.Now()
	rc, out, err := inst.plugin.CallWithContext(ctx, fn, input)
	st.Guest = time.Since(start)
	st.MemoryPages = inst.mem.pages()
	st.OutputBytes = len(out)
	switch {
	case err != nil && !isGuestFailure(err):
		// The guest returned normally but set an Extism error: a contract violation.
		err = badModule("", "module reported an error through the Extism API (code %d): %v", rc, err)
	case err == nil && rc != 0:
		err = badModule("", "%s returned %d; ABI v1 modules always return 0", fn, rc)
	case err == nil && len(out) == 0:
		err = badModule("", "%s returned nothing; ABI v1 modules always return a complete answer", fn)
	case err == nil && len(out) > m.cfg.MaxOutputBytes: // the SDK has copied it already: drop it at once
		err = badModule("", "output of %d bytes is larger than the %d-byte limit (Config.MaxOutputBytes)", len(out), m.cfg.MaxOutputBytes)
		out = nil
	}

	keep := m.extismCounters.keepAfter(&m.cfg, err, inst.calls, st.MemoryPages, 0) // no sessions here: the plain bound
	st.Recycled = !keep
	output := inst.output.take()
	p.pool.put(inst, keep)
	if err != nil {
		return nil, st, m.callError(ctx, pathExtism, err, output)
	}
	return out, st, nil
}

// isGuestFailure tells a failed guest call (trap, exit, timeout, stub called)
// from the SDK's "the call returned but the guest set an error" case.
func isGuestFailure(err error) bool {
	var exit *sys.ExitError
	var stub *stubCalledError
	msg := err.Error()
	return errors.As(err, &exit) || errors.As(err, &stub) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		strings.HasPrefix(msg, "wasm error:") || strings.Contains(msg, "wasm stack trace:")
}
