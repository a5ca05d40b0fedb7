package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ordinal-dev/ordinal/host/wasm"
)

// ErrUnknownModule is Registry.Get's error for a name it does not have.
var ErrUnknownModule = errors.New("unknown module")

// Registry holds the modules a set may name with ordinal.dev/module (abi.AnnotationModule), each loaded
// on first use (most sets name none: a controller, replay or webhook that never meets one compiles
// nothing) and kept until Close. One registry serves the controller and every replay of a process.
type Registry struct {
	load func(ctx context.Context, code []byte) (*wasm.Module, error)
	code map[string][]byte

	mu   sync.Mutex
	refs map[string]*ModuleRef
}

// NewRegistry is a registry of modules by name (their bytes), loaded with load (the process's limits and
// compilation cache).
func NewRegistry(load func(ctx context.Context, code []byte) (*wasm.Module, error), modules map[string][]byte) *Registry {
	return &Registry{load: load, code: modules, refs: map[string]*ModuleRef{}}
}

// Get is the named module, loading it the first time (ErrUnknownModule: no such name).
func (r *Registry) Get(ctx context.Context, name string) (*ModuleRef, error) {
	if r == nil {
		return nil, fmt.Errorf("%w %q: no named modules", ErrUnknownModule, name)
	}
	code, ok := r.code[name]
	if !ok {
		return nil, fmt.Errorf("%w %q: the modules are %s", ErrUnknownModule, name, r.Names())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ref := r.refs[name]; ref != nil {
		return ref, nil
	}
	m, err := r.load(ctx, code)
	if err != nil {
		return nil, fmt.Errorf("module %q: %w", name, err)
	}
	info := ModuleInfoOf(m)
	info.Source = "registry:" + name
	ref := &ModuleRef{}
	ref.Install(m, info, func() { _ = m.Close(context.Background()) })
	r.refs[name] = ref
	return ref, nil
}

// Names lists the registry's names, quoted, for messages.
func (r *Registry) Names() string {
	if r == nil || len(r.code) == 0 {
		return "none"
	}
	names := make([]string, 0, len(r.code))
	for n := range r.code {
		names = append(names, strconv.Quote(n))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Close releases the loaded modules once no sync holds them.
func (r *Registry) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ref := range r.refs {
		ref.Install(nil, ModuleInfo{}, nil)
	}
	r.refs = map[string]*ModuleRef{}
}
