package module

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordinal-dev/ordinal/abi"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// Reconciler is what the controller calls once per sync (host/plan's, the one sync step's).
type Reconciler = hostplan.Reconciler

// Info describes the active module for metrics, logs and /readyz.
type Info struct {
	Describe    abi.Describe `json:"describe"`
	Digest      string       `json:"digest"`               // "sha256:..."
	Source      string       `json:"source,omitempty"`     // "embedded", "file:PATH", "configmap:NS/NAME/KEY"
	ActiveSince time.Time    `json:"activeSince,omitzero"` // when it became active
}

// ShortDigest is the first 12 hex digits of the digest (for log lines).
func (i Info) ShortDigest() string {
	const p = len("sha256:")
	if len(i.Digest) >= p+12 {
		return i.Digest[p : p+12]
	}
	return i.Digest
}

// Ref holds the active module behind an atomic pointer. Each sync acquires
// it once (Acquire) and releases it when done, so a hot swap takes effect between
// syncs and never in the middle of one: syncs in flight finish on the module they
// started with, and a module swapped out is released (closed) only once the last
// of them is done.
type Ref struct {
	p atomic.Pointer[activeModule]
}

type activeModule struct {
	r    Reconciler
	info Info
	// release frees the module once it is retired and no sync uses it (nil: the
	// module is not the ref's to close).
	release func()
	users   atomic.Int64
	retired atomic.Bool
	once    sync.Once
}

func (a *activeModule) maybeRelease() {
	if a.release != nil && a.retired.Load() && a.users.Load() == 0 {
		a.once.Do(a.release)
	}
}

// NewRef wraps a loaded module.
func NewRef(m *wasm.Module) *Ref {
	ref := &Ref{}
	ref.Swap(m, InfoOf(m))
	return ref
}

// InfoOf reads a loaded module's describe output and digest.
func InfoOf(m *wasm.Module) Info {
	return Info{Describe: m.Describe(), Digest: fmt.Sprintf("sha256:%x", m.Digest())}
}

// Swap installs r as the active reconciler and returns the previous one (nil if
// none), which the caller still owns. Syncs already running finish on the
// previous module.
func (ref *Ref) Swap(r Reconciler, info Info) Reconciler {
	old := ref.install(r, info, nil)
	if old == nil {
		return nil
	}
	return old.r
}

// Install makes r the active reconciler. release, if not nil, is called once r
// has been swapped out and the last sync using it has finished (e.g. to close
// the module and free its instances). The previous module is released by the
// same rule, if it was installed with a release function.
func (ref *Ref) Install(r Reconciler, info Info, release func()) {
	ref.install(r, info, release)
}

func (ref *Ref) install(r Reconciler, info Info, release func()) *activeModule {
	if info.ActiveSince.IsZero() {
		info.ActiveSince = time.Now()
	}
	old := ref.p.Swap(&activeModule{r: r, info: info, release: release})
	if old != nil {
		old.retired.Store(true)
		old.maybeRelease()
	}
	return old
}

// Load returns the active reconciler and its description, without holding it:
// use Acquire for a call that must not race with a swap's release.
func (ref *Ref) Load() (Reconciler, Info) {
	a := ref.p.Load()
	if a == nil {
		return nil, Info{}
	}
	return a.r, a.info
}

// Acquire returns the active reconciler and its description, held until done
// is called: a module swapped out meanwhile is not released before that.
func (ref *Ref) Acquire() (r Reconciler, info Info, done func()) {
	for {
		a := ref.p.Load()
		if a == nil {
			return nil, Info{}, func() {}
		}
		a.users.Add(1)
		if ref.p.Load() == a {
			return a.r, a.info, sync.OnceFunc(func() {
				a.users.Add(-1)
				a.maybeRelease()
			})
		}
		// swapped out between the two loads: let go and take the new one
		a.users.Add(-1)
		a.maybeRelease()
	}
}
