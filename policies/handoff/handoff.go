// Command handoff is a policy module (abi/POLICY.md): it holds the deletion of a pod that still carries its
// role — a label the database's operator sets on the primary (default role=primary) — so the controller
// never deletes a primary before the operator has handed the role to another member. After a timeout
// (default 10m) it lets the deletion through: a handoff that never comes must not stop a rollout forever.
// An in-place update of such a pod (the extended module's pod-update-policy: its containers restart) takes
// the primary down as its deletion would, and is held the same way, by its first write (abi/POLICY.md
// section 2.1).
//
// The set chooses with annotations:
//
//	handoff.ordinal.dev/label:   role=primary   the label (KEY=VALUE, or KEY for any value) that holds a delete
//	handoff.ordinal.dev/timeout: 10m            how long a delete is held at most (a Go duration; 0: no limit)
package main

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/policies/kit"
)

const (
	annotationLabel   = "handoff.ordinal.dev/label"
	annotationTimeout = "handoff.ordinal.dev/timeout"
	defaultLabel      = "role=primary"
	defaultTimeout    = 10 * time.Minute
)

func main() {}

// decide holds each pending pod delete whose pod carries the role label, until the timeout.
func decide(in *kit.Input) ([]kit.Hold, error) {
	ann := in.Set().Get("metadata.annotations")
	label := defaultLabel
	if v := ann.Get(gjson.Escape(annotationLabel)); v.Exists() {
		label = strings.TrimSpace(v.String())
	}
	key, value, anyValue := strings.Cut(label, "=")
	anyValue = !anyValue
	if key == "" {
		return nil, errors.New(annotationLabel + " is empty: want KEY=VALUE or KEY")
	}
	timeout, invalid := defaultTimeout, ""
	if v := ann.Get(gjson.Escape(annotationTimeout)); v.Exists() {
		d, err := time.ParseDuration(v.String())
		if err != nil || d < 0 {
			invalid = annotationTimeout + " " + strconv.Quote(v.String()) + " is not a duration like 10m: the delete is held until it is"
		}
		timeout = d
	}
	var holds []kit.Hold
	for _, d := range in.Disruptions() {
		a := d.Action
		if a.Index < in.From || a.Errors.String() != "" {
			continue
		}
		v := in.Pod(a.Name).Get("metadata.labels." + gjson.Escape(key))
		if !v.Exists() || (!anyValue && v.String() != value) {
			continue
		}
		h := kit.Hold{Action: a.Index, Reason: "RoleNotHandedOff",
			Message: "pod " + a.Name + " still carries " + key + "=" + v.String() + ": waiting for the role to move to another pod"}
		if invalid != "" {
			h.Reason, h.Message, h.RetryAfter = "InvalidTimeout", h.Message+"; "+invalid, time.Minute
			holds = append(holds, h)
			continue
		}
		if timeout > 0 {
			since, ok := in.DisruptionHeldSince(d)
			if !ok {
				since = in.Now
			}
			left := since.Add(timeout).Sub(in.Now)
			if left <= 0 {
				continue // held long enough: the rollout goes on (the host reports the hold released)
			}
			h.Message += " (at most " + left.Round(time.Second).String() + " more)"
			h.RetryAfter = left
		}
		holds = append(holds, h)
	}
	return holds, nil
}
