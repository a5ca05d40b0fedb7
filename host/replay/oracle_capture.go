package replay

import (
	"encoding/json"

	"github.com/ordinal-dev/ordinal/abi"
)

// The reference harness's timelines, captured by hack/replay-oracle into
// testdata/scenarios/oracle/<scenario>.json. Tests compare tick-model replays with them, step for
// step; nothing here runs the harness.

// OracleCapture is one scenario's captured timelines, one per segment.
type OracleCapture struct {
	Scenario string          `json:"scenario"`
	Oracle   string          `json:"oracle"` // the harness's version line
	Segments []OracleSegment `json:"segments"`
}

// OracleSegment is `oracle simulate` run on the world a segment started from.
type OracleSegment struct {
	FirstStep      int          `json:"firstStep"`
	SnapshotSHA256 string       `json:"snapshotSHA256"` // of the world handed to the harness
	Skipped        string       `json:"skipped,omitempty"`
	Steps          []OracleStep `json:"steps,omitempty"`
	StopReason     string       `json:"stopReason,omitempty"` // last segment only
}

// OracleStep is one harness step: the time, the pods as the sync saw them, and the plan (converted
// to the ABI v1 shape).
type OracleStep struct {
	Now  string          `json:"now"`
	Pods []OraclePod     `json:"pods"`
	Plan json.RawMessage `json:"plan"`
}

// OraclePod is the harness's pod summary.
type OraclePod struct {
	Name        string `json:"name"`
	Revision    string `json:"revision"`
	Phase       string `json:"phase"`
	Ready       bool   `json:"ready"`
	Terminating bool   `json:"terminating"`
}

// TickExpressible says why a scenario cannot be replayed with the tick model ("" when it can).
func TickExpressible(sc *Scenario) string {
	cfg := sc.Kubelet
	cfg.Model = ModelTick
	if err := cfg.Validate(); err != nil {
		return err.Error()
	}
	for _, m := range sc.Manifests {
		var o struct {
			Kind     string
			Metadata struct{ Annotations map[string]string }
		}
		if json.Unmarshal(m, &o) == nil && o.Kind == "StatefulSet" && o.Metadata.Annotations[abi.AnnotationPolicies] != "" {
			return "the set names policies (" + abi.AnnotationPolicies + "), which the reference harness does not run"
		}
	}
	for _, ev := range sc.Events {
		if ev.LabelPod != nil {
			return "labelPod: the reference harness has no such event"
		}
		if len(ev.Kubelet) > 0 {
			if err := (KubeletConfig{Model: ModelTick, Pods: ev.Kubelet}).Validate(); err != nil {
				return err.Error()
			}
		}
	}
	return ""
}
