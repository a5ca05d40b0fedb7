package wasm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// The embedded module reads only the buffer ordinal_alloc gave out (abi/README.md §direct path): a host
// naming other memory, or more bytes than were allocated, gets the empty-input error plan.
func TestDirectReconcileReadsOnlyTheAllocatedBuffer(t *testing.T) {
	ctx := context.Background()
	bin, err := os.ReadFile(filepath.Join("..", "embedded", "ordinal.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	compiled, err := rt.CompileModule(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := instantiateStubs(ctx, rt, compiled); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize"))
	if err != nil {
		t.Fatal(err)
	}
	snapshot := []byte(`{"abi":1}`)
	call := func(ptrDelta int32, lenDelta uint32) string {
		t.Helper()
		r, err := mod.ExportedFunction("ordinal_alloc").Call(ctx, uint64(len(snapshot)))
		if err != nil {
			t.Fatal(err)
		}
		ptr := uint32(r[0])
		if !mod.Memory().Write(ptr, snapshot) {
			t.Fatal("alloc returned memory outside the module")
		}
		r, err = mod.ExportedFunction("ordinal_reconcile").Call(ctx, uint64(uint32(int32(ptr)+ptrDelta)), uint64(uint32(len(snapshot))+lenDelta))
		if err != nil {
			t.Fatal(err)
		}
		out, ok := mod.Memory().Read(uint32(r[0]>>32), uint32(r[0]))
		if !ok {
			t.Fatal("plan outside memory")
		}
		return string(out)
	}
	const empty = "truncated at offset 0"
	if got := call(0, 0); strings.Contains(got, empty) || !strings.Contains(got, `"error"`) {
		t.Fatalf("the allocated buffer itself should be read (a snapshot missing fields), got %s", got)
	}
	for _, c := range []struct {
		name     string
		ptrDelta int32
		lenDelta uint32
	}{{"other address", 1, 0}, {"address before the buffer", -8, 0}, {"longer than allocated", 0, 1}, {"far longer", 0, 1 << 20}} {
		if got := call(c.ptrDelta, c.lenDelta); !strings.Contains(got, `"code":"InvalidJSON"`) || !strings.Contains(got, empty) {
			t.Errorf("%s: got %s, want the empty-input error plan", c.name, got)
		}
	}
}
