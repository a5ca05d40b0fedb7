package wasm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
	// a policy module (LoadPolicy refuses a module without a policy's exports before it compiles anything)
	pol, err := os.ReadFile(filepath.Join("..", "..", "policies", "window", "window.wasm"))
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
		_, err = LoadPolicy(past, pol, Config{CacheDir: dir})
		wantTimeout("a policy, a deadline already passed", err, "compile exceeded the caller's deadline")
	}
	if compiles != 0 {
		t.Fatalf("%d compiles started for a deadline already passed", compiles)
	}

	// A compile still running when the load's context ends: held until Load has returned, the context ended
	// by the test once the compile has started (a 1ms Config.Timeout could fire before the compile starts on a
	// loaded machine, and then nothing would be abandoned).
	release, entered, ended := make(chan struct{}), make(chan struct{}, 1), make(chan wazero.Runtime, 1)
	compileModule = func(rt wazero.Runtime, ctx context.Context, code []byte) (wazero.CompiledModule, error) {
		entered <- struct{}{}
		<-release
		c, err := real(rt, ctx, code)
		ended <- rt
		return c, err
	}
	closed := make(chan struct{})
	abandonedClosed = func() { close(closed) }
	defer func() { abandonedClosed = nil }()
	ctx, stop := context.WithCancel(context.Background())
	go func() { <-entered; stop() }()
	_, err = Load(ctx, bin, Config{})
	var e *Error
	if !errors.Is(err, ErrCanceled) || !errors.As(err, &e) || e.Op != "load" || !strings.Contains(err.Error(), "compile canceled by the caller") {
		t.Fatalf("a compile whose context ended: got %v; want a canceled load", err)
	}
	close(release)
	rt := <-ended
	// The abandoned compile's runtime is closed once it ends (waited for: a runtime must not be used while it
	// closes, which an earlier version of this test did, and wazero's store panicked under load): compiling
	// in it then fails.
	<-closed
	tiny := tinyModule(nil, nil, []byte{0, 0x0b})
	if _, err := rt.CompileModule(context.Background(), tiny); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("compiling in the abandoned compile's runtime: %v, want it closed", err)
	}

	// A compile cut by Config.Timeout says which limit ended it.
	late, cancelLate := context.WithDeadlineCause(context.Background(), time.Now().Add(-time.Second), &timeoutCause{limit: time.Millisecond.String()})
	defer cancelLate()
	wantTimeout("a compile past Config.Timeout", compileStopped(late), "compile exceeded 1ms timeout")
}
