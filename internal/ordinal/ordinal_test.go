package ordinal

import (
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Parse must agree with upstream's regexp-based getParentNameAndOrdinal.
func TestParseMatchesRegexp(t *testing.T) {
	re := regexp.MustCompile("(.*)-([0-9]+)$")
	upstream := func(name string) (string, int64) {
		m := re.FindStringSubmatch(name)
		if len(m) < 3 {
			return "", -1
		}
		if i, err := strconv.ParseInt(m[2], 10, 32); err == nil {
			return m[1], i
		}
		return m[1], -1
	}
	names := []string{"web-0", "web-10", "web-01", "web", "web-", "-1", "a-b-3", "web-x", "web-3a", "web-99999999999",
		"web-2147483647", "web-2147483648", "x\nweb-2", "a\nb\nc-7", "web--1", "w-e-b-4-5", ""}
	r := rand.New(rand.NewSource(1))
	alphabet := "ab-0129\n"
	for i := 0; i < 20000; i++ {
		b := make([]byte, r.Intn(10))
		for j := range b {
			b[j] = alphabet[r.Intn(len(alphabet))]
		}
		names = append(names, string(b))
	}
	for _, n := range names {
		wp, wo := upstream(n)
		gp, gord := Parse(n)
		if wp != gp || wo != gord {
			t.Fatalf("%q: got (%q, %d), upstream (%q, %d)", n, gp, gord, wp, wo)
		}
	}
}

func TestNaturalLess(t *testing.T) {
	if !Less("web-2", "web-10") || Less("web-10", "web-2") || !Less("data-web-0", "logs-web-0") {
		t.Error("natural order")
	}
}

func TestOfOrdinalSort(t *testing.T) {
	for _, c := range []struct {
		name, parent string
		ord          int
		ok           bool
	}{
		{"web-3", "web", 3, true}, {"webx-3", "web", 3, false}, {"data-web-2", "data-web", 2, true},
		{"web-x", "web", -1, false}, {"web-+1", "web", -1, false}, {"web-2147483648", "web", -1, false},
	} {
		if o, ok := Of(c.name, c.parent); o != c.ord || ok != c.ok {
			t.Errorf("Of(%q, %q) = %d, %v; want %d, %v", c.name, c.parent, o, ok, c.ord, c.ok)
		}
		if o, ok := Ordinal(c.name); ok != (c.ord >= 0) || ok && o != c.ord {
			t.Errorf("Ordinal(%q) = %d, %v", c.name, o, ok)
		}
	}
	names := []string{"web-10", "web-2", "data-web-1", "web-1", "web-0"}
	Sort(names)
	if got := strings.Join(names, " "); got != "data-web-1 web-0 web-1 web-2 web-10" {
		t.Errorf("Sort: %s", got)
	}
}

// IsName agrees with comparing against Name, for names that are and are not members.
func TestIsNameIsNameCompared(t *testing.T) {
	for _, c := range []struct {
		name, parent string
		n            int64
	}{{"web-0", "web", 0}, {"web-10", "web", 10}, {"web-010", "web", 10}, {"web-1", "web", 10}, {"web-10", "web", 1},
		{"web0", "web", 0}, {"we-0", "web", 0}, {"web-0", "we", 0}, {"a-b-9223372036854775807", "a-b", 9223372036854775807},
		{"web--1", "web", -1}, {"", "", 0}, {"-0", "", 0}, {"web-", "web", 0}} {
		if got, want := IsName(c.name, c.parent, c.n), c.name == Name(c.parent, c.n); got != want {
			t.Errorf("IsName(%q, %q, %d) = %v, Name gives %q", c.name, c.parent, c.n, got, Name(c.parent, c.n))
		}
	}
}
