package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
)

// ConditionPolicyHold is the condition of a set's status that says what its policies hold back: True with
// the first held write's policy, reason and message while a sync holds writes; False once a sync holds none
// (a set whose policies never held a write never gets it, so its status is upstream's byte for byte).
// Upstream's status pass keeps the conditions it finds (v1.37 copies them and writes when they differ), so
// the host owns this one.
const ConditionPolicyHold = "PolicyHold"

// ReasonNothingHeld is the reason of ConditionPolicyHold False.
const ReasonNothingHeld = "NothingHeld"

// maxConditionMessage bounds the condition's message (an event's is 1 KiB; a status is read by people).
const maxConditionMessage = 1024

// HoldStatus is host/plan's Options.Status for a sync of the set set returns (the snapshot's) at now: the
// set's PolicyHold condition set to what the sync held — in the plan's own status write when it has one,
// else in a status write of the host's at the end of the plan, made only when the condition changes. Every
// host gives it every set, with policies or not, so a set whose policies were removed while they held a
// write is told that nothing is held. mem (nil: none) is what the host remembers of the holds before this
// sync: a condition that turns True is dated from when its hold began (holdStart), not from the sync whose
// status write first landed, so MemoryOf never takes the record of the hold it says is on for an older one.
func HoldStatus(set func() gjson.Result, now time.Time, mem *Memory) func(*abi.Action, []hostplan.HeldWrite) *abi.Action {
	return func(a *abi.Action, held []hostplan.HeldWrite) *abi.Action {
		var status gjson.Result
		if a != nil {
			if status = gjson.GetBytes(a.Object, "status"); !status.IsObject() {
				return nil // not a status the writer sends: the plan's write as it is (refused as it was)
			}
		} else {
			status = set().Get("status")
		}
		if len(held) == 0 && status.Get(`conditions.#(type=="`+ConditionPolicyHold+`").status`).String() != "True" {
			return nil // nothing held, and nothing said to be held: the plan as it is
		}
		next, changed := withHoldCondition(json.RawMessage(status.Raw), held, now, holdStart(mem, held, now))
		if !changed {
			return nil
		}
		obj, err := json.Marshal(map[string]json.RawMessage{"status": next})
		if err != nil {
			return nil
		}
		if a != nil {
			out := *a
			out.Object = obj
			return &out
		}
		s := set()
		return &abi.Action{Verb: abi.VerbUpdateStatus, Kind: abi.KindStatefulSet, Namespace: s.Get("metadata.namespace").String(),
			Name: s.Get("metadata.name").String(), Object: obj}
	}
}

// holdStart is when the holds of a sync at now began: the earliest time mem says a write of held has been
// held since (a write held first in this sync, now). A refused status write puts off the condition, not
// the hold, which the host has been timing (and recording in the set) since.
func holdStart(mem *Memory, held []hostplan.HeldWrite, now time.Time) time.Time {
	start := now
	if mem == nil {
		return start
	}
	for _, h := range held {
		if t, ok := mem.Since(h.Policy, h.Verb, h.Kind, h.Name); ok && t.Before(start) {
			start = t
		}
	}
	return start
}

// condition is a StatefulSetCondition as the host writes and compares its own.
type condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
}

// withHoldCondition is status with ConditionPolicyHold as held says, and whether that changed it. Other
// conditions and members are kept as they are; the time of the last transition changes only with the
// condition's status, as setStatefulSetCondition keeps it. The condition changes when what holds changes
// (the policy, the write, the reason), not with each sync's message (a countdown, a budget's numbers), so a
// hold that lasts costs one status write, not one per retry. A transition to True is dated start (when the
// hold began), one to False now.
func withHoldCondition(status json.RawMessage, held []hostplan.HeldWrite, now, start time.Time) (json.RawMessage, bool) {
	members := map[string]json.RawMessage{}
	if len(status) > 0 && string(status) != "null" {
		if err := json.Unmarshal(status, &members); err != nil {
			return nil, false
		}
	}
	var conds []json.RawMessage
	if c := members["conditions"]; len(c) > 0 && string(c) != "null" {
		if err := json.Unmarshal(c, &conds); err != nil {
			return nil, false
		}
	}
	at, cur := -1, condition{}
	for i, c := range conds {
		if gjson.GetBytes(c, "type").String() == ConditionPolicyHold {
			at = i
			_ = json.Unmarshal(c, &cur)
			break
		}
	}
	var want condition
	same := false // the condition says this already: its message is kept, not rewritten at every sync
	switch {
	case len(held) > 0:
		h := held[0]
		what := fmt.Sprintf("policy %s holds %s %s %s: ", h.Policy, h.Verb, h.Kind, h.Name)
		same = at >= 0 && cur.Status == "True" && cur.Reason == h.Reason && strings.HasPrefix(cur.Message, what)
		msg := what + h.Message
		if n := len(held) - 1; n > 0 {
			msg += fmt.Sprintf(" (and %d more held)", n)
		}
		want = condition{Type: ConditionPolicyHold, Status: "True", Reason: h.Reason, Message: cutRunes(msg, maxConditionMessage)}
	case at >= 0 && cur.Status == "True":
		want = condition{Type: ConditionPolicyHold, Status: "False", Reason: ReasonNothingHeld, Message: "the set's policies hold no write"}
	default:
		return status, false // nothing held, and nothing said to be held
	}
	if same || at >= 0 && cur.Status == want.Status && cur.Reason == want.Reason && cur.Message == want.Message {
		return status, false
	}
	want.LastTransitionTime = now.UTC().Format(time.RFC3339)
	if want.Status == "True" {
		want.LastTransitionTime = start.UTC().Format(time.RFC3339)
	}
	if at >= 0 && cur.Status == want.Status {
		want.LastTransitionTime = cur.LastTransitionTime
	}
	b, err := json.Marshal(want)
	if err != nil {
		return nil, false
	}
	if at >= 0 {
		conds[at] = b
	} else {
		conds = append(conds, b)
	}
	if members["conditions"], err = json.Marshal(conds); err != nil {
		return nil, false
	}
	out, err := json.Marshal(members)
	return out, err == nil
}

// cutRunes cuts s to at most n bytes without splitting a character.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-3], "") + "..."
}
