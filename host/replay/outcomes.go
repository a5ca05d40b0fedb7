package replay

import (
	"fmt"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/kube"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/policy"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// What a replay tells beside its steps, typed, for the text, the JSON and the CLI's --fail-on alike: the
// policies that failed, the warnings the controller recorded, and the policy holds a rollout ends waiting on.

// PolicyFailure is one policy failing one way (policy.Failure.Reason), however many syncs it failed in: the
// policy held nothing back there, so what it guards was not guarded.
type PolicyFailure struct {
	Policy    string   `json:"policy"`
	Reason    string   `json:"reason"`  // policy.FailTrap, policy.FailTimeout, ...
	Message   string   `json:"message"` // the first failure's error
	FirstAt   Duration `json:"firstAt"` // the first failure's sync, from the start (virtual time)
	FirstStep int      `json:"firstStep"`
	Count     int      `json:"count"` // the calls that failed this way
}

// WarningEvent is one Warning event the controller recorded (the module's, the host's), however many times:
// an annotation the module cannot read, a write the API server refused. The events of held writes are the
// holds (ActionHold, Outcome.Held) and those of failed policies PolicyFailures.
type WarningEvent struct {
	Reason  string   `json:"reason"`
	Message string   `json:"message"`
	FirstAt Duration `json:"firstAt"`
	Count   int      `json:"count"`
}

// PolicyHeld is a write a policy holds as the rollout ends (Outcome.Result "held"), in the policy's own terms:
// its answer's reason, message (what it waits for) and when it asked to be asked again.
type PolicyHeld struct {
	Policy  string `json:"policy"`
	Verb    string `json:"verb"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Since is when the policy first held the write, from the start (virtual time); SinceTime the same instant.
	Since     Duration `json:"since"`
	SinceTime string   `json:"sinceTime"`
	// RetryAfterSeconds: the policy asks for the set's next sync after this long (0: the host's retry).
	RetryAfterSeconds float64 `json:"retryAfterSeconds,omitempty"`
}

// OutcomeHeld is the result of a replay that ends waiting on a policy's hold: nothing but the hold keeps the
// rollout from going on (every pod of the set there is Ready).
const OutcomeHeld = "held"

// heldWrite names a write across syncs.
type heldWrite struct{ verb, kind, name string }

// heldIndex is the index of a result's write when a policy held it, else -1.
func heldIndex(r hostplan.Result) int {
	if r.Hold == nil {
		return -1
	}
	return r.Index
}

// markRepeatedHolds marks the holds of a sync that the previous sync had already, by the same policy, for the
// same reason and message: the text tells a hold once per change, not once per sync.
func (e *engine) markRepeatedHolds(actions []ActionRecord) {
	next := map[heldWrite]ActionHold{}
	for i := range actions {
		h := actions[i].Held
		if h == nil {
			continue
		}
		k := heldWrite{actions[i].Verb, actions[i].Kind, actions[i].Name}
		prev, ok := e.lastHolds[k]
		h.repeated = ok && prev.Policy == h.Policy && prev.Reason == h.Reason && prev.Message == h.Message
		next[k] = *h
	}
	e.lastHolds = next
}

// recordPolicyFailures counts the sync's policy failures into the timeline, once per policy and reason.
func (e *engine) recordPolicyFailures(st Step, failures []policy.Failure) {
	for _, f := range failures {
		i := 0
		for i < len(e.tl.PolicyFailures) && (e.tl.PolicyFailures[i].Policy != f.Policy || e.tl.PolicyFailures[i].Reason != f.Reason) {
			i++
		}
		if i == len(e.tl.PolicyFailures) {
			e.tl.PolicyFailures = append(e.tl.PolicyFailures, PolicyFailure{Policy: f.Policy, Reason: f.Reason, Message: oneLine(f.Err.Error()),
				FirstAt: st.Offset, FirstStep: st.Index})
		}
		e.tl.PolicyFailures[i].Count++
	}
}

// foldEvent counts a Warning event into list, once per reason and message.
func foldEvent(list []WarningEvent, ev abi.Event, st Step) []WarningEvent {
	for i := range list {
		if list[i].Reason == ev.Reason && list[i].Message == ev.Message {
			list[i].Count++
			return list
		}
	}
	return append(list, WarningEvent{Reason: ev.Reason, Message: ev.Message, FirstAt: st.Offset, Count: 1})
}

// heldRefusal reports whether a sync's error is the refusal of one of its held writes: the module ends an
// OrderedReady sync with the write's failure, which the hold already says.
func heldRefusal(actions []ActionRecord, syncErr string) bool {
	for _, a := range actions {
		if a.Held != nil && a.Error == syncErr {
			return true
		}
	}
	return false
}

// lastHeld is the writes policies held in the last sync that wrote or held anything.
func lastHeld(steps []Step) []ActionRecord {
	for i := len(steps) - 1; i >= 0; i-- {
		if len(steps[i].Actions) == 0 {
			continue
		}
		var held []ActionRecord
		for _, a := range steps[i].Actions {
			if a.Held != nil {
				held = append(held, a)
			}
		}
		return held
	}
	return nil
}

// judgeHolds ends out as "held" when the rollout would end stuck, at a limit or cut short by the caller's
// budget (a preview's: a hold's retries spend its syncs) with policies holding writes and every pod of the set
// there Ready: it waits on the holds and on nothing else. Any other outcome a policy still holds says so after
// its summary.
func (e *engine) judgeHolds(out *Outcome) {
	held := lastHeld(e.tl.Steps)
	if len(held) == 0 || out.Result == "complete" {
		return
	}
	if (out.Result == "stuck" || out.Result == "limit" || out.Result == "partial") && e.everyPodReady() {
		out.Result = OutcomeHeld
		for _, a := range held {
			out.Held = append(out.Held, e.policyHeld(a))
		}
		out.Summary = heldSummary(out.Held)
		return
	}
	var parts []string
	for _, a := range held {
		parts = append(parts, fmt.Sprintf("%s %s %s (%s %s: %s)", a.Verb, a.Kind, a.Name, a.Held.Policy, a.Held.Reason, oneLine(a.Held.Message)))
	}
	out.Summary += "; held by policy at the last sync: " + strings.Join(parts, ", ")
}

// everyPodReady: every pod of the set in the world is Ready and not being deleted.
func (e *engine) everyPodReady() bool {
	ss := e.api.StatefulSet()
	if ss == nil {
		return true
	}
	members := kube.MembersOfJSON(ss)
	for _, n := range e.api.Names(world.KindPod) {
		p := e.api.Get(world.KindPod, n)
		if _, ok := members.PodJSON(p); ok && (!kube.PodReadyJSON(p) || jsonobj.Get(p, "metadata.deletionTimestamp") != nil) {
			return false
		}
	}
	return true
}

// policyHeld is a held write of the last sync with since when its policy has held it (the host's memory of
// holds, which the policy's input carries as context.held).
func (e *engine) policyHeld(a ActionRecord) PolicyHeld {
	since, ok := e.held.Since(a.Held.Policy, a.Verb, a.Kind, a.Name)
	if !ok {
		since = e.clock.Now()
	}
	return PolicyHeld{Policy: a.Held.Policy, Verb: a.Verb, Kind: a.Kind, Name: a.Name, Reason: a.Held.Reason, Message: a.Held.Message,
		Since: Duration(since.Sub(e.start)), SinceTime: since.UTC().Format(time.RFC3339), RetryAfterSeconds: a.Held.RetryAfterSeconds}
}

// heldSummary says the holds a rollout ends waiting on, one clause per policy, reason and message: "policy
// window holds delete Pod web-0 since +10m20s (OutsideWindow): outside the maintenance window ...; asks again
// after 19h49m40s".
func heldSummary(held []PolicyHeld) string {
	type clause struct {
		h     PolicyHeld
		names []string
	}
	var clauses []*clause
	for _, h := range held {
		var c *clause
		for _, x := range clauses {
			if x.h.Policy == h.Policy && x.h.Reason == h.Reason && x.h.Message == h.Message && x.h.Verb == h.Verb && x.h.Kind == h.Kind {
				c = x
			}
		}
		if c == nil {
			c = &clause{h: h}
			clauses = append(clauses, c)
		}
		c.names = append(c.names, h.Name)
		c.h.Since = min(c.h.Since, h.Since)
	}
	parts := make([]string, len(clauses))
	for i, c := range clauses {
		parts[i] = fmt.Sprintf("policy %s holds %s %s %s since +%s (%s): %s", c.h.Policy, c.h.Verb, c.h.Kind,
			strings.Join(ordinal.Fold(c.names), ", "), c.h.Since, c.h.Reason, oneLine(c.h.Message))
		if c.h.RetryAfterSeconds > 0 {
			parts[i] += "; asks again after " + world.FormatDuration(time.Duration(c.h.RetryAfterSeconds*float64(time.Second)))
		}
	}
	return strings.Join(parts, "; ")
}

// warnings are the replay's warnings, what can fail a CI job first: each failing policy once per reason, then
// each Warning event once per reason and message, its reason as the code.
func (tl *Timeline) warnings() []Warning {
	var out []Warning
	for _, f := range tl.PolicyFailures {
		out = append(out, Warning{Code: WarnPolicyFailed, Message: PolicyFailureText(f)})
	}
	for _, w := range tl.WarningEvents {
		out = append(out, Warning{Code: w.Reason, Message: fmt.Sprintf("%s (%s): %s", w.Reason, since(w.Count, "sync", w.FirstAt), oneLine(w.Message))})
	}
	return out
}

// PolicyFailureText is a policy failure in words, as a replay's and a preview's warnings say it.
func PolicyFailureText(f PolicyFailure) string {
	return fmt.Sprintf("policy %s failed (%s) %s, holding nothing back: %s", f.Policy, f.Reason, since(f.Count, "call", f.FirstAt), f.Message)
}

// since is how many of a thing counted happened from when: "at +0s" once, "12 calls from +5s".
func since(n int, unit string, first Duration) string {
	if n == 1 {
		return "at +" + first.String()
	}
	return fmt.Sprintf("%d %ss from +%s", n, unit, first)
}
