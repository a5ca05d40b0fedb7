package wasm

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// tinyModule assembles a module with one function type ()->(), the given global and export sections
// (contents without the section header; nil leaves the section out) and one function body.
func tinyModule(globals, exports, body []byte) []byte {
	sec := func(id byte, c []byte) []byte { return append(appendU32([]byte{id}, uint32(len(c))), c...) }
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, sec(1, []byte{1, 0x60, 0, 0})...)
	m = append(m, sec(3, []byte{1, 0})...)
	if globals != nil {
		m = append(m, sec(6, globals)...)
	}
	if exports != nil {
		m = append(m, sec(7, exports)...)
	}
	code := appendU32([]byte{1}, uint32(len(body)))
	return append(m, sec(10, append(code, body...))...)
}

func TestInterruptChecksAtEveryLoopAndEntry(t *testing.T) {
	bin, err := os.ReadFile(filepath.Join("..", "embedded", "ordinal.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := instrumentInterrupts(bin)
	if err != nil {
		t.Fatal(err)
	}
	var before, after ModuleShape
	if err := scanModule(bin, &before, ModuleLimits{}.withDefaults()); err != nil {
		t.Fatal(err)
	}
	if err := scanModule(out, &after, ModuleLimits{}.withDefaults()); err != nil {
		t.Fatalf("instrumented module does not decode: %v", err)
	}
	loops := countOpcode(t, bin, 0x03)
	if added := after.Globals - before.Globals; added != 2 {
		t.Errorf("globals: %d added, want 2 (the budget and the stop flag)", added)
	}
	check := interruptCheck(uint32(after.Globals-2), uint32(after.Globals-1))
	if n := bytes.Count(out, check) - bytes.Count(bin, check); n != before.Functions+loops {
		t.Errorf("%d checks inserted, want one per function (%d) and loop (%d)", n, before.Functions, loops)
	}
	// The guest only reads the stop flag: a stop it could write back over would be lost (a looping call
	// once ran through its whole work budget, seconds past its timeout, that way).
	if n := countGlobalSets(t, out, uint32(after.Globals-1)); n != 0 {
		t.Errorf("%d instructions write the stop flag, want none", n)
	}
	rt := wazero.NewRuntime(context.Background())
	defer rt.Close(context.Background())
	cm, err := rt.CompileModule(context.Background(), out)
	if err != nil {
		t.Fatalf("wazero refuses the instrumented module: %v", err)
	}
	if _, ok := cm.ExportedFunctions()["ordinal_reconcile"]; !ok {
		t.Error("exports lost")
	}
}

// countOpcode counts instructions with opcode op in every function body.
func countOpcode(t *testing.T, bin []byte, op byte) int {
	t.Helper()
	n := 0
	forEachInstruction(t, bin, func(ins []byte) {
		if ins[0] == op {
			n++
		}
	})
	return n
}

// countGlobalSets counts the global.set instructions naming global idx in every function body.
func countGlobalSets(t *testing.T, bin []byte, idx uint32) int {
	t.Helper()
	n := 0
	forEachInstruction(t, bin, func(ins []byte) {
		if ins[0] == 0x24 {
			if got, _ := (&reader{b: ins, i: 1}).u32(); got == idx {
				n++
			}
		}
	})
	return n
}

// forEachInstruction calls f with the bytes of each instruction of every function body.
func forEachInstruction(t *testing.T, bin []byte, f func(ins []byte)) {
	t.Helper()
	r := &reader{b: bin, i: 8}
	for r.i < len(bin) {
		id, _ := r.byte()
		size, _ := r.u32()
		if id != 10 {
			r.i += int(size)
			continue
		}
		sec := &reader{b: bin[:r.i+int(size)], i: r.i}
		r.i += int(size)
		fns, _ := sec.count()
		for range fns {
			sz, _ := sec.u32()
			body := &reader{b: sec.b[:sec.i+int(sz)], i: sec.i}
			sec.i += int(sz)
			groups, _ := body.count()
			for range groups {
				body.u32()
				body.byte()
			}
			for body.i < len(body.b) {
				at := body.i
				if err := body.instruction(); err != nil {
					t.Fatal(err)
				}
				f(body.b[at:body.i])
			}
		}
	}
}

func TestInterruptAddsMissingSections(t *testing.T) {
	// no global or export section, a loop with a branch back: the sections are created in order
	body := []byte{0, 0x03, 0x40, 0x0c, 0, 0x0b, 0x0b} // loop br 0 end end
	out, err := instrumentInterrupts(tinyModule(nil, nil, body))
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntime(context.Background())
	defer rt.Close(context.Background())
	mod, err := rt.Instantiate(context.Background(), out)
	if err != nil {
		t.Fatalf("wazero refuses the instrumented module: %v", err)
	}
	for _, name := range []string{interruptExport, stopExport} {
		if mod.ExportedGlobal(name) == nil {
			t.Errorf("no %q export", name)
		}
	}
}

func TestInterruptNameIsReserved(t *testing.T) {
	for _, reserved := range []string{interruptExport, stopExport} {
		name := []byte(reserved)
		exports := append(appendU32([]byte{1}, uint32(len(name))), name...)
		exports = append(exports, 0x03, 0)
		bin := tinyModule([]byte{1, 0x7f, 0x01, 0x41, 0, 0x0b}, exports, []byte{0, 0x0b})
		_, err := Load(context.Background(), bin, Config{})
		if !errors.Is(err, ErrBadModule) || !strings.Contains(err.Error(), "reserves") || !strings.Contains(err.Error(), reserved) {
			t.Errorf("a module exporting %q: %v", reserved, err)
		}
	}
}

func TestInterruptGlobalUnreachableFromModuleCode(t *testing.T) {
	// global.set 0 with no globals: after instrumenting, index 0 would be the interrupt flag
	bin := tinyModule(nil, nil, []byte{0, 0x41, 0, 0x24, 0, 0x0b})
	if _, err := instrumentInterrupts(bin); err == nil || !strings.Contains(err.Error(), "names global 0") {
		t.Errorf("got %v", err)
	}
	_, err := Load(context.Background(), bin, Config{})
	if !errors.Is(err, ErrBadModule) {
		t.Errorf("Load: %v", err)
	}
}

// Close while a guest loops: the call ends with ErrClosed and Close returns (before the interrupt
// checks, closing the runtime unmapped a running guest's memory). Whether Close lands before or during
// the call, the outcome is the same. On a starved machine the call can also run through its work budget
// before Close even begins (the goroutine that calls Close waits for a thread): that attempt says nothing
// about Close, so it is made again; a call that ends after Close began must end with ErrClosed.
func TestCloseStopsARunningCall(t *testing.T) {
	bin, err := os.ReadFile(filepath.Join("testdata", "loop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		err error
		at  time.Time
	}
	for attempt := 1; ; attempt++ {
		m, err := Load(context.Background(), bin, Config{Timeout: time.Hour, MaxInstances: 1})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan result, 1)
		go func() {
			_, err := m.Reconcile(context.Background(), []byte(`{"abi":1,"misbehave":true}`))
			done <- result{err, time.Now()}
		}()
		time.Sleep(50 * time.Millisecond) // most often inside the guest by now; either way is correct
		closing := time.Now()
		if err := m.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if errors.Is(r.err, ErrClosed) {
			return
		}
		if !r.at.Before(closing) {
			t.Fatalf("call during Close: %v, want ErrClosed", r.err)
		}
		if attempt == 20 {
			t.Fatalf("in 20 attempts the call always ended (%v) before Close began", r.err)
		}
	}
}

// A start function runs while wazero creates an instance, before the host sets the call's work budget (its
// first check would trap on the budget's zero: "module failed to start") or can bound its time: a module
// with one is refused when loaded, saying so.
func TestStartSectionRefused(t *testing.T) {
	sec := func(id byte, c []byte) []byte { return append(appendU32([]byte{id}, uint32(len(c))), c...) }
	bin := []byte("\x00asm\x01\x00\x00\x00")
	bin = append(bin, sec(1, []byte{1, 0x60, 0, 0})...) // type 0: () -> ()
	bin = append(bin, sec(3, []byte{1, 0})...)          // function 0 of type 0
	bin = append(bin, sec(8, []byte{0})...)             // start: function 0
	bin = append(bin, sec(10, []byte{1, 2, 0, 0x0b})...)
	rt := wazero.NewRuntime(context.Background())
	defer rt.Close(context.Background())
	if _, err := rt.CompileModule(context.Background(), bin); err != nil {
		t.Fatalf("the module is not valid wasm to begin with: %v", err)
	}
	_, err := Load(context.Background(), bin, Config{})
	if !errors.Is(err, ErrBadModule) || !strings.Contains(err.Error(), "start function") || !strings.Contains(err.Error(), "_initialize") {
		t.Errorf("a module with a start function: %v", err)
	}
}
