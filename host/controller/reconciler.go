package controller

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// Reconciler is what the controller calls once per sync: snapshot JSON in, plan
// JSON out (ABI v1). *wasm.Module implements it.
type Reconciler interface {
	Reconcile(ctx context.Context, snapshot []byte) ([]byte, error)
}

// ModuleInfo describes the active module for metrics and logs.
type ModuleInfo struct {
	Describe abi.Describe
	Digest   string // "sha256:..."
}

// ModuleRef holds the active module behind an atomic pointer. Each sync loads
// it once, so a later hot swap (Swap) takes effect between syncs and never in
// the middle of one. The controller does not close modules it did not load.
type ModuleRef struct {
	p atomic.Pointer[activeModule]
}

type activeModule struct {
	r    Reconciler
	info ModuleInfo
}

// NewModuleRef wraps a loaded module.
func NewModuleRef(m *wasm.Module) *ModuleRef {
	ref := &ModuleRef{}
	ref.Swap(m, ModuleInfoOf(m))
	return ref
}

// ModuleInfoOf reads a loaded module's describe output and digest.
func ModuleInfoOf(m *wasm.Module) ModuleInfo {
	return ModuleInfo{Describe: m.Describe(), Digest: fmt.Sprintf("sha256:%x", m.Digest())}
}

// Swap installs r as the active reconciler and returns the previous one (nil
// if none). Syncs already running finish on the previous module.
func (ref *ModuleRef) Swap(r Reconciler, info ModuleInfo) Reconciler {
	old := ref.p.Swap(&activeModule{r: r, info: info})
	if old == nil {
		return nil
	}
	return old.r
}

// Load returns the active reconciler and its description.
func (ref *ModuleRef) Load() (Reconciler, ModuleInfo) {
	a := ref.p.Load()
	if a == nil {
		return nil, ModuleInfo{}
	}
	return a.r, a.info
}
