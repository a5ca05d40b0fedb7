package rollout

import (
	"sort"

	hostplan "github.com/ordinal-dev/ordinal/host/plan"
)

// Held marks the next sync's writes the set's policies hold (host/policy's Judge of the plan, by action
// index): the rollout waits for them, so the state is waiting and each hold is the first reason, saying which
// policy holds which write and why (docs/policy-modules.md).
func (s *Status) Held(holds map[int]hostplan.Hold) {
	if len(holds) == 0 {
		return
	}
	idx := make([]int, 0, len(holds))
	for i := range holds {
		if i >= 0 && i < len(s.Next.Writes) {
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	var reasons []string
	for _, i := range idx {
		h, w := holds[i], &s.Next.Writes[i]
		w.HeldBy = &HeldBy{Policy: h.Policy, Reason: h.Reason, Message: h.Message}
		reasons = append(reasons, "policy "+h.Policy+" holds "+w.Verb+" "+w.Kind+" "+w.Name+": "+h.Message)
	}
	if len(reasons) == 0 {
		return
	}
	s.State = StateWaiting
	s.Reasons = append(reasons, s.Reasons...)
}

// HeldBy is the policy that holds a write of the next sync.
type HeldBy struct {
	Policy  string `json:"policy"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}
