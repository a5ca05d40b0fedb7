package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/wasm"
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
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "limit for one reconcile call")
	f.Uint32Var(&o.memoryLimitMB, "memory-limit-mib", 256, "guest memory limit in MiB")
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
		b, err := os.ReadFile(o.path)
		if err != nil {
			return nil, withCode(ExitUsage, fmt.Errorf("reading module: %w", err))
		}
		code = b
	}
	m, err := o.loadCode(ctx, code)
	if err != nil {
		return nil, withCode(ExitModuleFailure, err)
	}
	return m, nil
}

// loadCode compiles (through the compilation cache) and instantiates a module with the chosen limits.
func (o *moduleOptions) loadCode(ctx context.Context, code []byte) (*wasm.Module, error) {
	return wasm.Load(ctx, code, wasm.Config{
		CacheDir:         o.cacheDir,
		Timeout:          o.timeout,
		MemoryLimitPages: o.memoryLimitMB * 16, // 64 KiB pages
	})
}
