package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/ordinal-dev/ordinal/abi"
)

// Policy is a loaded policy module (abi/POLICY.md): its Extism exports describe and evaluate, called through
// the Extism Go SDK as any Extism host would, or, when it also has the direct exports (POLICY.md section
// 1.1: ordinal_alloc, ordinal_evaluate, ordinal_describe), through those as a reconcile module's direct path
// is called: one copy in, one copy out, no host function, the interrupt checks in its code instead of
// wazero's at every function entry (the Extism SDK's per-call cost was most of a small policy's call). Either
// way under a reconcile module's fences (the module limits checked before compiling, guest memory, the call
// timeout, the output size). It is safe for concurrent use.
type Policy struct {
	m        *Module
	describe abi.PolicyDescribe
}

// LoadPolicy compiles a policy module, checks its shape and exports, and reads its describe output. It
// refuses (ErrBadModule, ErrUnsupportedABI) a module that is not an ABI v1 policy.
func LoadPolicy(ctx context.Context, wasmBytes []byte, cfg Config) (*Policy, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	shape, err := checkModuleLimits(wasmBytes, cfg.Limits)
	if err != nil {
		return nil, err
	}
	var checked []byte // with the interrupt checks, for the direct path
	if hasPolicyDirectExports(exportedFunctions(wasmBytes)) {
		if checked, err = instrumentWithinLimits(wasmBytes, cfg.Limits); err != nil {
			return nil, err
		}
	}
	cfg.CacheDir = "" // a policy is small: compiled once per process
	m, err := newModuleOf(ctx, wasmBytes, checked, sha256.Sum256(wasmBytes), shape, cfg, true)
	if err != nil {
		return nil, err
	}
	return &Policy{m: m, describe: m.policyDescribe}, nil
}

// policyNamePattern is what a policy may be called: a set names it in an annotation list. Compiled on first
// use, not at init: its counted repeat makes a program of ~250 allocations that every ordinal process paid.
var policyNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`) })

// policyDirectExports are the direct exports a policy module may have besides its Extism ones (POLICY.md
// section 1.1), with their signatures.
var policyDirectExports = map[string]struct{ params, results []api.ValueType }{
	"ordinal_alloc":    {[]api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}},
	"ordinal_evaluate": {[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI64}},
	"ordinal_describe": {nil, []api.ValueType{api.ValueTypeI64}},
}

// hasPolicyDirectExports: the module exports a function of each direct export's name (their signatures
// are checked once it is compiled).
func hasPolicyDirectExports(exports map[string]bool) bool {
	return exports["ordinal_alloc"] && exports["ordinal_evaluate"] && exports["ordinal_describe"]
}

// loadPolicy is load for a policy module: its direct path when it has one (m.checked), else the Extism path.
// Either way it must have the Extism exports, which every Extism host calls.
func (m *Module) loadPolicy(ctx context.Context) error {
	exports := exportedFunctions(m.wasm)
	for _, name := range m.extismExports() {
		if exports != nil && !exports[name] {
			return badModule("load", "module has no Extism export %q: not a policy module (abi/POLICY.md)", name)
		}
	}
	code := m.wasm
	if m.checked != nil {
		code = m.checked
	}
	var err error
	if m.compiled, err = m.compile(ctx, code); errors.Is(err, ErrTimeout) || errors.Is(err, ErrCanceled) {
		return err
	} else if err != nil {
		return &Error{Kind: ErrBadModule, Op: "load", Msg: "not a valid wasm module: " + err.Error(), Err: err}
	}
	var raw []byte
	if m.checked != nil {
		raw, err = m.loadPolicyDirect(ctx)
	} else {
		if _, err = m.extismPath(ctx); err != nil {
			return err
		}
		raw, _, err = m.callExtism(ctx, "describe", nil)
	}
	if err != nil {
		return startupError(err)
	}
	var d abi.PolicyDescribe
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return badModule("describe", "output is not a policy describe document (%v): %.200q", err, raw)
	}
	switch {
	case d.ABI != abi.Version:
		return &Error{Kind: ErrUnsupportedABI, Op: "describe",
			Msg: fmt.Sprintf("policy %q speaks ABI %d; this host speaks ABI %d", d.Policy, d.ABI, abi.Version)}
	case d.Kind != abi.PolicyKind:
		return badModule("describe", "kind is %q, not %q: not a policy module", d.Kind, abi.PolicyKind)
	case !policyNamePattern().MatchString(d.Policy):
		return badModule("describe", "policy name %q is not lower-case letters, digits and '-' (at most 63)", d.Policy)
	case len(d.Version) > 64:
		return badModule("describe", "version is longer than 64 bytes")
	}
	for _, c := range d.Context {
		if !slices.Contains(abi.PolicyContexts, c) {
			return badModule("describe", "context %q is not one this host supplies (%s)", c, strings.Join(abi.PolicyContexts, ", "))
		}
	}
	m.policyDescribe, m.describeRaw = d, raw
	return nil
}

// loadPolicyDirect readies the direct path of a policy whose code (m.compiled) has the direct exports, as
// load does a reconcile module's, and returns its describe output.
func (m *Module) loadPolicyDirect(ctx context.Context) ([]byte, error) {
	exports := m.compiled.ExportedFunctions()
	for name, want := range policyDirectExports {
		if def := exports[name]; !sameTypes(def.ParamTypes(), want.params) || !sameTypes(def.ResultTypes(), want.results) {
			return nil, badModule("load", "export %s has signature %s, want %s (abi/POLICY.md section 1.1)",
				name, signature(def.ParamTypes(), def.ResultTypes()), signature(want.params, want.results))
		}
	}
	if _, ok := m.compiled.ExportedMemories()["memory"]; !ok {
		return nil, badModule("load", "missing exported memory \"memory\" (abi/POLICY.md section 1.1)")
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, m.rt); err != nil {
		return nil, fmt.Errorf("ordinal policy: load: WASI: %w", err)
	}
	if err := instantiateStubs(ctx, m.rt, m.compiled); err != nil {
		return nil, err
	}
	m.direct = newPool(m.cfg.MaxInstances, &m.directCounters, m.newDirectInstance, (*directInstance).close)
	inst, _, err := m.direct.get(ctx)
	if err != nil {
		return nil, err
	}
	raw, err := m.describeOn(ctx, inst)
	m.direct.put(inst, err == nil && !inst.interrupted)
	return raw, err
}

// Describe is the policy's self-description, read at load.
func (p *Policy) Describe() abi.PolicyDescribe { return p.describe }

// DescribeJSON is describe's output as the module returned it.
func (p *Policy) DescribeJSON() []byte { return append([]byte(nil), p.m.describeRaw...) }

// Wants reports whether the policy reads this member of the host's context (describe's context).
func (p *Policy) Wants(context string) bool { return slices.Contains(p.describe.Context, context) }

// Name is the policy's name (describe's "policy").
func (p *Policy) Name() string { return p.describe.Policy }

// Evaluate runs evaluate on one input (abi.PolicyInput as JSON) and returns its answer as given; the caller
// checks it (host/policy). Its errors are *Error, as a reconcile module's. A policy with the direct exports
// is called through them.
func (p *Policy) Evaluate(ctx context.Context, input []byte) ([]byte, error) {
	if p.m.direct == nil {
		return p.EvaluateExtism(ctx, input)
	}
	ctx, done, err := p.m.beginDirect(ctx, len(input))
	if err != nil {
		return nil, err
	}
	defer done()
	inst, _, err := p.m.direct.get(ctx)
	if err != nil {
		return nil, poolError(ctx, pathDirect, err)
	}
	var st CallStats
	return p.m.callOn(ctx, inst, input, &st)
}

// EvaluateExtism runs evaluate through the policy's Extism exports, as any Extism host calls it, whatever
// path Evaluate takes (a policy's two paths give the same answer: the tests hold the shipped ones to it).
func (p *Policy) EvaluateExtism(ctx context.Context, input []byte) ([]byte, error) {
	out, _, err := p.m.callExtism(ctx, "evaluate", input)
	return out, err
}

// Direct reports whether Evaluate calls the policy through its direct exports.
func (p *Policy) Direct() bool { return p.m.direct != nil }

// Close releases the module; calls in flight end.
func (p *Policy) Close(ctx context.Context) error { return p.m.Close(ctx) }
