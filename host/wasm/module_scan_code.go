package wasm

import (
	"fmt"
)

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
