package wasm

import (
	"errors"
	"fmt"
)

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
