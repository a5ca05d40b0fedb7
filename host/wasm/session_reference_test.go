package wasm

import (
	"encoding/json"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
)

// appendReference writes what json.Marshal(abi.Unchanged) writes, whatever the uid and resourceVersion hold.
func TestReferenceIsMarshal(t *testing.T) {
	for _, c := range [][2]string{{"6f1c2f0e-8a55-4d5e-9b3c-0d1e2a3b4c5d", "90210"}, {"a\"b", "1"}, {"<&>", "x\\y"}, {"é", "\n"}, {"", ""}} {
		got, err := appendReference([]byte("x"), c[0], c[1])
		want, _ := json.Marshal(abi.Unchanged{Unchanged: abi.ObjectRef{UID: c[0], ResourceVersion: c[1]}})
		if err != nil || string(got) != "x"+string(want) {
			t.Errorf("%q: %s, want %s", c, got, want)
		}
	}
}
