package module

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// ErrUnknownModule is Registry.Get's error for a name it does not have.
var ErrUnknownModule = errors.New("unknown module")

// ErrModuleRefused is Registry.Get's error for a supplied module its check refused: until it changes, or
// for a check that ran out of time, until wasm.RecheckAfter has passed (wasm.Refusal).
var ErrModuleRefused = errors.New("module refused")

// Registry holds the modules a set may name with ordinal.dev/module (abi.AnnotationModule), each loaded
// on first use (most sets name none: a controller, replay or webhook that never meets one compiles
// nothing) and kept until Close. One registry serves the controller and every replay of a process.
type Registry struct {
	load func(ctx context.Context, code []byte) (*wasm.Module, error)
	code map[string][]byte // the built-in modules (embedded: trusted)

	loading wasm.Gates // one load per name and generation at a time, outside mu and outside the callers' deadlines

	mu       sync.Mutex
	gen      uint64 // counts Supply and Close calls: a load that began before one is not installed
	refs     map[string]*Ref
	supplied map[string]suppliedModule // modules supplied at run time (a ConfigMap), each checked before use
	check    func(ctx context.Context, code []byte) (*wasm.Module, error)
	onSupply []func()         // called after Supply changed anything (the controller re-syncs sets that name a module)
	now      func() time.Time // when a refusal for a check out of time ends (nil: time.Now); tests set it
}

// OnSupply registers f, called (without the registry's lock) after a Supply that changed the modules.
func (r *Registry) OnSupply(f func()) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onSupply = append(r.onSupply, f)
}

// suppliedModule is a module supplied at run time: its bytes, and the check's refusal once it was refused.
type suppliedModule struct {
	code    []byte
	refused wasm.Refusal
}

func (r *Registry) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

// NewRegistry is a registry of modules by name (their bytes), loaded with load (the process's limits and
// compilation cache).
func NewRegistry(load func(ctx context.Context, code []byte) (*wasm.Module, error), modules map[string][]byte) *Registry {
	return &Registry{load: load, code: modules, refs: map[string]*Ref{}, supplied: map[string]suppliedModule{}}
}

// Supply replaces the modules supplied at run time (e.g. a ConfigMap's NAME.wasm keys) by these, each
// loaded through check (the hot swap's gate: describe, then every conformance case) when a set first names
// it. A name of a built-in module cannot be supplied. A module whose bytes changed, or that is gone, is
// released once no sync holds it.
func (r *Registry) Supply(check func(ctx context.Context, code []byte) (*wasm.Module, error), modules map[string][]byte) {
	r.mu.Lock()
	changed := false
	defer func() {
		callbacks := r.onSupply
		r.mu.Unlock()
		if changed {
			for _, f := range callbacks {
				f()
			}
		}
	}()
	r.check = check
	r.gen++
	for name, prev := range r.supplied {
		if code, ok := modules[name]; !ok || string(code) != string(prev.code) {
			changed = true
			delete(r.supplied, name)
			if ref := r.refs[name]; ref != nil {
				ref.Install(nil, Info{}, nil)
				delete(r.refs, name)
			}
		}
	}
	for name, code := range modules {
		if _, builtin := r.code[name]; builtin {
			continue
		}
		if _, kept := r.supplied[name]; !kept {
			r.supplied[name] = suppliedModule{code: code}
			changed = true
		}
	}
}

// Get is the named module, loading it the first time (ErrUnknownModule: no such name). The load (for a
// supplied module, the conformance gate: about a second) runs without the registry's lock, so syncs of
// sets naming other modules go on meanwhile; Gets of the same name wait for that one load. It runs on its
// own context (wasm.Gates): a caller whose deadline comes first gets wasm.ErrStillChecking, and the load
// goes on to its verdict, which the next Get returns.
func (r *Registry) Get(ctx context.Context, name string) (*Ref, error) {
	if r == nil {
		return nil, fmt.Errorf("%w %q: no named modules", ErrUnknownModule, name)
	}
	for {
		r.mu.Lock()
		if ref := r.refs[name]; ref != nil {
			r.mu.Unlock()
			return ref, nil
		}
		load, source, gen := r.load, "registry:"+name, r.gen
		code, builtin := r.code[name]
		if !builtin {
			sm, supplied := r.supplied[name]
			if !supplied {
				err := fmt.Errorf("%w %q: the modules are %s", ErrUnknownModule, name, r.namesLocked())
				r.mu.Unlock()
				return nil, err
			}
			if sm.refused.Holds(r.clock()) {
				r.mu.Unlock()
				return nil, sm.refused.Err
			}
			code, load, source = sm.code, r.check, "registry:"+name+" (supplied)"
		}
		r.mu.Unlock()
		v, err := r.loading.Do(ctx, name+"@"+strconv.FormatUint(gen, 10), func(ctx context.Context) (any, error) {
			m, err := load(ctx, code)
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.gen != gen { // supplied anew (these bytes may be gone) or closed meanwhile
				if m != nil {
					_ = m.Close(context.WithoutCancel(ctx))
				}
				return nil, errSuppliedAnew
			}
			if err != nil {
				if !builtin {
					sm := r.supplied[name]
					sm.refused = wasm.RefusalOf(fmt.Errorf("%w: %q: %w", ErrModuleRefused, name, err), r.clock())
					r.supplied[name] = sm
					return nil, sm.refused.Err
				}
				return nil, fmt.Errorf("module %q: %w", name, err)
			}
			info := InfoOf(m)
			info.Source = source
			ref := &Ref{}
			ref.Install(m, info, func() { _ = m.Close(context.Background()) })
			r.refs[name] = ref
			return ref, nil
		})
		if errors.Is(err, errSuppliedAnew) {
			continue
		}
		if errors.Is(err, wasm.ErrStillChecking) {
			return nil, fmt.Errorf("module %q is %w", name, err)
		}
		if err != nil {
			return nil, err
		}
		return v.(*Ref), nil
	}
}

// Reconciler is the named module's active reconciler (Get, then Load): the registry as a replay, a
// preview, the webhook or the CLI asks for a module a set names (replay.Options.NamedModule).
func (r *Registry) Reconciler(ctx context.Context, name string) (hostplan.Reconciler, error) {
	for {
		ref, err := r.Get(ctx, name)
		if err != nil {
			return nil, err
		}
		if m, _ := ref.Load(); m != nil {
			return m, nil
		}
		// withdrawn between Get and Load (supplied anew): Get looks again
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// errSuppliedAnew: a Supply or Close came while a module loaded; Get looks again.
var errSuppliedAnew = errors.New("supplied anew")

// Names lists the registry's names, quoted, for messages.
func (r *Registry) Names() string {
	if r == nil {
		return "none"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.namesLocked()
}

func (r *Registry) namesLocked() string {
	names := make([]string, 0, len(r.code)+len(r.supplied))
	for n := range r.code {
		names = append(names, strconv.Quote(n))
	}
	for n := range r.supplied {
		names = append(names, strconv.Quote(n))
	}
	if len(names) == 0 {
		return "none"
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
	r.gen++
	for _, ref := range r.refs {
		ref.Install(nil, Info{}, nil)
	}
	r.refs = map[string]*Ref{}
}
