package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// OracleFeatures are the feature gates the reference oracle (k8s.io/kubernetes v1.37.1) ran with when
// it made the expected plans: its defaults (internal/conformance/cases/INDEX.md). A case's expected plan is
// the plan for its snapshot under these gates, except where the snapshot overrides them.
var OracleFeatures = map[string]bool{
	"MaxUnavailableStatefulSet":             true,
	"StatefulSetRecreateStrategy":           false,
	"StatefulSetSemanticRevisionComparison": true,
	"StaleControllerConsistencyStatefulSet": true,
}

// OracleKubernetesVersion is the release the expected plans come from. The shipped module names
// v1.37.2, whose StatefulSet controller code is byte-identical; a candidate module must only match
// the minor (host/module's swap).
const OracleKubernetesVersion = "v1.37.1"

// PinFeatures returns the snapshot with every gate of OracleFeatures that it does not set itself made
// explicit, so that the case's expected plan holds whatever defaults a module declares. A module built
// with other gate defaults (a valid configuration of the same controller) is then held to exactly the
// same plans as the reference under the reference's gates.
//
// The snapshot's bytes are kept as they are (revision data is hashed byte for byte): the merged
// "features" member is appended at the end of the top-level object, where it wins over an earlier one
// (abi/README.md §4: the last of two equal keys wins).
func PinFeatures(snapshot []byte) ([]byte, error) {
	var top struct {
		Features map[string]bool `json:"features"`
	}
	if err := json.Unmarshal(snapshot, &top); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	features := map[string]bool{}
	for g, v := range OracleFeatures {
		features[g] = v
	}
	for g, v := range top.Features {
		features[g] = v
	}
	raw, err := json.Marshal(features)
	if err != nil {
		return nil, err
	}
	end := bytes.LastIndexByte(snapshot, '}')
	if end < 0 {
		return nil, fmt.Errorf("snapshot is not a JSON object")
	}
	out := make([]byte, 0, len(snapshot)+len(raw)+16)
	out = append(out, snapshot[:end]...)
	out = append(out, `,"features":`...)
	out = append(out, raw...)
	out = append(out, snapshot[end:]...)
	return out, nil
}
