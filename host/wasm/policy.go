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

	"github.com/ordinal-dev/ordinal/abi"
)

// Policy is a loaded policy module (abi/POLICY.md): its Extism exports describe and evaluate, called through
// the Extism Go SDK as any Extism host would, under a reconcile module's fences (the module limits checked
// before compiling, guest memory, the call timeout, the output size). It is safe for concurrent use.
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
	cfg.CacheDir = "" // a policy is small: compiled once per process
	m, err := newModuleOf(ctx, wasmBytes, nil, sha256.Sum256(wasmBytes), shape, cfg, true)
	if err != nil {
		return nil, err
	}
	return &Policy{m: m, describe: m.policyDescribe}, nil
}

// policyNamePattern is what a policy may be called: a set names it in an annotation list.
var policyNamePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// loadPolicy is load for a policy module: the Extism path only.
func (m *Module) loadPolicy(ctx context.Context) error {
	var err error
	if m.compiled, err = m.compile(ctx, m.wasm); errors.Is(err, ErrTimeout) || errors.Is(err, ErrCanceled) {
		return err
	} else if err != nil {
		return &Error{Kind: ErrBadModule, Op: "load", Msg: "not a valid wasm module: " + err.Error(), Err: err}
	}
	if _, err := m.extismPath(ctx); err != nil {
		return err
	}
	raw, _, err := m.callExtism(ctx, "describe", nil)
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
	case !policyNamePattern.MatchString(d.Policy):
		return badModule("describe", "policy name %q is not lower-case letters, digits and '-' (at most 63)", d.Policy)
	case len(d.Version) > 64:
		return badModule("describe", "version is longer than 64 bytes")
	}
	for _, c := range d.Context {
		if c != abi.ContextPodDisruptionBudgets && c != abi.ContextNodes && c != abi.ContextSnapshot {
			return badModule("describe", "context %q is not one this host supplies (%s, %s, %s)", c, abi.ContextPodDisruptionBudgets, abi.ContextNodes, abi.ContextSnapshot)
		}
	}
	m.policyDescribe, m.describeRaw = d, raw
	return nil
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
// checks it (host/policy). Its errors are *Error, as a reconcile module's.
func (p *Policy) Evaluate(ctx context.Context, input []byte) ([]byte, error) {
	out, _, err := p.m.callExtism(ctx, "evaluate", input)
	return out, err
}

// Close releases the module; calls in flight end.
func (p *Policy) Close(ctx context.Context) error { return p.m.Close(ctx) }
