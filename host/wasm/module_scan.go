package wasm

import (
	"errors"
	"fmt"
)

// scanModule walks a wasm binary's sections and function bodies, measuring what checkModuleLimits bounds.
// It decodes every instruction (the immediates of the MVP, sign-extension, saturating conversions, bulk
// memory, reference types, tail calls and SIMD: the features wazero enables) so that a 0x02 inside an
// immediate is never taken for a block. It is not a validator: wazero validates what passes.
//
// One file (over 600 lines) because it is one table: the opcode space's immediates, read in one place so
// that a new proposal wazero enables is one place to extend.
func scanModule(bin []byte, shape *ModuleShape, l ModuleLimits) error {
	if len(bin) < 8 || string(bin[:4]) != "\x00asm" {
		return errors.New("no wasm magic number")
	}
	r := &reader{b: bin, i: 8}
	var tables tableSizes
	for r.i < len(bin) {
		id, err := r.byte()
		if err != nil {
			return err
		}
		size, err := r.u32()
		if err != nil {
			return err
		}
		if uint64(r.i)+uint64(size) > uint64(len(bin)) {
			return fmt.Errorf("section %d of %d bytes runs past the end", id, size)
		}
		sec := &reader{b: bin[:r.i+int(size)], i: r.i}
		r.i += int(size)
		switch id {
		case 0:
			err = scanCustom(sec)
		case 1:
			err = scanTypes(sec)
		case 2:
			err = scanImports(sec, shape, &tables)
		case 3: // functions: the count is enough
			var n uint32
			n, err = sec.count()
			shape.Functions = int(n)
			if err == nil && shape.Functions > l.MaxFunctions {
				return overLimit("module defines %d functions; the limit is %d (ModuleLimits.MaxFunctions)", n, l.MaxFunctions)
			}
		case 4:
			var n uint32
			if n, err = sec.count(); err == nil {
				for range n {
					if err = tables.add(sec); err != nil {
						break
					}
				}
			}
		case 5, 6, 7, 12, 13: // memories, globals, exports, data count, tags: their lengths are what wazero allocates by
			var n uint32
			if id != 12 {
				n, err = sec.count()
			}
			if id == 6 {
				shape.Globals += int(n)
			}
			if id == 7 {
				err = scanExports(sec, n)
			}
		case 9:
			var n int
			n, err = scanElements(sec)
			shape.Segments += n
		case 11:
			var n int
			n, err = scanData(sec)
			shape.Segments += n
		case 10:
			err = scanCode(sec, shape, l)
		}
		if err != nil {
			return err
		}
	}
	// Tables grow only by table.grow (the host never grows them): without it, they stay at their minimum.
	shape.TableEntries = tables.min
	if shape.TableGrow {
		shape.TableEntries = tables.max
		if tables.unbounded {
			shape.TableEntries = -1
		}
	}
	switch {
	case tables.min > l.MaxTableEntries:
		return overLimit("module's tables start with %d entries; the limit is %d (ModuleLimits.MaxTableEntries)", tables.min, l.MaxTableEntries)
	case !shape.TableGrow:
	case tables.unbounded:
		return overLimit("module grows a table that has no maximum size, so it could grow without bound; declare a maximum (at most %d entries in all: ModuleLimits.MaxTableEntries)", l.MaxTableEntries)
	case tables.max > l.MaxTableEntries:
		return overLimit("module's tables may grow to %d entries; the limit is %d (ModuleLimits.MaxTableEntries)", tables.max, l.MaxTableEntries)
	case shape.Globals > l.MaxGlobals:
		return overLimit("module has %d globals; the limit is %d (ModuleLimits.MaxGlobals)", shape.Globals, l.MaxGlobals)
	case shape.Segments > l.MaxSegments:
		return overLimit("module has %d data and element segments; the limit is %d (ModuleLimits.MaxSegments)", shape.Segments, l.MaxSegments)
	}
	return nil
}

// tableSizes adds up the tables' declared limits.
type tableSizes struct {
	min, max  int64
	unbounded bool // a table without a maximum
}

func (t *tableSizes) add(r *reader) error {
	if _, err := r.byte(); err != nil { // reference type
		return err
	}
	min, max, hasMax, err := r.limits()
	if err != nil {
		return err
	}
	t.min += int64(min)
	t.max += int64(max)
	t.unbounded = t.unbounded || !hasMax
	return nil
}

func scanImports(r *reader, shape *ModuleShape, tables *tableSizes) error {
	n, err := r.count()
	if err != nil {
		return err
	}
	for range n {
		if err := r.skipName(); err != nil {
			return err
		}
		if err := r.skipName(); err != nil {
			return err
		}
		kind, err := r.byte()
		if err != nil {
			return err
		}
		switch kind {
		case 0x00: // function
			_, err = r.u32()
		case 0x01:
			err = tables.add(r)
		case 0x02: // memory: bounded by the runtime's page limit
			_, _, _, err = r.limits()
		case 0x03: // global
			if _, err = r.byte(); err == nil {
				_, err = r.byte()
			}
			shape.Globals++
		default:
			err = fmt.Errorf("import of kind %#x", kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// maxTypeArity is the most parameters or results a function type may have (the JS API's limit, 1000).
const maxTypeArity = 1000

// scanTypes walks the function types.
func scanTypes(r *reader) error {
	n, err := r.count()
	if err != nil {
		return err
	}
	for range n {
		if _, err := r.byte(); err != nil { // 0x60
			return err
		}
		for range 2 { // parameters, results
			k, err := r.count()
			if err == nil && k > maxTypeArity {
				err = overLimit("a function type with %d parameters or results; the limit is %d", k, maxTypeArity)
			}
			if err == nil {
				err = r.skip(int(k))
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// scanExports walks n exports: a name, a kind, an index.
func scanExports(r *reader, n uint32) error {
	for range n {
		if err := r.skipName(); err != nil {
			return err
		}
		if _, err := r.byte(); err != nil {
			return err
		}
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

// scanElements walks the element segments (all eight encodings) and returns how many there are.
func scanElements(r *reader) (int, error) {
	n, err := r.count()
	if err != nil {
		return 0, err
	}
	for range n {
		flags, err := r.u32()
		if err != nil {
			return 0, err
		}
		if flags > 7 {
			return 0, fmt.Errorf("element segment flags %d", flags)
		}
		if flags == 2 || flags == 6 { // table index
			if _, err := r.u32(); err != nil {
				return 0, err
			}
		}
		if flags&1 == 0 { // active: an offset expression
			if err := r.skipExpr(); err != nil {
				return 0, err
			}
		}
		if flags != 0 && flags != 4 { // element kind or reference type
			if _, err := r.byte(); err != nil {
				return 0, err
			}
		}
		k, err := r.count()
		if err != nil {
			return 0, err
		}
		for range k {
			if flags < 4 {
				_, err = r.u32() // function index
			} else {
				err = r.skipExpr()
			}
			if err != nil {
				return 0, err
			}
		}
	}
	return int(n), nil
}

// scanData walks the data segments and returns how many there are.
func scanData(r *reader) (int, error) {
	n, err := r.count()
	if err != nil {
		return 0, err
	}
	for range n {
		flags, err := r.u32()
		if err != nil {
			return 0, err
		}
		switch flags {
		case 0:
			err = r.skipExpr()
		case 1:
		case 2:
			if _, err = r.u32(); err == nil {
				err = r.skipExpr()
			}
		default:
			err = fmt.Errorf("data segment flags %d", flags)
		}
		if err == nil {
			err = r.skipName() // the bytes: a length and as many bytes
		}
		if err != nil {
			return 0, err
		}
	}
	return int(n), nil
}

// scanCustom walks the "name" section, whose maps wazero allocates from their counts; other custom
// sections are bytes wazero only copies.
func scanCustom(r *reader) error {
	n, err := r.count()
	if err != nil {
		return err
	}
	if string(r.b[r.i:r.i+int(n)]) != "name" {
		return r.skip(int(n))
	}
	r.i += int(n)
	for r.i < len(r.b) {
		id, err := r.byte()
		if err != nil {
			return err
		}
		size, err := r.count()
		if err != nil {
			return err
		}
		sub := &reader{b: r.b[:r.i+int(size)], i: r.i}
		r.i += int(size)
		switch id {
		case 0: // module name
			err = sub.skipName()
		case 1: // function names: index, name
			err = sub.nameMap()
		case 2: // local names: function index, then a name map
			var k uint32
			if k, err = sub.count(); err == nil {
				for i := uint32(0); i < k && err == nil; i++ {
					if _, err = sub.u32(); err == nil {
						err = sub.nameMap()
					}
				}
			}
		}
		if err != nil {
			return fmt.Errorf("name section: %w", err)
		}
	}
	return nil
}

func (r *reader) nameMap() error {
	k, err := r.count()
	for i := uint32(0); i < k && err == nil; i++ {
		if _, err = r.u32(); err == nil {
			err = r.skipName()
		}
	}
	return err
}

// skipExpr skips a constant expression: instructions up to its end.
func (r *reader) skipExpr() error {
	for {
		if r.i >= len(r.b) {
			return errEOF
		}
		if r.b[r.i] == 0x0b {
			r.i++
			return nil
		}
		sub := &reader{b: r.b, i: r.i}
		if err := sub.instruction(); err != nil {
			return err
		}
		r.i = sub.i
	}
}

// scanCode measures every function body: locals, and the blocks the compiler pays for.
func scanCode(r *reader, shape *ModuleShape, l ModuleLimits) error {
	n, err := r.count()
	if err != nil {
		return err
	}
	for f := range n {
		size, err := r.u32()
		if err != nil {
			return err
		}
		if uint64(r.i)+uint64(size) > uint64(len(r.b)) {
			return fmt.Errorf("function %d of %d bytes runs past the code section", f, size)
		}
		body := &reader{b: r.b[:r.i+int(size)], i: r.i}
		r.i += int(size)
		groups, err := body.count()
		if err != nil {
			return err
		}
		var locals uint64
		for range groups {
			c, err := body.u32()
			if err != nil {
				return err
			}
			if _, err := body.byte(); err != nil {
				return err
			}
			locals += uint64(c)
		}
		if locals > uint64(l.MaxLocals) {
			return overLimit("function %d declares %d locals; the limit is %d (ModuleLimits.MaxLocals)", f, locals, l.MaxLocals)
		}
		shape.MaxLocals = max(shape.MaxLocals, int(locals))
		blocks, err := countBlocks(body, l.MaxFunctionBlocks)
		if err != nil {
			return fmt.Errorf("function %d: %w", f, err)
		}
		shape.TableGrow = shape.TableGrow || body.tableGrow
		if blocks > l.MaxFunctionBlocks {
			return overLimit("function %d has more than %d blocks and branch targets, which the compiler takes quadratic time over (ModuleLimits.MaxFunctionBlocks)", f, l.MaxFunctionBlocks)
		}
		shape.MaxFunctionBlocks = max(shape.MaxFunctionBlocks, blocks)
		shape.CompileCost += compileCost(blocks, int(size), locals)
		if shape.CompileCost > l.MaxCompileCost {
			return overLimit("module would cost the compiler more than %d units (about ns of compiling: per function 4*(blocks+1)^2 + 1000*(bytes+locals); ModuleLimits.MaxCompileCost)", l.MaxCompileCost)
		}
	}
	return nil
}

// compileCost is the measured cost model of wazero's optimizing compiler for one function, in about
// nanoseconds on a 2-core CI machine: quadratic in its blocks (80,000 blocks: 28 s), linear in its bytes
// and locals (a 4.6 MB standard-Go module: 2 s).
func compileCost(blocks, bytes int, locals uint64) int64 {
	b := int64(blocks) + 1
	return 4*b*b + 1000*(int64(bytes)+int64(locals))
}

// countBlocks decodes one function's instructions and counts block, loop, if and the targets of
// br_table, stopping early once over limit.
func countBlocks(r *reader, limit int) (int, error) {
	blocks := 0
	for r.i < len(r.b) && blocks <= limit {
		switch op := r.b[r.i]; op {
		case 0x02, 0x03, 0x04: // block, loop, if
			blocks++
		case 0x0e: // br_table: its targets count as blocks
			sub := &reader{b: r.b, i: r.i + 1}
			n, err := sub.count()
			if err != nil {
				return 0, err
			}
			blocks += int(min(n, uint32(limit)+1))
		}
		if err := r.instruction(); err != nil {
			return 0, err
		}
	}
	return blocks, nil
}

// instruction decodes one instruction with its immediates.
func (r *reader) instruction() error {
	op, err := r.byte()
	if err != nil {
		return err
	}
	switch {
	case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if: a block type
		err = r.blockType()
	case op == 0x0e: // br_table
		var n uint32
		if n, err = r.count(); err == nil {
			for i := uint32(0); i <= n && err == nil; i++ {
				_, err = r.u32()
			}
		}
	case op == 0x0c || op == 0x0d || op == 0x10 || op == 0x12 || (op >= 0x20 && op <= 0x26) || op == 0xd2:
		_, err = r.u32() // label, function, local, global, table index
	case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect: type and table
		if _, err = r.u32(); err == nil {
			_, err = r.u32()
		}
	case op >= 0x28 && op <= 0x3e: // loads and stores
		err = r.memarg()
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		_, err = r.byte()
	case op == 0x41 || op == 0x42: // i32.const, i64.const
		err = r.skipLEB()
	case op == 0x43:
		err = r.skip(4)
	case op == 0x44:
		err = r.skip(8)
	case op == 0x1c: // select with types
		var n uint32
		if n, err = r.count(); err == nil {
			err = r.skip(int(n))
		}
	case op == 0xd0: // ref.null
		_, err = r.byte()
	case op == 0xfc:
		err = r.miscImmediates()
	case op == 0xfd:
		err = r.simdImmediates()
	case op <= 0x01 || op == 0x05 || op == 0x0b || op == 0x0f || op == 0x1a || op == 0x1b || (op >= 0x45 && op <= 0xc4) || op == 0xd1:
		// no immediates
	default:
		return fmt.Errorf("unsupported instruction %#x at byte %d", op, r.i-1)
	}
	return err
}

// reader decodes the binary format.
type reader struct {
	b         []byte
	i         int
	tableGrow bool // a table.grow was decoded
}

var errEOF = errors.New("unexpected end of module")

func (r *reader) byte() (byte, error) {
	if r.i >= len(r.b) {
		return 0, errEOF
	}
	r.i++
	return r.b[r.i-1], nil
}

func (r *reader) skip(n int) error {
	if n < 0 || r.i+n > len(r.b) {
		return errEOF
	}
	r.i += n
	return nil
}

func (r *reader) u32() (uint32, error) {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			if v > 0xffffffff {
				return 0, errors.New("integer too large")
			}
			return uint32(v), nil
		}
	}
	return 0, errors.New("integer too long")
}

// skipLEB skips a LEB128 number of at most 10 bytes (i64).
func (r *reader) skipLEB() error {
	for range 10 {
		c, err := r.byte()
		if err != nil {
			return err
		}
		if c&0x80 == 0 {
			return nil
		}
	}
	return errors.New("integer too long")
}

// count reads a vector length and refuses one larger than the bytes left: every element takes at least
// one byte, and wazero allocates a vector's elements from its length before reading them (a 190-byte
// module declaring 3.2 billion parameters made it allocate 26 GB and the process die).
func (r *reader) count() (uint32, error) {
	n, err := r.u32()
	if err == nil && uint64(n) > uint64(len(r.b)-r.i) {
		err = fmt.Errorf("a vector of %d elements in %d remaining bytes", n, len(r.b)-r.i)
	}
	return n, err
}

func (r *reader) skipName() error {
	n, err := r.count()
	if err != nil {
		return err
	}
	return r.skip(int(n))
}

func (r *reader) limits() (min, max uint32, hasMax bool, err error) {
	flag, err := r.byte()
	if err != nil {
		return
	}
	if min, err = r.u32(); err != nil {
		return
	}
	if flag&0x01 != 0 {
		hasMax = true
		max, err = r.u32()
	}
	return
}

// blockType: 0x40 (empty), a value type (one byte, negative as s33), or a type index (s33 >= 0).
func (r *reader) blockType() error {
	if r.i >= len(r.b) {
		return errEOF
	}
	if c := r.b[r.i]; c == 0x40 || (c >= 0x6f && c <= 0x7f) {
		r.i++
		return nil
	}
	return r.skipLEB()
}

func (r *reader) memarg() error {
	if _, err := r.u32(); err != nil { // align (with the multi-memory flag bit: no memory index in wazero's features)
		return err
	}
	_, err := r.u32() // offset
	return err
}

// miscImmediates: the 0xfc prefix (saturating conversions, bulk memory, table instructions).
func (r *reader) miscImmediates() error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 7: // trunc_sat
		return nil
	case sub == 8: // memory.init: data index, memory
		if _, err := r.u32(); err != nil {
			return err
		}
		_, err = r.byte()
		return err
	case sub == 9 || sub == 13 || sub == 15 || sub == 16 || sub == 17: // data.drop, elem.drop, table.grow/size/fill
		r.tableGrow = r.tableGrow || sub == 15
		_, err = r.u32()
		return err
	case sub == 10: // memory.copy
		return r.skip(2)
	case sub == 11: // memory.fill
		return r.skip(1)
	case sub == 12 || sub == 14: // table.init, table.copy
		if _, err := r.u32(); err != nil {
			return err
		}
		_, err = r.u32()
		return err
	}
	return fmt.Errorf("unsupported instruction 0xfc %d", sub)
}

// simdImmediates: the 0xfd prefix.
func (r *reader) simdImmediates() error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 11 || sub == 92 || sub == 93: // loads and stores
		return r.memarg()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		return r.skip(16)
	case sub >= 21 && sub <= 34: // extract/replace lane
		return r.skip(1)
	case sub >= 84 && sub <= 91: // load/store lane
		if err := r.memarg(); err != nil {
			return err
		}
		return r.skip(1)
	case sub <= 275:
		return nil
	}
	return fmt.Errorf("unsupported instruction 0xfd %d", sub)
}

// exportedFunctions are the names of the functions bin exports (nil when bin is not a wasm module it can
// read: the compile then says why).
func exportedFunctions(bin []byte) map[string]bool {
	if len(bin) < 8 || string(bin[:4]) != "\x00asm" {
		return nil
	}
	for r := (&reader{b: bin, i: 8}); r.i < len(bin); {
		id, err := r.byte()
		if err != nil {
			return nil
		}
		size, err := r.u32()
		if err != nil || uint64(r.i)+uint64(size) > uint64(len(bin)) {
			return nil
		}
		sec := &reader{b: bin[:r.i+int(size)], i: r.i}
		r.i += int(size)
		if id != 7 {
			continue
		}
		n, err := sec.count()
		if err != nil {
			return nil
		}
		names := map[string]bool{}
		for range n {
			l, err := sec.count()
			if err != nil || sec.i+int(l) > len(sec.b) {
				return nil
			}
			name := string(sec.b[sec.i : sec.i+int(l)])
			sec.i += int(l)
			kind, err := sec.byte()
			if err != nil {
				return nil
			}
			if _, err := sec.u32(); err != nil {
				return nil
			}
			if kind == 0 {
				names[name] = true
			}
		}
		return names
	}
	return map[string]bool{}
}
