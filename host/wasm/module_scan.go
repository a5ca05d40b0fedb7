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
			err = scanElements(sec, shape, l)
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
	case shape.TableGrow && tables.unbounded:
		return overLimit("module grows a table that has no maximum size, so it could grow without bound; declare a maximum (at most %d entries in all: ModuleLimits.MaxTableEntries)", l.MaxTableEntries)
	case shape.TableGrow && tables.max > l.MaxTableEntries:
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

// scanElements walks the element segments (all eight encodings), counting them and their items, and refuses
// more items than the limit as soon as a segment declares them.
func scanElements(r *reader, shape *ModuleShape, l ModuleLimits) error {
	n, err := r.count()
	if err != nil {
		return err
	}
	shape.Segments += int(n)
	for range n {
		flags, err := r.u32()
		if err != nil {
			return err
		}
		if flags > 7 {
			return fmt.Errorf("element segment flags %d", flags)
		}
		if flags == 2 || flags == 6 { // table index
			if _, err := r.u32(); err != nil {
				return err
			}
		}
		if flags&1 == 0 { // active: an offset expression
			if err := r.skipExpr(); err != nil {
				return err
			}
		}
		if flags != 0 && flags != 4 { // element kind or reference type
			if _, err := r.byte(); err != nil {
				return err
			}
		}
		k, err := r.count()
		if err != nil {
			return err
		}
		if shape.ElementItems += int(k); shape.ElementItems > l.MaxElementItems {
			return overLimit("module's element segments hold at least %d items; the limit is %d (ModuleLimits.MaxElementItems)", shape.ElementItems, l.MaxElementItems)
		}
		for range k {
			if flags < 4 {
				_, err = r.u32() // function index
			} else {
				err = r.skipExpr()
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
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
