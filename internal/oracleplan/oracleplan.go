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
	out["events"] = abiEvents(p["events"])
	if e := abiError(p["error"]); e != nil {
		out["error"] = e
	}
	return out
}

// ToABI is Convert on JSON bytes. The actions keep the harness's bytes (their key order included), so a
// capture of them reads like the harness's output.
func ToABI(plan []byte) ([]byte, error) {
	var p struct {
		Actions             json.RawMessage `json:"actions"`
		RequeueAfterSeconds json.RawMessage `json:"requeueAfterSeconds"`
		Events              any             `json:"events"`
		Error               any             `json:"error"`
	}
	if err := json.Unmarshal(plan, &p); err != nil {
		return nil, fmt.Errorf("oracle plan: %w", err)
	}
	out := struct {
		ABI     int             `json:"abi"`
		Actions json.RawMessage `json:"actions"`
		Error   any             `json:"error,omitempty"`
		Events  any             `json:"events"`
		Requeue json.RawMessage `json:"requeueAfterSeconds"`
	}{ABI: 1, Actions: p.Actions, Events: abiEvents(p.Events), Requeue: p.RequeueAfterSeconds}
	if e := abiError(p.Error); e != nil {
		out.Error = e
	}
	if len(out.Actions) == 0 || string(out.Actions) == "null" {
		out.Actions = json.RawMessage("[]")
	}
	if len(out.Requeue) == 0 {
		out.Requeue = json.RawMessage("0")
	}
	return json.Marshal(out)
}

// abiEvents turns the harness's "Type Reason Message" strings into ABI event objects ([] when none).
func abiEvents(v any) []any {
	raw, _ := v.([]any)
	events := []any{}
	for _, e := range raw {
		s, _ := e.(string)
		parts := strings.SplitN(s, " ", 3)
		for len(parts) < 3 {
			parts = append(parts, "")
		}
		events = append(events, map[string]any{"type": parts[0], "reason": parts[1], "message": parts[2]})
	}
	return events
}

// abiError is the ABI error of a harness's sync error string: SyncFailed, or nil when the sync succeeded.
func abiError(v any) map[string]any {
	if msg, _ := v.(string); msg != "" {
		return map[string]any{"code": "SyncFailed", "message": msg}
	}
	return nil
}
