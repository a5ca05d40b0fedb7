package wasm

import (
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
