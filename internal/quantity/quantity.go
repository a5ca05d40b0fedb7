// Package quantity reads a Kubernetes resource quantity as a whole number, rounded up, in bounded time:
// the module's extension resize-claims compares storage requests with it, and the host's firewall judges
// the module's claim patches with the same function, so the two never disagree about a size.
package quantity

import (
	"math/bits"
	"strconv"
)

// Value reads a quantity ("10Gi", "1.5G", "500e6") as a whole number of units, rounded up as
// resource.Quantity.Value does; ok is false for a malformed, negative or larger than int64 quantity, and
// for one longer than MaxLen. Rounding up is monotonic: a value below another's is below it exactly too.
// Its work is bounded whatever the exponent (a few dozen 128-bit steps).
func Value(s string) (n int64, ok bool) {
	n, why := scaled(s, 0)
	return n, why == ""
}

// MilliValue is Value in thousandths ("500m" is 500, "1" 1000), rounded up as resource.Quantity.MilliValue
// does: the extension in-place-update compares CPU with it.
func MilliValue(s string) (n int64, ok bool) {
	n, why := scaled(s, 3)
	return n, why == ""
}

// Why says in a few words why Value refuses s, for a message ("negative", "larger than 2^63-1"); "" when
// Value reads it.
func Why(s string) string {
	_, why := scaled(s, 0)
	return why
}

// Why's words.
const (
	whyLong      = "longer than 64 characters"
	whyNegative  = "negative"
	whyMalformed = "not a quantity"
	whyLarge     = "larger than 2^63-1"
)

// scaled is Value of s times 10^exp10, or why it is refused.
func scaled(s string, exp10 int) (n int64, why string) {
	if len(s) > MaxLen {
		return 0, whyLong
	}
	i := 0
	if i < len(s) && s[i] == '+' {
		i++
	} else if i < len(s) && s[i] == '-' {
		return 0, whyNegative
	}
	var m uint64 // the digits without the decimal point
	frac, digits, point := 0, 0, false
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' && !point {
			point = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		digits++
		hi, lo := bits.Mul64(m, 10)
		var carry uint64
		lo, carry = bits.Add64(lo, uint64(c-'0'), 0)
		if hi != 0 || carry != 0 {
			return 0, whyLarge // more than 64 bits of digits
		}
		m = lo
		if point {
			frac++
		}
	}
	if digits == 0 {
		return 0, whyMalformed
	}
	binExp, decExp := 0, exp10-frac
	switch suffix := s[i:]; suffix {
	case "":
	case "Ki", "Mi", "Gi", "Ti", "Pi", "Ei":
		binExp = 10 * (1 + indexByte("KMGTPE", suffix[0]))
	case "n":
		decExp -= 9
	case "u":
		decExp -= 6
	case "m":
		decExp -= 3
	case "k":
		decExp += 3
	case "M", "G", "T", "P", "E":
		decExp += 3 * (2 + indexByte("MGTPE", suffix[0]))
	default:
		if suffix[0] != 'e' && suffix[0] != 'E' {
			return 0, whyMalformed
		}
		e, err := strconv.ParseInt(suffix[1:], 10, 32)
		if err != nil || suffix[1] == '+' && len(suffix) > 2 && suffix[2] == '-' {
			return 0, whyMalformed
		}
		decExp += int(e)
	}
	if m == 0 {
		return 0, "" // whatever the exponent
	}
	// value = m * 2^binExp * 10^decExp, rounded up
	hi, lo := uint64(0), m
	if binExp > 0 {
		hi, lo = bits.Mul64(m, 1<<binExp)
	}
	for ; decExp > 0; decExp-- {
		var c uint64
		h1, l1 := bits.Mul64(lo, 10)
		c, hi = bits.Mul64(hi, 10)
		if c != 0 {
			return 0, whyLarge
		}
		var carry uint64
		hi, carry = bits.Add64(hi, h1, 0)
		if carry != 0 {
			return 0, whyLarge
		}
		lo = l1
	}
	for decExp < 0 { // divide by 10^k, k <= 19, rounding up: ceil(ceil(x/a)/b) = ceil(x/(a*b))
		if hi == 0 && lo <= 1 {
			return 1, "" // a positive value below 1 rounds up to 1
		}
		div := uint64(1)
		for k := 0; k < 19 && decExp < 0; k++ {
			div *= 10
			decExp++
		}
		qhi, r := hi/div, hi%div
		qlo, r2 := bits.Div64(r, lo, div)
		if r2 != 0 {
			var c uint64
			qlo, c = bits.Add64(qlo, 1, 0)
			qhi += c
		}
		hi, lo = qhi, qlo
	}
	if hi != 0 || lo > 1<<63-1 {
		return 0, whyLarge
	}
	return int64(lo), ""
}

// MaxLen bounds the quantities Value reads: the API server's canonical forms are far shorter.
const MaxLen = 64

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}
