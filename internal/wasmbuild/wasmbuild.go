// Package wasmbuild assembles small WebAssembly modules byte by byte, for the host's tests of hostile
// modules: the shapes a toolchain would never emit (a 100M-entry table, 100,000 nested blocks, a plan that
// is not a plan) without needing one. It encodes; it does not validate.
package wasmbuild

// Value types and other encoding constants of the WebAssembly binary format.
const (
	I32     = 0x7f
	I64     = 0x7e
	FuncRef = 0x70
)

// Export kinds.
const (
	ExportFunc   = 0x00
	ExportTable  = 0x01
	ExportMemory = 0x02
)

// FuncType is a function signature.
type FuncType struct{ Params, Results []byte }

// Func is a function of type Type with Locals (one entry per local, its value type) and Body (the
// instructions, without the final end).
type Func struct {
	Type   uint32
	Locals []byte
	Body   []byte
}

// Limits of a memory (in pages) or a table (in entries); Max < 0 means none.
type Limits struct{ Min, Max int64 }

// Export names a function, table or memory.
type Export struct {
	Name  string
	Kind  byte
	Index uint32
}

// Data is an active data segment of memory 0 at Offset.
type Data struct {
	Offset int32
	Bytes  []byte
}

// Import is an imported function of type Type.
type Import struct {
	Module, Name string
	Type         uint32
}

// Module is what Encode writes. Function indices count imports first, as in wasm.
type Module struct {
	Types    []FuncType
	Imports  []Import
	Funcs    []Func
	Tables   []Limits // funcref tables
	Memories []Limits
	Exports  []Export
	Data     []Data
}

// Encode returns the module's binary.
func (m *Module) Encode() []byte {
	out := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	section := func(id byte, n int, body []byte) {
		if n == 0 {
			return
		}
		payload := append(U32(uint32(n)), body...)
		out = append(out, id)
		out = append(out, U32(uint32(len(payload)))...)
		out = append(out, payload...)
	}
	var b []byte
	for _, t := range m.Types {
		b = append(b, 0x60)
		b = append(b, vec(t.Params)...)
		b = append(b, vec(t.Results)...)
	}
	section(1, len(m.Types), b)
	b = nil
	for _, im := range m.Imports {
		b = append(b, vec([]byte(im.Module))...)
		b = append(b, vec([]byte(im.Name))...)
		b = append(b, 0x00)
		b = append(b, U32(im.Type)...)
	}
	section(2, len(m.Imports), b)
	b = nil
	for _, f := range m.Funcs {
		b = append(b, U32(f.Type)...)
	}
	section(3, len(m.Funcs), b)
	b = nil
	for _, t := range m.Tables {
		b = append(b, FuncRef)
		b = append(b, limits(t)...)
	}
	section(4, len(m.Tables), b)
	b = nil
	for _, l := range m.Memories {
		b = append(b, limits(l)...)
	}
	section(5, len(m.Memories), b)
	b = nil
	for _, e := range m.Exports {
		b = append(b, vec([]byte(e.Name))...)
		b = append(b, e.Kind)
		b = append(b, U32(e.Index)...)
	}
	section(7, len(m.Exports), b)
	b = nil
	for _, f := range m.Funcs {
		var body []byte
		body = append(body, U32(uint32(len(f.Locals)))...)
		for _, l := range f.Locals {
			body = append(body, 0x01, l)
		}
		body = append(body, f.Body...)
		body = append(body, 0x0b)
		b = append(b, U32(uint32(len(body)))...)
		b = append(b, body...)
	}
	section(10, len(m.Funcs), b)
	b = nil
	for _, d := range m.Data {
		b = append(b, 0x00, 0x41)
		b = append(b, S64(int64(d.Offset))...)
		b = append(b, 0x0b)
		b = append(b, vec(d.Bytes)...)
	}
	section(11, len(m.Data), b)
	return out
}

func vec(b []byte) []byte { return append(U32(uint32(len(b))), b...) }

func limits(l Limits) []byte {
	if l.Max < 0 {
		return append([]byte{0x00}, U32(uint32(l.Min))...)
	}
	return append(append([]byte{0x01}, U32(uint32(l.Min))...), U32(uint32(l.Max))...)
}

// U32 is the unsigned LEB128 encoding of v.
func U32(v uint32) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		out = append(out, c)
		if v == 0 {
			return out
		}
	}
}

// S64 is the signed LEB128 encoding of v (i32.const and i64.const immediates).
func S64(v int64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		done := (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0)
		if !done {
			c |= 0x80
		}
		out = append(out, c)
		if done {
			return out
		}
	}
}

// Instructions used by the modules below and by tests.
var (
	MemorySize = []byte{0x3f, 0x00}
	MemoryGrow = []byte{0x40, 0x00}
	Drop       = []byte{0x1a}
)

// I32Const and I64Const push a constant; LocalGet reads a local.
func I32Const(v int32) []byte  { return append([]byte{0x41}, S64(int64(v))...) }
func I64Const(v int64) []byte  { return append([]byte{0x42}, S64(v)...) }
func LocalGet(i uint32) []byte { return append([]byte{0x20}, U32(i)...) }

// Cat concatenates instruction sequences.
func Cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// ABI returns the skeleton of an Ordinal ABI v1 module (abi/README.md §1): an exported memory of
// minPages, ordinal_alloc (which grows memory and returns the new space), and ordinal_describe and
// ordinal_reconcile returning the given bodies' (ptr<<32|len) results. Callers add data, tables,
// functions.
func ABI(minPages int64, describeBody, reconcileBody []byte) *Module {
	alloc := Cat(MemorySize, // the first new page is where the snapshot goes
		LocalGet(0), I32Const(16), []byte{0x76}, I32Const(1), []byte{0x6a}, MemoryGrow, Drop, // grow by n>>16 + 1 pages
		I32Const(16), []byte{0x74}) // old size << 16
	return &Module{
		Types: []FuncType{
			{Params: []byte{I32}, Results: []byte{I32}},      // 0: ordinal_alloc
			{Params: []byte{I32, I32}, Results: []byte{I64}}, // 1: ordinal_reconcile
			{Results: []byte{I64}},                           // 2: ordinal_describe
		},
		Funcs: []Func{
			{Type: 0, Body: alloc},
			{Type: 1, Body: reconcileBody},
			{Type: 2, Body: describeBody},
		},
		Memories: []Limits{{Min: minPages, Max: -1}},
		Exports: []Export{
			{Name: "memory", Kind: ExportMemory, Index: 0},
			{Name: "ordinal_alloc", Kind: ExportFunc, Index: 0},
			{Name: "ordinal_reconcile", Kind: ExportFunc, Index: 1},
			{Name: "ordinal_describe", Kind: ExportFunc, Index: 2},
		},
	}
}

// ImportFunc adds an imported function of signature t and returns its function index. The module's own
// functions move up by one: exports are renumbered (bodies that call functions are the caller's to fix).
func (m *Module) ImportFunc(module, name string, t FuncType) uint32 {
	m.Types = append(m.Types, t)
	m.Imports = append(m.Imports, Import{Module: module, Name: name, Type: uint32(len(m.Types) - 1)})
	for i := range m.Exports {
		if m.Exports[i].Kind == ExportFunc {
			m.Exports[i].Index++
		}
	}
	return uint32(len(m.Imports) - 1)
}

// Describe is a valid ABI v1 describe output.
const Describe = `{"abi":1,"module":"wasmbuild","moduleVersion":"0.0.0","kubernetesVersion":"v1.37.1","features":{}}`

// FixedOutput returns an ABI v1 module whose every reconcile returns plan, whatever the snapshot.
func FixedOutput(plan string) []byte {
	dlen, plen := int64(len(Describe)), int64(len(plan))
	m := ABI(1, I64Const(0<<32|dlen), I64Const(dlen<<32|plen))
	m.Data = []Data{{Offset: 0, Bytes: []byte(Describe + plan)}}
	return m.Encode()
}
