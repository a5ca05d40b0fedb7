package wasm

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// The globals and segments limits hold for every module. They were checked only after the tables of a module
// that grows one, so a module without table.grow (nearly all) had no limit on either.
func TestGlobalsAndSegmentsAreBounded(t *testing.T) {
	global := []byte{0x7f, 0x00, 0x41, 0x00, 0x0b} // i32, immutable, i32.const 0
	globals := tinyModule(append([]byte{2}, append(global, global...)...), nil, []byte{0, 0x0b})
	// two passive data segments of one byte each (the scan needs no memory for them)
	segments := append(tinyModule(nil, nil, []byte{0, 0x0b}), 11, 7, 2, 1, 1, 'a', 1, 1, 'b')
	for _, c := range []struct {
		name  string
		bin   []byte
		tight ModuleLimits
		want  string
	}{
		{"globals", globals, ModuleLimits{MaxGlobals: 1}, "MaxGlobals"},
		{"segments", segments, ModuleLimits{MaxSegments: 1}, "MaxSegments"},
	} {
		if _, err := checkModuleLimits(c.bin, ModuleLimits{}.withDefaults()); err != nil {
			t.Fatalf("%s: the module is refused under the default limits: %v", c.name, err)
		}
		if _, err := checkModuleLimits(c.bin, c.tight.withDefaults()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v; want the module refused naming %s", c.name, err, c.want)
		}
	}
}

// elementModule is tinyModule with an element section of passive segments, one per count, of that many
// references to function 0 (one byte each).
func elementModule(counts ...int) []byte {
	sec := appendU32(nil, uint32(len(counts)))
	for _, k := range counts {
		sec = appendU32(append(sec, 1, 0x00), uint32(k)) // passive, of functions, k items
		sec = append(sec, make([]byte, k)...)
	}
	return append(append(tinyModule(nil, nil, []byte{0, 0x0b}), appendU32([]byte{9}, uint32(len(sec)))...), sec...)
}

// MaxSegments counted segments, so one segment of millions of one-byte items passed it, and each item costs
// wazero about as much memory as a segment does (a decoded expression; a passive segment's items again in
// every instance). The items are bounded in all, however many segments hold them.
func TestElementItemsAreBounded(t *testing.T) {
	for _, c := range []struct {
		name   string
		counts []int
		limits ModuleLimits
		want   string // the refusal; "" when the module is admitted
	}{
		{"one segment at the default", []int{DefaultMaxElementItems}, ModuleLimits{}, ""},
		{"one segment over the default", []int{DefaultMaxElementItems + 1}, ModuleLimits{}, "hold at least 1048577 items; the limit is 1048576 (ModuleLimits.MaxElementItems)"},
		{"segments within the limit in all", []int{3, 3, 4}, ModuleLimits{MaxElementItems: 10}, ""},
		{"segments each within it, over it in all", []int{4, 4, 4}, ModuleLimits{MaxElementItems: 10}, "hold at least 12 items; the limit is 10 (ModuleLimits.MaxElementItems)"},
	} {
		shape, err := checkModuleLimits(elementModule(c.counts...), c.limits.withDefaults())
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: got %v; want the module refused with %q", c.name, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: refused: %v", c.name, err)
		}
		items := 0
		for _, k := range c.counts {
			items += k
		}
		if shape.ElementItems != items || shape.Segments != len(c.counts) {
			t.Errorf("%s: shape %+v, want %d segments of %v items", c.name, shape, len(c.counts), c.counts)
		}
	}
}

// A negative limit is refused by name before the module is read: it would otherwise refuse every module with
// a word about the module's shape, not the configuration.
func TestNegativeLimitsAreRefusedByName(t *testing.T) {
	l := reflect.TypeFor[ModuleLimits]()
	for i := range l.NumField() {
		var limits ModuleLimits
		reflect.ValueOf(&limits).Elem().Field(i).SetInt(-1)
		name := l.Field(i).Name
		_, err := Load(context.Background(), []byte("not a module"), Config{Limits: limits})
		if err == nil || !strings.Contains(err.Error(), "ModuleLimits."+name+" -1 is negative") {
			t.Errorf("%s -1: %v", name, err)
		}
	}
}
