package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/readlimit"
)

// moduleOptions are the flags that choose and limit the reconcile module, shared by every command.
type moduleOptions struct {
	path          string
	cacheDir      string
	timeout       time.Duration
	memoryLimitMB uint32
}

func (o *moduleOptions) bind(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&o.path, "module", "", "reconcile module (.wasm) to run instead of the embedded default")
	f.StringVar(&o.cacheDir, "cache-dir", defaultCacheDir(), "directory for compiled modules (\"\" disables the on-disk cache)")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "limit for one reconcile call (positive)")
	f.Uint32Var(&o.memoryLimitMB, "memory-limit-mib", 256, "guest memory limit in MiB (1 to 4096)")
}

func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "ordinal", "wazero")
}

// load compiles and checks the chosen module. Any failure is a module failure (exit 4).
func (o *moduleOptions) load(ctx context.Context) (*wasm.Module, error) {
	code := embedded.Module()
	if o.path != "" {
		b, err := readModuleFile(o.path)
		if err != nil {
			return nil, err
		}
		code = b
	}
	m, err := o.loadCode(ctx, code)
	var usage *exitError
	if err != nil && !errors.As(err, &usage) {
		err = withCode(ExitModuleFailure, err)
	}
	return m, err
}

// maxMemoryLimitMiB is the most a wasm32 memory can have (65536 pages of 64 KiB).
const maxMemoryLimitMiB = 4096

// validate refuses limits that cannot be meant: --timeout 0 once meant 30 s and a negative one none,
// and --memory-limit-mib above 4096 was clamped (or overflowed) without a word.
func (o *moduleOptions) validate() error {
	switch {
	case o.timeout <= 0:
		return withCode(ExitUsage, fmt.Errorf("--timeout %s: the limit for one reconcile call must be positive", o.timeout))
	case o.memoryLimitMB == 0 || o.memoryLimitMB > maxMemoryLimitMiB:
		return withCode(ExitUsage, fmt.Errorf("--memory-limit-mib %d: the guest memory limit is 1 to %d MiB (a wasm32 memory's maximum)", o.memoryLimitMB, maxMemoryLimitMiB))
	}
	return nil
}

// loadCode compiles (through the compilation cache) and instantiates a module with the chosen limits.
func (o *moduleOptions) loadCode(ctx context.Context, code []byte) (*wasm.Module, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	return wasm.Load(ctx, code, wasm.Config{
		CacheDir:         o.cacheDir,
		Timeout:          o.timeout,
		MemoryLimitPages: o.memoryLimitMB * 16, // 64 KiB pages
	})
}

// readModuleFile reads a module file, at most as large as a module may be (wasm.ModuleLimits.MaxBytes).
func readModuleFile(path string) ([]byte, error) {
	b, err := readlimit.File(path, wasm.DefaultMaxModuleBytes, "module "+path, "")
	if err != nil {
		return nil, withCode(ExitUsage, fmt.Errorf("reading module: %w", err))
	}
	return b, nil
}

// embeddedModules is the registry of modules a set may name with ordinal.dev/module (abi.AnnotationModule):
// the embedded faithful module and the extended one (README "Beyond upstream"). Embedded modules are
// trusted as the default one is: built and tested with the binary.
func embeddedModules() map[string][]byte {
	return map[string][]byte{"faithful": embedded.Module(), "extended": embedded.ExtendedModule()}
}

// namedModuleLoader loads, on first use, the registry's module a set names, with these options' limits,
// once per name (safe for concurrent use: a pooled *wasm.Module serves concurrent syncs); close frees
// those loaded. For replays, previews, timelines and the webhook (the controller loads them at start).
func (o *moduleOptions) namedModuleLoader() (load func(ctx context.Context, name string) (replay.Reconciler, error), close func(ctx context.Context)) {
	var mu sync.Mutex
	loaded := map[string]*wasm.Module{}
	load = func(ctx context.Context, name string) (replay.Reconciler, error) {
		mu.Lock()
		defer mu.Unlock()
		if m := loaded[name]; m != nil {
			return m, nil
		}
		code, ok := embeddedModules()[name]
		if !ok {
			return nil, fmt.Errorf("no module %q (the registry has %s)", name, registryNames())
		}
		m, err := o.loadCode(ctx, code)
		if err != nil {
			return nil, err
		}
		loaded[name] = m
		return m, nil
	}
	close = func(ctx context.Context) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range loaded {
			m.Close(ctx)
		}
	}
	return load, close
}

// registryNames lists the registry's names, for messages.
func registryNames() string {
	names := make([]string, 0, 2)
	for n := range embeddedModules() {
		names = append(names, strconv.Quote(n))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
