package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/module"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/readlimit"
)

// moduleOptions are the flags that choose and limit the reconcile module, shared by every command.
type moduleOptions struct {
	path          string
	cacheDir      string
	timeout       time.Duration
	memoryLimitMB uint32
	policyFiles   []string
}

func (o *moduleOptions) bind(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&o.path, "module", "", "reconcile module (.wasm) to run instead of the embedded default")
	f.StringVar(&o.cacheDir, "cache-dir", defaultCacheDir(), "cache of compiled modules")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "time limit of a module's compile and of each call")
	f.Uint32Var(&o.memoryLimitMB, "memory-limit-mib", 256, "guest memory limit in MiB (1 to 4096)")
	f.StringArrayVar(&o.policyFiles, "policy", nil, "a policy module (.wasm) sets may name; repeatable")
	appendHelp(cmd, `Modules: compiled modules are cached in --cache-dir ("" disables the on-disk cache); --timeout
(positive) bounds compiling a module and each call into it. --policy adds a policy module that a set may name
with ordinal.dev/policies, by the name the module describes; handoff, pdb, window and zones are shipped.`)
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

// registry is the modules a set may name with ordinal.dev/module (abi.AnnotationModule): the embedded
// faithful module and the extended one (docs/extensions.md), loaded on first use with these
// options' limits. Embedded modules are trusted as the default one is: built and tested with the binary.
func (o *moduleOptions) registry() *module.Registry {
	return module.NewRegistry(o.loadCode, map[string][]byte{"faithful": embedded.Module(), "extended": embedded.ExtendedModule()})
}

// loadedModules are what a command's syncs and replays run on: the module (--module, else the embedded one),
// the policies (--policy and the embedded ones) and the modules a set may name. close, where set, releases
// them all (commandModules close their own).
type loadedModules struct {
	module *wasm.Module
	pols   *policy.Registry
	named  func(ctx context.Context, name string) (hostplan.Reconciler, error)
	close  func()
}

// commandModules are one offline command's modules, each loaded on first use and then shared by its steps
// (judging a snapshot, settling a scenario, previewing the edit), so the module is compiled or read from
// the cache once, and an input that cannot be read is still reported before a module that cannot load.
// Judging a snapshot needs no policy: a --policy that cannot load fails the replay that runs it.
type commandModules struct {
	opts           *moduleOptions
	parent         *commandModules // whose reconciler these share (withPolicyFiles)
	module         *wasm.Module
	named          func(ctx context.Context, name string) (hostplan.Reconciler, error)
	closeNamed     func()
	pols           *policy.Registry
	moduleErr      error
	polsErr        error
	loadedModule   bool
	loadedPolicies bool
}

// commandModules are these options' modules for one command; the caller closes them.
func (o *moduleOptions) commandModules() *commandModules { return &commandModules{opts: o} }

// withPolicyFiles are c's modules with these policy files beside c's own (a test's): the module is c's,
// loaded once for every test; the policies are loaded for the child alone, and closed with it.
func (c *commandModules) withPolicyFiles(files []string) *commandModules {
	o := *c.opts
	o.policyFiles = append(slices.Clone(c.opts.policyFiles), files...)
	return &commandModules{opts: &o, parent: c}
}

// reconciler is the module and the modules a set may name: what a single sync runs on.
func (c *commandModules) reconciler(ctx context.Context) (*wasm.Module, func(context.Context, string) (hostplan.Reconciler, error), error) {
	if c.parent != nil {
		return c.parent.reconciler(ctx)
	}
	if !c.loadedModule {
		c.loadedModule = true
		if c.module, c.moduleErr = c.opts.load(ctx); c.moduleErr == nil {
			c.named, c.closeNamed = c.opts.replayModules()
		}
	}
	return c.module, c.named, c.moduleErr
}

// all is what a replay runs on: the reconciler and the policies.
func (c *commandModules) all(ctx context.Context) (*loadedModules, error) {
	m, named, err := c.reconciler(ctx)
	if err != nil {
		return nil, err
	}
	if !c.loadedPolicies {
		c.loadedPolicies = true
		c.pols, c.polsErr = c.opts.policies(ctx)
	}
	if c.polsErr != nil {
		return nil, c.polsErr
	}
	return &loadedModules{module: m, pols: c.pols, named: named}, nil // closed with c
}

// close releases what was loaded; a command closes them once its last replay is done, before it writes
// what it found (a module's instances are megabytes), and again, doing nothing, when it returns.
func (c *commandModules) close() {
	if c.closeNamed != nil {
		c.closeNamed()
	}
	if c.pols != nil {
		c.pols.Close()
	}
	if c.module != nil {
		c.module.Close(context.Background())
	}
	c.closeNamed, c.pols, c.module, c.named = nil, nil, nil, nil
	c.moduleErr, c.polsErr = errClosedModules, errClosedModules
	c.loadedModule, c.loadedPolicies = true, true // never loaded again
}

// errClosedModules is what commandModules give after close (a command that closed them too early).
var errClosedModules = errors.New("internal error: the command's modules were closed")

// replayModules is a registry as replay.Options.NamedModule (replays, previews, timelines, the webhook);
// close releases what it loaded.
func (o *moduleOptions) replayModules() (named func(ctx context.Context, name string) (hostplan.Reconciler, error), close func()) {
	return namedModules(o.registry())
}

// namedModules is reg as replay.Options.NamedModule; close releases what it loaded.
func namedModules(reg *module.Registry) (named func(ctx context.Context, name string) (hostplan.Reconciler, error), close func()) {
	return reg.Reconciler, reg.Close
}
