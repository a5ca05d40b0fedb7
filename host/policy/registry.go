package policy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/policyfixture"
)

// Registry is the policies a set may name (abi.AnnotationPolicies), one for a process: the shipped ones,
// those of --policy files (by the name each describes), and those a ConfigMap supplies at run time, each
// gated on its own fixtures before it is used. Each is loaded on first use. Safe for concurrent use.
type Registry struct {
	load func(ctx context.Context, code []byte) (*wasm.Policy, error)

	gates wasm.Gates // one gate per supplied name and generation at a time, outside mu and the callers' deadlines

	mu       sync.Mutex
	gen      uint64 // counts Supply and Close calls: a gate that began before one installs nothing
	builtin  map[string][]byte
	files    map[string]*wasm.Policy // loaded at start: a file that does not load is a usage error then
	supplied map[string]Supplied
	loaded   map[string]*wasm.Policy // builtin and supplied, loaded (and gated) on first use
	refused  map[string]wasm.Refusal // supplied policies the gate refused, until their bytes change (a gate out of time: for a while)
	onSupply []func()

	bmu      sync.Mutex
	breakers map[*wasm.Policy]*breaker // each loaded policy's timeouts in a row (breaker.go)
	now      func() time.Time          // the breakers' and the refusals' clock (nil: time.Now); tests set it
}

func (r *Registry) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

// Supplied is a policy a ConfigMap supplies: its module and its fixtures (a JSON array of {"input",
// "answer"}, the format of policies/*/testdata), which it must answer exactly before it is used.
type Supplied struct {
	Code, Fixtures []byte
}

// ErrRefused wraps a supplied policy's refusal by the gate; ErrDuplicate, two --policy modules of one name.
var (
	ErrRefused   = errors.New("policy refused")
	ErrDuplicate = errors.New("two policy modules of one name")
)

// NewRegistry is a registry of these shipped policies, loading each with load (the process's limits).
func NewRegistry(load func(ctx context.Context, code []byte) (*wasm.Policy, error), builtin map[string][]byte) *Registry {
	return &Registry{load: load, builtin: builtin, files: map[string]*wasm.Policy{}, supplied: map[string]Supplied{},
		loaded: map[string]*wasm.Policy{}, refused: map[string]wasm.Refusal{}}
}

// AddFile adds a policy module given by file (--policy): loaded now, under the name it describes; a second
// module of one name is an error.
func (r *Registry) AddFile(ctx context.Context, code []byte, source string) error {
	p, err := r.load(ctx, code)
	if err != nil {
		return fmt.Errorf("policy %s: %w", source, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.files[p.Name()]; dup {
		p.Close(ctx)
		return fmt.Errorf("%w: %s is the policy %q too", ErrDuplicate, source, p.Name())
	}
	r.files[p.Name()] = p
	return nil
}

// Get is the named policy: a file's, else a supplied one (gated), else a shipped one. A supplied policy's
// gate runs without the registry's lock and on its own context (wasm.Gates): a caller whose deadline
// comes first gets wasm.ErrStillChecking, and the gate goes on to its verdict, which the next Get returns.
func (r *Registry) Get(ctx context.Context, name string) (Module, error) {
	for {
		r.mu.Lock()
		if p := r.files[name]; p != nil {
			r.mu.Unlock()
			return r.guarded(p), nil
		}
		if p := r.loaded[name]; p != nil {
			r.mu.Unlock()
			return r.guarded(p), nil
		}
		if refused := r.refused[name]; refused.Holds(r.clock()) {
			r.mu.Unlock()
			return nil, refused.Err
		}
		s, supplied := r.supplied[name]
		if !supplied {
			defer r.mu.Unlock()
			return r.shippedLocked(ctx, name)
		}
		gen := r.gen
		r.mu.Unlock()
		v, err := r.gates.Do(ctx, name+"@"+strconv.FormatUint(gen, 10), func(ctx context.Context) (any, error) {
			p, err := r.gate(ctx, name, s)
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.gen != gen { // supplied anew (these bytes may be gone) or closed meanwhile
				if p != nil {
					p.Close(ctx)
				}
				return nil, errSuppliedAnew
			}
			if err != nil {
				r.refused[name] = wasm.RefusalOf(fmt.Errorf("%w: %w", ErrRefused, err), r.clock())
				return nil, r.refused[name].Err
			}
			r.loaded[name] = p
			return p, nil
		})
		switch {
		case errors.Is(err, errSuppliedAnew):
			continue
		case errors.Is(err, wasm.ErrStillChecking):
			return nil, fmt.Errorf("policy %q is %w", name, err)
		case err != nil:
			return nil, err
		}
		return r.guarded(v.(*wasm.Policy)), nil
	}
}

// errSuppliedAnew: a Supply or Close came while a policy was gated; Get looks again.
var errSuppliedAnew = errors.New("supplied anew")

// shippedLocked is the shipped policy of this name, loaded on first use (trusted: a failure is not kept).
func (r *Registry) shippedLocked(ctx context.Context, name string) (Module, error) {
	code, ok := r.builtin[name]
	if !ok {
		return nil, fmt.Errorf("no policy %q: give its module with --policy FILE or the module ConfigMap's %s.policy.wasm (shipped: %s)",
			name, name, strings.Join(slices.Sorted(maps.Keys(r.builtin)), ", "))
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
	return r.guarded(p), nil
}

// gate loads a supplied policy and runs its fixtures: it must describe itself by the name it is supplied
// under and answer every fixture exactly (CheckName, CheckFixture: what `ordinal policy test` runs too).
func (r *Registry) gate(ctx context.Context, name string, s Supplied) (*wasm.Policy, error) {
	fixtures, err := policyfixture.ParseArray(s.Fixtures)
	if err != nil {
		return nil, fmt.Errorf("a supplied policy comes with its fixtures (%s.policy.fixtures.json: a JSON array of {\"input\", \"answer\"}, at least one): %w", name, err)
	}
	p, err := r.load(ctx, s.Code)
	if err != nil {
		return nil, err
	}
	if err := CheckName(p, name); err != nil {
		p.Close(ctx)
		return nil, err
	}
	for _, f := range fixtures {
		if _, err := CheckFixture(ctx, p, f); err != nil {
			p.Close(ctx)
			return nil, fmt.Errorf("%s (%s): %w", f.Name, f.Description, err)
		}
	}
	return p, nil
}

// Supply replaces the supplied policies; a policy whose bytes or fixtures changed, or that is gone, is
// released (a sync holding it finishes with it) and gated again when a set next names it.
func (r *Registry) Supply(policies map[string]Supplied) {
	r.mu.Lock()
	r.gen++
	changed := false
	for name, prev := range r.supplied {
		if s, ok := policies[name]; !ok || string(s.Code) != string(prev.Code) || string(s.Fixtures) != string(prev.Fixtures) {
			changed = true
			delete(r.supplied, name)
			delete(r.refused, name)
			if p := r.loaded[name]; p != nil {
				delete(r.loaded, name)
				r.forget(p)
				go p.Close(context.Background()) // waits for the calls in flight
			}
		}
	}
	for name, s := range policies {
		if _, builtin := r.builtin[name]; builtin {
			continue // a shipped policy's name cannot be supplied, as a built-in module's cannot
		}
		if _, kept := r.supplied[name]; !kept {
			r.supplied[name] = s
			changed = true
		}
	}
	callbacks := r.onSupply
	r.mu.Unlock()
	if changed {
		for _, f := range callbacks {
			f()
		}
	}
}

// OnSupply registers f, called after a Supply that changed the policies (the controller syncs the sets
// that name policies again).
func (r *Registry) OnSupply(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onSupply = append(r.onSupply, f)
}

// Close releases every loaded policy.
func (r *Registry) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gen++
	for _, m := range []map[string]*wasm.Policy{r.files, r.loaded} {
		for n, p := range m {
			p.Close(context.Background())
			delete(m, n)
		}
	}
	r.bmu.Lock()
	r.breakers = nil
	r.bmu.Unlock()
}
