package policy

import (
	"encoding/json"
	"fmt"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/internal/strictjson"
)

// The answer as it travels: pointers where the schema requires a member, and each hold, spend and error an
// object of its own, decoded by the rule plans are (strictjson.Object; abi/POLICY.md "How answers are
// decoded").
type (
	wireAnswer struct {
		ABI    *int               `json:"abi"`
		Holds  *[]json.RawMessage `json:"holds"`
		Spends []json.RawMessage  `json:"spends"`
		Error  json.RawMessage    `json:"error"`
	}
	wireHold struct {
		Action            *int     `json:"action"`
		Reason            *string  `json:"reason"`
		Message           *string  `json:"message"`
		RetryAfterSeconds *float64 `json:"retryAfterSeconds"`
	}
	wireSpend struct {
		Action              *int    `json:"action"`
		PodDisruptionBudget *string `json:"podDisruptionBudget"`
	}
)

// decodeAnswer reads out as a policy answer, each member present that the schema requires; CheckAnswer
// checks what it says against the plan.
func decodeAnswer(out []byte) (*abi.PolicyAnswer, error) {
	var w wireAnswer
	if err := decodeAt(out, &w, "answer"); err != nil {
		return nil, err
	}
	switch {
	case w.ABI == nil:
		return nil, missing("answer", "abi")
	case w.Holds == nil:
		return nil, missing("answer", "holds")
	}
	a := &abi.PolicyAnswer{ABI: *w.ABI, Holds: make([]abi.PolicyHold, len(*w.Holds))}
	for i, raw := range *w.Holds {
		h, err := decodeHold(raw, fmt.Sprintf("holds[%d]", i))
		if err != nil {
			return nil, err
		}
		a.Holds[i] = h
	}
	for i, raw := range w.Spends {
		s, err := decodeSpend(raw, fmt.Sprintf("spends[%d]", i))
		if err != nil {
			return nil, err
		}
		a.Spends = append(a.Spends, s)
	}
	if w.Error != nil {
		a.Error = &abi.Error{}
		if err := decodeAt(w.Error, a.Error, "error"); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func decodeHold(raw json.RawMessage, at string) (abi.PolicyHold, error) {
	var w wireHold
	if err := decodeAt(raw, &w, at); err != nil {
		return abi.PolicyHold{}, err
	}
	switch {
	case w.Action == nil:
		return abi.PolicyHold{}, missing(at, "action")
	case w.Reason == nil:
		return abi.PolicyHold{}, missing(at, "reason")
	case w.Message == nil:
		return abi.PolicyHold{}, missing(at, "message")
	}
	h := abi.PolicyHold{Action: *w.Action, Reason: *w.Reason, Message: *w.Message}
	if w.RetryAfterSeconds != nil {
		h.RetryAfterSeconds = *w.RetryAfterSeconds
	}
	return h, nil
}

func decodeSpend(raw json.RawMessage, at string) (abi.PolicySpend, error) {
	var w wireSpend
	if err := decodeAt(raw, &w, at); err != nil {
		return abi.PolicySpend{}, err
	}
	switch {
	case w.Action == nil:
		return abi.PolicySpend{}, missing(at, "action")
	case w.PodDisruptionBudget == nil:
		return abi.PolicySpend{}, missing(at, "podDisruptionBudget")
	}
	return abi.PolicySpend{Action: *w.Action, PodDisruptionBudget: *w.PodDisruptionBudget}, nil
}

func decodeAt(raw []byte, v any, at string) error {
	if err := strictjson.Object(raw, v); err != nil {
		return fmt.Errorf("answer is not a policy answer: %s: %v", at, err)
	}
	return nil
}

func missing(at, member string) error {
	return fmt.Errorf("answer is not a policy answer: %s.%s is missing", at, member)
}
