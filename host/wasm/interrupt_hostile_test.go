package wasm

import (
	"context"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

// An imported global shifts the new globals' indexes; the module's own global.get of its imported and
// defined globals still reads them.
func TestInterruptWithImportedGlobals(t *testing.T) {
	sec := func(id byte, c []byte) []byte { return append(appendU32([]byte{id}, uint32(len(c))), c...) }
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, sec(1, []byte{1, 0x60, 0, 1, 0x7f})...) // () -> i32
	// import env.g (const i32), env.h (mut i32)
	imp := []byte{2, 3, 'e', 'n', 'v', 1, 'g', 0x03, 0x7f, 0x00, 3, 'e', 'n', 'v', 1, 'h', 0x03, 0x7f, 0x01}
	m = append(m, sec(2, imp)...)
	m = append(m, sec(3, []byte{1, 0})...)
	m = append(m, sec(6, []byte{1, 0x7f, 0x01, 0x41, 5, 0x0b})...) // global 2 = 5
	exports := []byte{1, 1, 'f', 0x00, 0}
	m = append(m, sec(7, exports)...)
	// f: global.set 1 (global.get 0 + 1); global.get 0 + global.get 1 + global.get 2
	body := []byte{0, 0x23, 0, 0x41, 1, 0x6a, 0x24, 1, 0x23, 0, 0x23, 1, 0x6a, 0x23, 2, 0x6a, 0x0b}
	code := appendU32([]byte{1}, uint32(len(body)))
	m = append(m, sec(10, append(code, body...))...)

	out, err := instrumentInterrupts(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	// env: exports g = 10 (const), h = 0 (mut)
	env := []byte("\x00asm\x01\x00\x00\x00")
	env = append(env, sec(6, []byte{2, 0x7f, 0x00, 0x41, 10, 0x0b, 0x7f, 0x01, 0x41, 0, 0x0b})...)
	env = append(env, sec(7, []byte{2, 1, 'g', 0x03, 0, 1, 'h', 0x03, 1})...)
	if _, err := rt.InstantiateWithConfig(ctx, env, wazero.NewModuleConfig().WithName("env")); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, out)
	if err != nil {
		t.Fatalf("instrumented: %v", err)
	}
	g, ok := interruptGlobalsOf(mod)
	if !ok {
		t.Fatal("no interrupt globals")
	}
	g.budget.Set(100)
	res, err := mod.ExportedFunction("f").Call(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res[0] != 10+11+5 {
		t.Errorf("f() = %d, want 26", res[0])
	}
	if g.budget.Get() != 99 {
		t.Errorf("budget %d, want 99", g.budget.Get())
	}
	g.stop.Set(1)
	if _, err := mod.ExportedFunction("f").Call(ctx); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("stopped call: %v", err)
	}
	// global.get 3 (the budget, with 3 module globals) is refused; so is a huge LEB index.
	for _, idx := range [][]byte{{3}, {4}, {0xff, 0xff, 0xff, 0xff, 0x0f}} {
		bad := append([]byte{}, m[:len(m)-len(body)-len(code)-2]...)
		b := append(append([]byte{0, 0x23}, idx...), 0x0b)
		c := appendU32([]byte{1}, uint32(len(b)))
		bad = append(bad, sec(10, append(c, b...))...)
		if _, err := instrumentInterrupts(bad); err == nil || !strings.Contains(err.Error(), "names global") {
			t.Errorf("global.get %x: %v", idx, err)
		}
	}
}

// instrumentInterrupts must not panic on malformed bytes (Load scans first, but the instrumenter is
// also the prepared cache's producer).
func TestInterruptMalformedModulesDoNotPanic(t *testing.T) {
	name := []byte(stopExport)
	exports := append(appendU32([]byte{1}, uint32(len(name))), name...)
	exports = append(exports, 0x03, 0)
	good := tinyModule([]byte{1, 0x7f, 0x01, 0x41, 0, 0x0b}, exports, []byte{0, 0x03, 0x40, 0x0c, 0, 0x0b, 0x0b})
	for i := 8; i < len(good); i++ {
		for _, v := range []byte{0x00, 0x7f, 0xff, 0x80} {
			b := append([]byte{}, good...)
			b[i] = v
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("byte %d = %#x: panic %v", i, v, r)
					}
				}()
				instrumentInterrupts(b)
				instrumentInterrupts(b[:i])
			}()
		}
	}
}
