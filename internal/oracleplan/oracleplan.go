// Package oracleplan converts the reference harness's plans (`oracle plan -events`, and each step of
// `oracle simulate -json -events`) into the ABI v1 plan shape, for the tools and tests that compare with
// it: hack/conformance, hack/replay-oracle and the guest's oracle checks. The harness writes events as
// "Type Reason Message" strings and a sync error as a string; ABI v1 has event objects and a SyncFailed
// error (abi/README.md).
package oracleplan

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Convert returns the ABI v1 plan for a decoded harness plan: abi, actions ([] when none),
// requeueAfterSeconds, events and, when the sync failed, error. Numbers keep whatever representation
// the caller decoded them with.
func Convert(p map[string]any) map[string]any {
	out := map[string]any{"abi": 1, "requeueAfterSeconds": p["requeueAfterSeconds"]}
	if out["requeueAfterSeconds"] == nil {
		out["requeueAfterSeconds"] = 0
	}
	actions, _ := p["actions"].([]any)
	if actions == nil {
		actions = []any{}
	}
	out["actions"] = actions
	events := []any{}
	raw, _ := p["events"].([]any)
	for _, e := range raw {
		s, _ := e.(string)
		parts := strings.SplitN(s, " ", 3)
		for len(parts) < 3 {
			parts = append(parts, "")
		}
		events = append(events, map[string]any{"type": parts[0], "reason": parts[1], "message": parts[2]})
	}
	out["events"] = events
	if msg, _ := p["error"].(string); msg != "" {
		out["error"] = map[string]any{"code": "SyncFailed", "message": msg}
	}
	return out
}

// ToABI is Convert on JSON bytes. The actions keep the harness's bytes (their key order included), so a
// capture of them reads like the harness's output.
func ToABI(plan []byte) ([]byte, error) {
	var p struct {
		Actions             json.RawMessage `json:"actions"`
		RequeueAfterSeconds json.RawMessage `json:"requeueAfterSeconds"`
		Events              []any           `json:"events"`
		Error               any             `json:"error"`
	}
	if err := json.Unmarshal(plan, &p); err != nil {
		return nil, fmt.Errorf("oracle plan: %w", err)
	}
	c := Convert(map[string]any{"events": p.Events, "error": p.Error})
	out := struct {
		ABI     int             `json:"abi"`
		Actions json.RawMessage `json:"actions"`
		Error   any             `json:"error,omitempty"`
		Events  any             `json:"events"`
		Requeue json.RawMessage `json:"requeueAfterSeconds"`
	}{ABI: 1, Actions: p.Actions, Error: c["error"], Events: c["events"], Requeue: p.RequeueAfterSeconds}
	if len(out.Actions) == 0 || string(out.Actions) == "null" {
		out.Actions = json.RawMessage("[]")
	}
	if len(out.Requeue) == 0 {
		out.Requeue = json.RawMessage("0")
	}
	return json.Marshal(out)
}
