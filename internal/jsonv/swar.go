package jsonv

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// The scanners look at eight bytes per step where they can (SWAR: one 64-bit word, compared bytewise by
// arithmetic): a snapshot is mostly short strings and the structure around them, and in the module each
// step of a byte loop also pays a bounds check and the host's interrupt check (host/wasm), so stepping a
// word at a time is most of what reading a snapshot's text saves there.

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// word is the eight bytes at p, the first in the low byte: one load where the machine is little-endian
// (wasm is), with no bounds check (the callers check that eight bytes are there).
func word(p unsafe.Pointer) uint64 { return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(p), 8)) }

// textAt and bytesAt point at s[i] for word.
func textAt(s Text, i int) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(unsafe.StringData(string(s))), i)
}
func bytesAt(s []byte, i int) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), i)
}

// zeros marks the zero bytes of w by their high bit. Only the lowest mark is exact (a borrow can mark a
// byte above a zero one), which is all a scan for the first match reads.
func zeros(w uint64) uint64 { return (w - ones) &^ w & highs }

// below marks the bytes of w under n (n <= 0x80) as zeros does, exact for the lowest.
func below(w uint64, n byte) uint64 { return (w - ones*uint64(n)) &^ w & highs }

// first is the index in its word of the byte the lowest mark of m stands for.
func first(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

// stringStop is the index of the first quote or backslash in s at or after i (a string's bytes up to its
// next one can be skipped), or a byte before the last eight where the caller steps byte by byte.
func stringStop(s Text, i int) int {
	for ; i+8 <= len(s); i += 8 {
		w := word(textAt(s, i))
		if m := zeros(w^(ones*'"')) | zeros(w^(ones*'\\')); m != 0 {
			return i + first(m)
		}
	}
	return i
}

// structuralStop is skipValue's stringStop: the first of `"{}[]` in t at or after i. A byte or'ed with
// 0x20 is '{' only for '[' and '{', '}' only for ']' and '}', and '"' only for '"' and 0x02, a control
// byte that valid text has nowhere outside a string.
func structuralStop(t Text, i int) int {
	for ; i+8 <= len(t); i += 8 {
		w := word(textAt(t, i)) | ones*0x20
		if m := zeros(w^(ones*'{')) | zeros(w^(ones*'}')) | zeros(w^(ones*'"')); m != 0 {
			return i + first(m)
		}
	}
	for !structural[t[i]] {
		i++
	}
	return i
}

// spacesEnd is the index after the spaces at i in t, eight at a time where there are eight: a host that
// lays a snapshot out so that its objects keep their offsets from one sync to the next (the replay's)
// pads the gaps between them with spaces, and stepping over those a byte at a time was a third of such a
// replay's module time.
func spacesEnd(t Text, i int) int {
	for i+8 <= len(t) && word(textAt(t, i)) == ones*' ' {
		i += 8
	}
	return i
}

// validStop is valid's stringStop: the first quote, backslash or control byte in s at or after i.
func validStop(s []byte, i int) int {
	for ; i+8 <= len(s); i += 8 {
		w := word(bytesAt(s, i))
		if m := zeros(w^(ones*'"')) | zeros(w^(ones*'\\')) | below(w, 0x20); m != 0 {
			return i + first(m)
		}
	}
	return i
}

// keyStop is skipKey's stringStop: the first quote, backslash or non-ASCII byte in t at or after i.
func keyStop(t Text, i int) int {
	for ; i+8 <= len(t); i += 8 {
		w := word(textAt(t, i))
		if m := zeros(w^(ones*'"')) | zeros(w^(ones*'\\')) | w&highs; m != 0 {
			return i + first(m)
		}
	}
	return i
}

// plain reports that s has no backslash and only ASCII: a string literal's contents that unquote returns
// as they are (every string value a snapshot's decode reads goes through it).
func plain(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := word(textAt(Text(s), i))
		if zeros(w^(ones*'\\'))|w&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] == '\\' || s[i] >= 0x80 {
			return false
		}
	}
	return true
}
