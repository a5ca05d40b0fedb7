package replay

import (
	"fmt"

	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// Obj is a Kubernetes object as generic JSON (internal/jsonobj). The world is kept as JSON values, not
// typed structs, because the module hashes pod templates byte for byte: a typed round trip would add
// or drop fields and change revision names.
type Obj = jsonobj.Obj

// mustJSON encodes like encoding/json (sorted map keys); values here are always encodable.
func mustJSON(v any) []byte {
	b, err := appendJSON(nil, v)
	if err != nil {
		panic(fmt.Sprintf("replay: encoding JSON: %v", err))
	}
	return b
}
