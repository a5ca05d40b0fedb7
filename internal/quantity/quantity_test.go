package quantity

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// quantityBytes agrees with resource.Quantity's Value (rounded up) wherever the latter fits an int64, and
// refuses what ParseQuantity refuses, on fixed and random quantities.
func TestValueIsKubernetes(t *testing.T) {
	cases := []string{"0", "1", "10Gi", "1.5Gi", "500M", "1e3", "1E3", "1e-3", "100m", "1.5", "0.1", "1Ei", "7Ei", "8Ei",
		"9223372036854775807", "9223372036854775808", "1k", "1K", "1Ki", "12.34Mi", ".5Gi", "5.", "+5Gi", "-1", "Gi", "", "1.2.3",
		"1e", "1e+3", "1e-30", "1x", "1Gix", "1 Gi", "01Gi", "1e+-3", "0.000000000000000000001", "123456789012345678901234567890"}
	rng := rand.New(rand.NewSource(1))
	suffixes := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E", "e3", "e-2", "E9", "e18"}
	for i := 0; i < 3000; i++ {
		s := strconv.FormatUint(rng.Uint64()>>uint(rng.Intn(64)), 10)
		if rng.Intn(3) == 0 && len(s) > 1 {
			p := rng.Intn(len(s))
			s = s[:p] + "." + s[p:]
		}
		cases = append(cases, s+suffixes[rng.Intn(len(suffixes))])
	}
	checked := 0
	for _, s := range cases {
		got, ok := Value(s)
		q, err := resource.ParseQuantity(s)
		if err != nil || q.Sign() < 0 {
			if ok {
				t.Errorf("%q: %d, but Kubernetes refuses it (%v)", s, got, err)
			}
			continue
		}
		if q.Cmp(*resource.NewQuantity(1<<63-1, resource.DecimalSI)) > 0 {
			if ok {
				t.Errorf("%q: %d, but it exceeds an int64", s, got)
			}
			continue // larger than an int64 (where Value wraps): refused, so never a resize
		}
		want := q.Value() // rounded up
		if want == 1<<63-1 && !ok {
			continue // ParseQuantity clamps a binary quantity past an int64 to the largest: refused here
		}
		if !strings.ContainsAny(s, "0123456789") {
			if ok {
				t.Errorf("%q (no digits): %d", s, got)
			}
			continue // Kubernetes reads "Gi" as 0; refusing it only means no resize
		}
		if !ok || got != want {
			t.Errorf("%q: %d, %v; Kubernetes says %d", s, got, ok, want)
		}
		if q.Cmp(*resource.NewQuantity((1<<63-1)/1000, resource.DecimalSI)) < 0 {
			if got, ok := MilliValue(s); !ok || got != q.MilliValue() {
				t.Errorf("%q: MilliValue %d, %v; Kubernetes says %d", s, got, ok, q.MilliValue())
			}
		}
		checked++
	}
	if checked < 1500 {
		t.Errorf("only %d quantities compared", checked)
	}
}

// Quantities at the edges: 64-bit mantissas that overflow by one digit, and exponents far out of range
// (which must not take time: a zero or tiny value ends early, a large one overflows early).
func TestValueEdges(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"18446744073709551615", 0, false}, // fits 64 bits, not an int64
		{"18446744073709551616", 0, false}, // 2^64: overflows the mantissa by its last digit
		{"18446744073709551617k", 0, false},
		{"1844674407370955161.7Gi", 0, false},
		{"9223372036854775807", 1<<63 - 1, true},
		{"0e2147483647", 0, true},
		{"0.000e-2147483648", 0, true},
		{"1e-2147483648", 1, true},
		{"1e2147483647", 0, false},
		{"123456789e-2147483647", 1, true},
		{strings.Repeat("1", MaxLen+1), 0, false},
	} {
		if got, ok := Value(c.in); got != c.want || ok != c.ok {
			t.Errorf("%q: %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// Why names the reason Value refuses a quantity, and nothing for one it reads.
func TestWhy(t *testing.T) {
	for s, want := range map[string]string{
		"10Gi": "", "0": "", "1e-30": "",
		"-1Gi": "negative", "-0": "negative",
		"1e30": "larger than 2^63-1", "8Ei": "larger than 2^63-1", "123456789012345678901234567890": "larger than 2^63-1",
		"Gi": "not a quantity", "1x": "not a quantity", "": "not a quantity",
		strings.Repeat("1", MaxLen+1): "longer than 64 characters",
	} {
		if got := Why(s); got != want {
			t.Errorf("Why(%q) = %q, want %q", s, got, want)
		}
		if _, ok := Value(s); ok != (want == "") {
			t.Errorf("Value(%q) ok %v, but Why says %q", s, ok, want)
		}
	}
}
