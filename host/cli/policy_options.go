package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/readlimit"
	"github.com/ordinal-dev/ordinal/policies"
)

// policyRegistry is the policies a set may name with ordinal.dev/policies (abi.AnnotationPolicies): the
// modules of --policy, by the name each describes, and the shipped ones (policies.Builtin) where no file
// takes the name. Each is loaded on first use, with the reconcile module's limits.
type policyRegistry struct {
	o      *moduleOptions
	mu     sync.Mutex
	code   map[string][]byte
	loaded map[string]*wasm.Policy
}

// policies reads the --policy files and returns the registry; close releases what it loaded.
func (o *moduleOptions) policies(ctx context.Context) (*policyRegistry, error) {
	r := &policyRegistry{o: o, code: policies.Builtin(), loaded: map[string]*wasm.Policy{}}
	fromFile := map[string]string{}
	for _, path := range o.policyFiles {
		b, err := readlimit.File(path, wasm.DefaultMaxModuleBytes, "policy "+path, "")
		if err != nil {
			return nil, withCode(ExitUsage, fmt.Errorf("reading policy: %w", err))
		}
		p, err := r.load(ctx, b)
		if err != nil {
			r.close()
			return nil, withCode(ExitModuleFailure, fmt.Errorf("policy %s: %w", path, err))
		}
		name := p.Name()
		if prev, dup := fromFile[name]; dup {
			p.Close(ctx)
			r.close()
			return nil, withCode(ExitUsage, fmt.Errorf("--policy %s and %s are both the policy %q", prev, path, name))
		}
		fromFile[name] = path
		if old := r.loaded[name]; old != nil {
			old.Close(ctx)
		}
		r.loaded[name] = p
	}
	return r, nil
}

func (r *policyRegistry) load(ctx context.Context, code []byte) (*wasm.Policy, error) {
	if err := r.o.validate(); err != nil {
		return nil, err
	}
	return wasm.LoadPolicy(ctx, code, wasm.Config{Timeout: r.o.timeout, MemoryLimitPages: r.o.memoryLimitMB * 16})
}

// named is the registry as replay.Options.NamedPolicy.
func (r *policyRegistry) named(ctx context.Context, name string) (policy.Module, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.loaded[name]; p != nil {
		return p, nil
	}
	code, ok := r.code[name]
	if !ok {
		return nil, fmt.Errorf("no policy %q: give its module with --policy FILE (shipped: %s)", name, strings.Join(slices.Sorted(maps.Keys(r.code)), ", "))
	}
	p, err := r.load(ctx, code)
	if err != nil {
		return nil, err
	}
	if p.Name() != name {
		p.Close(ctx)
		return nil, fmt.Errorf("the shipped policy %q describes itself as %q", name, p.Name())
	}
	r.loaded[name] = p
	return p, nil
}

func (r *policyRegistry) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for n, p := range r.loaded {
		p.Close(context.Background())
		delete(r.loaded, n)
	}
}
