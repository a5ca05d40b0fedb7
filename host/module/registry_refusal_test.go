package module

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/host/embedded"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// A supplied module whose check ran out of time (a compile on a loaded machine) is refused for
// wasm.RecheckAfter, then checked again, and used once it passes; one refused for its content stays
// refused however long it waits. The clock is the registry's, set by the test.
func TestATimedOutCheckIsRetriedAContentRefusalIsNot(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	c := &timingOutFirst{}
	check := c.check
	reg := NewRegistry(nil, nil)
	reg.now = func() time.Time { return now }
	t.Cleanup(reg.Close)
	reg.Supply(check, map[string][]byte{"slow": embedded.Module(), "junk": []byte("junk, not wasm")})

	for _, name := range []string{"slow", "junk"} {
		if _, err := reg.Get(ctx, name); !errors.Is(err, ErrModuleRefused) {
			t.Fatalf("%s: %v, want a refusal", name, err)
		}
	}
	now = now.Add(wasm.RecheckAfter - time.Second)
	if _, err := reg.Get(ctx, "slow"); !errors.Is(err, ErrModuleRefused) || !errors.Is(err, wasm.ErrTimeout) || c.count("\x00asm") != 1 {
		t.Fatalf("before RecheckAfter: %v after %d checks, want the timeout's refusal, not another check", err, c.count("\x00asm"))
	}
	now = now.Add(time.Second)
	if ref, err := reg.Get(ctx, "slow"); err != nil || ref == nil || c.count("\x00asm") != 2 {
		t.Fatalf("after RecheckAfter: %v after %d checks, want the module checked again and used", err, c.count("\x00asm"))
	}
	now = now.Add(24 * time.Hour)
	if _, err := reg.Get(ctx, "junk"); !errors.Is(err, ErrModuleRefused) || c.count("junk") != 1 {
		t.Fatalf("a module refused for its content, a day on: %v after %d checks, want the same refusal, not checked again", err, c.count("junk"))
	}
}

// timingOutFirst is a module check that refuses bytes starting "junk" for their content and runs out of time
// at the first check of any other bytes, then loads them; checks counts the checks by the bytes' first four.
type timingOutFirst struct {
	mu     sync.Mutex
	checks map[string]int
}

func (c *timingOutFirst) check(ctx context.Context, code []byte) (*wasm.Module, error) {
	c.mu.Lock()
	if c.checks == nil {
		c.checks = map[string]int{}
	}
	c.checks[string(code[:4])]++
	n := c.checks[string(code[:4])]
	c.mu.Unlock()
	if string(code[:4]) == "junk" {
		return nil, &wasm.Error{Kind: wasm.ErrBadModule, Op: "load", Msg: "not a valid wasm module"}
	}
	if n == 1 {
		return nil, &wasm.Error{Kind: wasm.ErrTimeout, Op: "load", Msg: "compile exceeded the 2s timeout"}
	}
	return wasm.Load(ctx, code, wasm.Config{})
}

// count is how many times bytes starting with prefix were checked.
func (c *timingOutFirst) count(prefix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checks[prefix]
}
