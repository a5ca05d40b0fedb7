package wasm

import (
	"errors"
	"fmt"
	"slices"
)

// interruptExport and stopExport name the globals instrumentInterrupts adds. interruptExport is a mutable
// i32 holding the call's remaining work budget: the host sets it to Config.WorkBudget before a call, and
// the guest counts it down at every check and traps at 0. stopExport is the host's alone: 0 during a
// call, 1 to stop it. The guest only reads it, so the host's stop cannot be lost: a stop written into the
// budget was overwritten by the guest's own read-modify-write of it about as often as not, and a looping
// call then ran through its whole budget (seconds) long after its timeout. Neither name is a valid Go
// or C identifier, so no toolchain exports one by chance.
const (
	interruptExport = "ordinal.interrupt"
	stopExport      = "ordinal.stop"
)

// interruptGlobalNames are the names of the globals instrumentInterrupts adds, in the order it adds them.
var interruptGlobalNames = []string{interruptExport, stopExport}

// errStartSection: the module has a start function, which wazero runs while it creates an instance, before
// the host can set the call's budget (its first check would trap on the budget's zero) or bound its time.
var errStartSection = errors.New("the module has a start function (the wasm start section), which runs when an instance is created, outside the host's time bounds: export _initialize instead (abi/README.md, section 1)")

// interruptCheck is `global.get $budget; i32.eqz; global.get $stop; i32.or; if; unreachable; end;
// global.get $budget; i32.const 1; i32.sub; global.set $budget` (the globals' indexes spliced in): stop
// when the host asked to or the budget ran out.
func interruptCheck(budget, stop uint32) []byte {
	b := appendU32([]byte{0x23}, budget)
	b = append(b, 0x45, 0x23)
	b = appendU32(b, stop)
	b = append(b, 0x72, 0x04, 0x40, 0x00, 0x0b, 0x23)
	b = appendU32(b, budget)
	b = append(b, 0x41, 0x01, 0x6b, 0x24)
	return appendU32(b, budget)
}

// instrumentInterrupts returns bin with a check of two new exported globals at every function entry and
// every loop header, the places wazero's WithCloseOnContextDone checks. Setting the stop global stops the
// guest at its next check with a trap, so a call timeout can stop a module that loops forever.
//
// wazero's own check calls out to Go at each of those places (an exit from machine code and back):
// on the shipped module it made a 1000-pod reconcile ~4x slower. A load and a branch cost ~nothing.
// Control flow in wasm is structured, so the inserted `if ... end` is self-contained: no branch
// depth, index or offset elsewhere in the module changes. The new globals are the module's last, so
// no index of the original changes either; a module whose code names a global it does not have (it
// would then reach the budget or the stop flag) is refused.
func instrumentInterrupts(bin []byte) ([]byte, error) {
	if len(bin) < 8 || string(bin[:4]) != "\x00asm" {
		return nil, errors.New("no wasm magic number")
	}
	type section struct {
		id         byte
		start, end int // the section's contents
	}
	var secs []section
	globals := uint32(0) // imported + defined
	for r := (&reader{b: bin, i: 8}); r.i < len(bin); {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		if uint64(r.i)+uint64(size) > uint64(len(bin)) {
			return nil, fmt.Errorf("section %d of %d bytes runs past the end", id, size)
		}
		secs = append(secs, section{id, r.i, r.i + int(size)})
		sec := &reader{b: bin[:r.i+int(size)], i: r.i}
		r.i += int(size)
		switch id {
		case 2:
			n, err := importedGlobals(sec)
			if err != nil {
				return nil, err
			}
			globals += n
		case 6:
			n, err := sec.count()
			if err != nil {
				return nil, err
			}
			globals += n
		case 7:
			if err := checkExportNames(sec); err != nil {
				return nil, err
			}
		case 8:
			return nil, errStartSection
		}
	}
	check := interruptCheck(globals, globals+1)

	out := append(make([]byte, 0, len(bin)+len(bin)/8), bin[:8]...)
	emit := func(id byte, body []byte) []byte {
		out = append(out, id)
		out = appendU32(out, uint32(len(body)))
		return append(out, body...)
	}
	added := byte(len(interruptGlobalNames))
	var newGlobal, newExport []byte
	for i, name := range interruptGlobalNames {
		newGlobal = append(newGlobal, 0x7f, 0x01, 0x41, 0x00, 0x0b) // (mut i32) (i32.const 0)
		newExport = appendU32(newExport, uint32(len(name)))
		newExport = append(append(newExport, name...), 0x03)
		newExport = appendU32(newExport, globals+uint32(i))
	}
	haveGlobals, haveExports := false, false
	for _, s := range secs {
		// Sections come in a fixed order; a missing global or export section goes before the first
		// section that must follow it.
		if !haveGlobals && s.id != 0 && sectionRank(s.id) > sectionRank(6) {
			out, haveGlobals = emit(6, append([]byte{added}, newGlobal...)), true
		}
		if !haveExports && s.id != 0 && sectionRank(s.id) > sectionRank(7) {
			out, haveExports = emit(7, append([]byte{added}, newExport...)), true
		}
		contents := bin[s.start:s.end]
		switch s.id {
		case 6, 7:
			r := &reader{b: contents}
			n, err := r.count()
			if err != nil {
				return nil, err
			}
			body := appendU32(nil, n+uint32(added))
			body = append(body, contents[r.i:]...)
			if s.id == 6 {
				body, haveGlobals = append(body, newGlobal...), true
			} else {
				body, haveExports = append(body, newExport...), true
			}
			out = emit(s.id, body)
		case 10:
			body, err := instrumentCode(contents, check, globals)
			if err != nil {
				return nil, err
			}
			out = emit(10, body)
		default:
			out = emit(s.id, contents)
		}
	}
	if !haveGlobals {
		out = emit(6, append([]byte{added}, newGlobal...))
	}
	if !haveExports {
		out = emit(7, append([]byte{added}, newExport...))
	}
	return out, nil
}

// instrumentCode rewrites the code section: the check after each body's locals and after each loop's
// block type. globals is the count before the interrupt globals, which no original instruction may name.
func instrumentCode(sec, check []byte, globals uint32) ([]byte, error) {
	r := &reader{b: sec}
	n, err := r.count()
	if err != nil {
		return nil, err
	}
	out := appendU32(make([]byte, 0, len(sec)+len(sec)/8), n)
	var body []byte
	for f := range n {
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		if uint64(r.i)+uint64(size) > uint64(len(sec)) {
			return nil, fmt.Errorf("function %d of %d bytes runs past the code section", f, size)
		}
		start := r.i
		fr := &reader{b: sec[:r.i+int(size)], i: r.i}
		r.i += int(size)
		groups, err := fr.count()
		if err != nil {
			return nil, err
		}
		for range groups {
			if _, err := fr.u32(); err != nil {
				return nil, err
			}
			if _, err := fr.byte(); err != nil {
				return nil, err
			}
		}
		body = append(body[:0], sec[start:fr.i]...) // the locals, verbatim
		body = append(body, check...)
		for fr.i < len(fr.b) {
			at := fr.i
			op := fr.b[at]
			if err := fr.instruction(); err != nil {
				return nil, fmt.Errorf("function %d: %w", f, err)
			}
			if op == 0x23 || op == 0x24 { // global.get, global.set
				idx, _ := (&reader{b: fr.b, i: at + 1}).u32()
				if idx >= globals {
					return nil, fmt.Errorf("function %d names global %d; the module has %d", f, idx, globals)
				}
			}
			body = append(body, fr.b[at:fr.i]...)
			if op == 0x03 { // loop: check once per iteration
				body = append(body, check...)
			}
		}
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	if r.i != len(sec) {
		return nil, errors.New("code section has bytes after its last function")
	}
	return out, nil
}

// importedGlobals counts the global imports of an import section.
func importedGlobals(r *reader) (uint32, error) {
	var shape ModuleShape
	var tables tableSizes
	if err := scanImports(r, &shape, &tables); err != nil {
		return 0, err
	}
	return uint32(shape.Globals), nil
}

// checkExportNames refuses a module that already exports the name of an interrupt global.
func checkExportNames(r *reader) error {
	n, err := r.count()
	if err != nil {
		return err
	}
	for range n {
		k, err := r.count()
		if err != nil {
			return err
		}
		if name := string(r.b[r.i : r.i+int(k)]); slices.Contains(interruptGlobalNames, name) {
			return fmt.Errorf("module exports %q, a name the host reserves", name)
		}
		r.i += int(k)
		if _, err := r.byte(); err != nil {
			return err
		}
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

// sectionRank is a known section's place in the required order (the tag section, 13, sits between
// memory and global; data count, 12, between element and code).
func sectionRank(id byte) int {
	switch id {
	case 13:
		return 6
	case 6:
		return 7
	case 7:
		return 8
	case 8:
		return 9
	case 9:
		return 10
	case 12:
		return 11
	case 10:
		return 12
	case 11:
		return 13
	}
	return int(id)
}

func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
