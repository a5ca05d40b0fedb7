package wasm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// Issue 32, finding 10: a module just under the static limits compiled for ~9 s, past --timeout, which
// bounded only calls. The compile is now bounded by Config.Timeout and the caller's deadline: a deadline
// already passed compiles nothing, and a compile still running at the deadline fails the Load at once
// with ErrTimeout (naming the compile), then finishes on its own and closes its runtime. Nothing here
// depends on the machine's speed: the compile is held until the Load has returned.
func TestTimeoutBoundsCompile(t *testing.T) {
	bin, err := os.ReadFile(filepath.Join("..", "embedded", "ordinal.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	wantTimeout := func(what string, err error, mention string) {
		t.Helper()
		var e *Error
		if !errors.Is(err, ErrTimeout) || !errors.As(err, &e) || e.Op != "load" || !strings.Contains(err.Error(), mention) {
			t.Fatalf("%s: got %v; want a load timeout mentioning %q", what, err, mention)
		}
	}
	compiles := 0
	real := compileModule
	compileModule = func(rt wazero.Runtime, ctx context.Context, code []byte) (wazero.CompiledModule, error) {
		compiles++
		return real(rt, ctx, code)
	}
	defer func() { compileModule = real }()

	past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for _, dir := range []string{"", t.TempDir()} { // with the on-disk cache too, which is not retried
		_, err = Load(past, bin, Config{CacheDir: dir})
		wantTimeout("a deadline already passed", err, "compile exceeded the caller's deadline")
		_, err = LoadPolicy(past, bin, Config{CacheDir: dir})
		wantTimeout("a policy, a deadline already passed", err, "compile exceeded the caller's deadline")
	}
	if compiles != 0 {
		t.Fatalf("%d compiles started for a deadline already passed", compiles)
	}

	// A compile that outlasts Config.Timeout: held until Load has returned.
	release, ended := make(chan struct{}), make(chan wazero.Runtime, 1)
	compileModule = func(rt wazero.Runtime, ctx context.Context, code []byte) (wazero.CompiledModule, error) {
		<-release
		c, err := real(rt, ctx, code)
		ended <- rt
		return c, err
	}
	_, err = Load(context.Background(), bin, Config{Timeout: time.Millisecond})
	wantTimeout("a compile past Config.Timeout", err, "compile exceeded 1ms timeout")
	close(release)
	rt := <-ended
	// The abandoned compile's runtime is closed once it ends: compiling in it then fails.
	tiny := tinyModule(nil, nil, []byte{0, 0x0b})
	for {
		_, err := rt.CompileModule(context.Background(), tiny)
		if err != nil {
			if !strings.Contains(err.Error(), "closed") {
				t.Fatalf("compiling in the abandoned compile's runtime: %v", err)
			}
			break
		}
		runtime.Gosched() // the compile's goroutine closes it once the compile has returned
	}
}
