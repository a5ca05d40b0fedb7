// Package wasm runs an Ordinal reconcile module (ABI v1, see abi/README.md)
// under wazero. A Module is compiled once and serves concurrent calls from a
// pool of instances, through either the direct exports (one copy in, one copy
// out; the production path) or the portable Extism-PDK exports via the Extism
// Go SDK (what any Extism host would do; used to check both paths agree).
package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/ordinal-dev/ordinal/abi"
)

// Module is a loaded, verified reconcile module. It is safe for concurrent use.
type Module struct {
	cfg         Config
	wasm        []byte // kept for the Extism path, which compiles lazily
	checked     []byte // wasm with interrupt checks (instrumentInterrupts): what the direct path runs
	digest      [sha256.Size]byte
	cache       wazero.CompilationCache
	rt          wazero.Runtime
	compiled    wazero.CompiledModule
	describe    abi.Describe
	describeRaw []byte
	shape       ModuleShape
	policy      bool // a policy module (policy.go): the Extism path only, describe and evaluate
	// policyDescribe is a policy module's describe.
	policyDescribe abi.PolicyDescribe

	directCounters counters
	direct         *pool[*directInstance]

	extismCounters counters
	extismOnce     sync.Once
	extism         *extismPath
	extismErr      error

	closeOnce sync.Once
	closed    atomic.Bool
	// Calls in flight, so Close can stop them and wait: closing the runtime under a running guest
	// would unmap its memory and code. life is canceled by Close and interrupts every running call.
	callMu     sync.Mutex
	calls      sync.WaitGroup
	life       context.Context
	cancelLife context.CancelFunc
}

// directExports are the exports Load requires, with their signatures.
var directExports = map[string]struct{ params, results []api.ValueType }{
	"ordinal_alloc":     {[]api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}},
	"ordinal_reconcile": {[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI64}},
	"ordinal_describe":  {nil, []api.ValueType{api.ValueTypeI64}},
}

// Load compiles wasmBytes, checks its exports and imports, instantiates it once
// and reads its describe output. It refuses (ErrBadModule, ErrUnsupportedABI) a
// module that lacks the direct exports or whose ABI is not abi.Version. The
// first instance goes into the pool.
func Load(ctx context.Context, wasmBytes []byte, cfg Config) (*Module, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	// Refused before wazero sees it (prepare): compiling and instantiating are not bounded by any call
	// timeout. A module over the size limit is refused before it is hashed.
	if cfg.CacheDir == "" || len(wasmBytes) > cfg.Limits.MaxBytes {
		shape, checked, err := prepare(wasmBytes, cfg.Limits)
		if err != nil {
			return nil, err
		}
		return newModule(ctx, wasmBytes, checked, sha256.Sum256(wasmBytes), shape, cfg)
	}
	// The on-disk cache only saves time: it never fails a Load. Processes share it (a controller's
	// replicas start together), so every step below tolerates another process doing the same at once.
	digest := sha256.Sum256(wasmBytes)
	dir, bounds := moduleCacheDir(cfg.CacheDir, digest), cacheBoundsFor(len(wasmBytes), cfg.Limits)
	sealed, entry := verifyCache(dir, bounds)
	shape, checked, prepared := decodePrepared(entry, digest, cfg.Limits)
	if !prepared {
		var err error
		if shape, checked, err = prepare(wasmBytes, cfg.Limits); err != nil {
			return nil, err
		}
	}
	m, err := newModule(ctx, wasmBytes, checked, digest, shape, cfg)
	if err != nil && errors.Is(err, errCorruptCache) { // damaged between the check and the read
		discardCache(dir)
		sealed, prepared = nil, false // the entries it listed are gone
		m, err = newModule(ctx, wasmBytes, checked, digest, shape, cfg)
	}
	if errors.Is(err, ErrTimeout) || errors.Is(err, ErrCanceled) {
		return nil, err // out of time: not for compiling again
	}
	if err != nil {
		// a cache that cannot be used (removed by another process mid-write, unwritable...): without it,
		// the module's own error, if any, is what remains
		noDisk := cfg
		noDisk.CacheDir = ""
		return newModule(ctx, wasmBytes, checked, digest, shape, noDisk)
	}
	if !prepared { // kept for the next Load, which the manifest written next vouches for
		writeAtomically(dir, preparedEntry, encodePrepared(digest, cfg.Limits, shape, checked))
		sealed = nil
	}
	sealCache(dir, sealed, bounds)
	return m, nil
}

// errCorruptCache marks a compile that failed on the compilation cache, not on the module.
var errCorruptCache = errors.New("corrupt compilation cache entry")

func newModule(ctx context.Context, wasmBytes, checked []byte, digest [sha256.Size]byte, shape ModuleShape, cfg Config) (*Module, error) {
	return newModuleOf(ctx, wasmBytes, checked, digest, shape, cfg, false)
}

func newModuleOf(ctx context.Context, wasmBytes, checked []byte, digest [sha256.Size]byte, shape ModuleShape, cfg Config, policy bool) (*Module, error) {
	m := &Module{cfg: cfg, wasm: wasmBytes, checked: checked, digest: digest, shape: shape, policy: policy}
	m.life, m.cancelLife = context.WithCancel(context.WithoutCancel(ctx))
	// An in-memory cache is used even without CacheDir so the Extism path's
	// runtime reuses this compilation instead of compiling the module again.
	if cfg.CacheDir != "" {
		dir := moduleCacheDir(cfg.CacheDir, digest)
		var err error
		if m.cache, err = wazero.NewCompilationCacheWithDir(dir); err != nil {
			return nil, fmt.Errorf("ordinal module: compilation cache %s: %w", dir, err)
		}
	} else {
		m.cache = wazero.NewCompilationCache()
	}
	// No WithCloseOnContextDone: the module's own interrupt checks stop a looping guest (interrupt.go).
	rc := wazero.NewRuntimeConfig().
		WithCompilationCache(m.cache).
		WithMemoryLimitPages(cfg.MemoryLimitPages)
	m.rt = wazero.NewRuntimeWithConfig(ctx, rc)

	load := m.load
	if policy {
		load = m.loadPolicy
	}
	if err := load(ctx); err != nil {
		m.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return m, nil
}

func (m *Module) load(ctx context.Context) error {
	var err error
	m.compiled, err = m.compile(ctx, m.checked)
	if errors.Is(err, ErrTimeout) || errors.Is(err, ErrCanceled) {
		return err
	}
	if err != nil && strings.HasPrefix(err.Error(), "compilationcache:") { // wazero's cache, not the module
		return fmt.Errorf("%w: %w", errCorruptCache, err)
	}
	if err != nil {
		return &Error{Kind: ErrBadModule, Op: "load", Msg: "not a valid wasm module: " + err.Error(), Err: err}
	}
	if err := checkDirectExports(m.compiled); err != nil {
		return err
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, m.rt); err != nil {
		return fmt.Errorf("ordinal module: load: WASI: %w", err)
	}
	if err := instantiateStubs(ctx, m.rt, m.compiled); err != nil {
		return err
	}
	m.direct = newPool(m.cfg.MaxInstances, &m.directCounters, m.newDirectInstance, (*directInstance).close)

	inst, _, err := m.direct.get(ctx)
	if err != nil {
		return startupError(err)
	}
	raw, err := m.describeOn(ctx, inst)
	m.direct.put(inst, err == nil && !inst.interrupted)
	if err != nil {
		return startupError(err)
	}
	var d abi.Describe
	if err := json.Unmarshal(raw, &d); err != nil {
		return badModule("describe", "output is not describe JSON (%v): %.200q", err, raw)
	}
	if d.ABI != abi.Version {
		return &Error{Kind: ErrUnsupportedABI, Op: "describe",
			Msg: fmt.Sprintf("module %q speaks ABI %d; this host speaks ABI %d", d.Module, d.ABI, abi.Version)}
	}
	if d, err = abi.CheckDescribe(raw); err != nil {
		return badModule("describe", "%v", err)
	}
	m.describe, m.describeRaw = d, raw
	return nil
}

// compile compiles code within Config.Timeout and the caller's deadline, as a call is bounded. wazero's
// compiler cannot be stopped (a module just under the static limits compiles for ~9 s; issue 32,
// finding 10), so it runs on a goroutine of its own: at the deadline Load fails with ErrTimeout, and the
// compile, whose time and memory the static limits bound (MaxCompileCost: ~10 s at worst), finishes on
// its own and then closes the runtime it compiled in, which is handed to it: closing a runtime under a
// running compile is not safe. A deadline already passed compiles nothing.
func (m *Module) compile(ctx context.Context, code []byte) (wazero.CompiledModule, error) {
	ctx, cancel := m.callContext(ctx)
	defer cancel()
	if expired(ctx) {
		return nil, compileStopped(ctx)
	}
	type result struct {
		compiled wazero.CompiledModule
		err      error
	}
	done := make(chan result, 1)
	rt, cache := m.rt, m.cache
	go func() {
		c, err := compileModule(rt, context.WithoutCancel(ctx), code)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.compiled, r.err
	case <-ctx.Done():
		m.rt, m.cache = nil, nil // the compile's to close, once it ends
		go func() {
			r, bg := <-done, context.Background()
			if r.compiled != nil {
				r.compiled.Close(bg)
			}
			rt.Close(bg)
			cache.Close(bg)
			if abandonedClosed != nil {
				abandonedClosed()
			}
		}()
		return nil, compileStopped(ctx)
	}
}

// compileModule is wazero's compile (a test holds it to be sure the deadline comes first).
var compileModule = wazero.Runtime.CompileModule

// abandonedClosed, when set (a test), is called once an abandoned compile's runtime is closed: a runtime
// must not be used while it closes, so the test waits for this instead of probing it.
var abandonedClosed func()

// compileStopped is the error of a compile whose context ended first.
func compileStopped(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &Error{Kind: ErrCanceled, Op: "load", Msg: "compile canceled by the caller"}
	}
	msg := "exceeded the caller's deadline"
	var tc *timeoutCause
	if errors.As(context.Cause(ctx), &tc) {
		msg = tc.Error()
	}
	return &Error{Kind: ErrTimeout, Op: "load", Msg: "compile " + msg}
}

// startupError reports a module that traps or runs out of memory in
// _initialize or describe as a bad module: it can never serve a call.
func startupError(err error) error {
	if e, ok := err.(*Error); ok && (e.Kind == ErrTrap || e.Kind == ErrOutOfMemory) {
		e.Msg = "module failed to start: " + e.Msg
		e.Kind = ErrBadModule
	}
	return err
}

func checkDirectExports(compiled wazero.CompiledModule) error {
	exports := compiled.ExportedFunctions()
	var problems []string
	for _, name := range []string{"ordinal_alloc", "ordinal_reconcile", "ordinal_describe"} {
		want := directExports[name]
		def, ok := exports[name]
		switch {
		case !ok:
			problems = append(problems, "missing export "+name)
		case !sameTypes(def.ParamTypes(), want.params) || !sameTypes(def.ResultTypes(), want.results):
			problems = append(problems, fmt.Sprintf("export %s has signature %s, want %s",
				name, signature(def.ParamTypes(), def.ResultTypes()), signature(want.params, want.results)))
		}
	}
	if _, ok := compiled.ExportedMemories()["memory"]; !ok {
		problems = append(problems, "missing exported memory \"memory\"")
	}
	if len(problems) > 0 {
		return badModule("load", "not an Ordinal ABI v%d module: %s", abi.Version, strings.Join(problems, "; "))
	}
	return nil
}

func sameTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func signature(params, results []api.ValueType) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return "(" + strings.Join(s, ",") + ")"
	}
	return names(params) + "->" + names(results)
}

// Describe returns the module's self-description, read at Load.
func (m *Module) Describe() abi.Describe { return m.describe }

// DescribeJSON returns the module's describe output exactly as it produced it.
func (m *Module) DescribeJSON() []byte { return append([]byte(nil), m.describeRaw...) }

// Digest is the sha256 of the module's wasm bytes.
func (m *Module) Digest() [sha256.Size]byte { return m.digest }

// Shape is what Load measured of the module's binary (ModuleLimits bound it).
func (m *Module) Shape() ModuleShape { return m.shape }

// Config returns the effective configuration (defaults applied).
func (m *Module) Config() Config { return m.cfg }

// Stats returns the instance counters of both call paths.
func (m *Module) Stats() Stats {
	return Stats{Direct: m.directCounters.snapshot(), Extism: m.extismCounters.snapshot()}
}

// Close releases all instances and compiled code. Calls in flight fail.
func (m *Module) Close(ctx context.Context) error {
	var errs []error
	m.closeOnce.Do(func() {
		m.callMu.Lock()
		m.closed.Store(true)
		m.callMu.Unlock()
		m.cancelLife() // interrupts the calls in flight ...
		m.calls.Wait() // ... which end at their next check
		if m.direct != nil {
			m.direct.close()
		}
		m.extismOnce.Do(func() { // no lazy compile after Close
			m.extismErr = &Error{Kind: ErrClosed, Op: "reconcile", Path: pathExtism, Msg: "module is closed"}
		})
		if m.extism != nil {
			errs = append(errs, m.extism.close(ctx))
		}
		if m.rt != nil {
			errs = append(errs, m.rt.Close(ctx))
		}
		if m.cache != nil {
			errs = append(errs, m.cache.Close(ctx))
		}
	})
	return errors.Join(errs...)
}

// enter registers a call in flight; false once the module is closed.
func (m *Module) enter() bool {
	m.callMu.Lock()
	defer m.callMu.Unlock()
	if m.closed.Load() {
		return false
	}
	m.calls.Add(1)
	return true
}

// callContext applies Config.Timeout to one guest call; the cause lets errors
// say which limit was hit.
func (m *Module) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if m.cfg.Timeout < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, m.cfg.Timeout, &timeoutCause{limit: m.cfg.Timeout.String()})
}

// checkInputSize refuses, without touching an instance, a snapshot that cannot
// fit in guest memory at all.
func (m *Module) checkInputSize(path string, n int) error {
	limit := uint64(m.cfg.MemoryLimitPages) * wasmPageSize
	if uint64(n) >= limit {
		return &Error{Kind: ErrOutOfMemory, Op: "reconcile", Path: path,
			Msg: fmt.Sprintf("snapshot of %d bytes cannot fit in the %d MiB guest memory limit", n, limit>>20)}
	}
	return nil
}

// callError turns the failure of a guest call into an *Error; calls cut short
// by Close report ErrClosed rather than whatever wazero saw.
func (m *Module) callError(ctx context.Context, path string, err error, output string) error {
	op := "reconcile"
	if m.policy {
		op = "policy evaluate"
	}
	if m.closed.Load() {
		return &Error{Kind: ErrClosed, Op: op, Path: path, Msg: "module closed during the call", Err: err}
	}
	if bad, ok := err.(*Error); ok { // the module broke the ABI (e.g. output out of bounds)
		bad.Op, bad.Path, bad.Output = op, path, output
		return bad
	}
	return classify(ctx, op, path, err, output)
}

// poolError maps a failure to get an instance from a pool to an *Error.
func poolError(ctx context.Context, path string, err error) error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return err
	case errors.Is(err, ErrClosed):
		return &Error{Kind: ErrClosed, Op: "reconcile", Path: path, Msg: "module is closed"}
	default:
		return classify(ctx, "reconcile", path, err, "")
	}
}
