// Package policy runs a set's policy modules (abi/POLICY.md) on the plans of its syncs: each is asked which
// writes it holds back, its answer is checked, and the holds become host/plan's Judge. A policy that fails
// (traps, times out, answers out of contract) holds nothing back and is reported: see docs/policy-modules.md for
// why failing open is the safe choice.
package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/wasm"
)

// Module is a loaded policy module; *wasm.Policy implements it.
type Module interface {
	Name() string
	// Wants reports whether the policy reads this member of the host's context (abi.ContextPodDisruptionBudgets).
	Wants(context string) bool
	Evaluate(ctx context.Context, input []byte) ([]byte, error)
}

// Wants reports whether any of the policies reads this member of the host's context.
func Wants(policies []Module, context string) bool {
	for _, p := range policies {
		if p.Wants(context) {
			return true
		}
	}
	return false
}

// Failure is a policy that could not answer, or answered out of contract: it held nothing back.
type Failure struct {
	Policy string
	Reason string // what went wrong, one of FailureReasons (Fail*): events, outcomes and metrics name it
	Err    error
}

// Why a policy failed (Failure.Reason): label values of ordinal_policy_failures_total{reason}, and what a
// replay's and a preview's policyFailures say.
const (
	FailTrap          = "trap"           // the module trapped (a panic) or exited
	FailTimeout       = "timeout"        // the call ran past the policy's timeout or the caller's deadline
	FailOutOfMemory   = "out_of_memory"  // the module ran out of memory
	FailCanceled      = "canceled"       // the caller gave up on the call
	FailSkipped       = "skipped"        // not asked: it timed out in a row and its pause has not ended (ErrSkipped)
	FailInvalidAnswer = "invalid_answer" // an answer out of contract (abi/POLICY.md section 3), or too large
	FailUndecided     = "undecided"      // the answer's error: the policy could not decide
	FailInput         = "input"          // the host could not write the policy's input
	FailOther         = "error"          // anything else the call returned
)

// FailureReasons are every Failure.Reason, in the order they are documented.
var FailureReasons = []string{FailTrap, FailTimeout, FailOutOfMemory, FailCanceled, FailSkipped, FailInvalidAnswer, FailUndecided, FailInput, FailOther}

// ErrUndecided is the error of an answer whose error member is set (abi.PolicyAnswer.Error).
var ErrUndecided = errors.New("the policy could not decide")

// errInput wraps what kept the host from writing a policy's input.
type errInput struct{ err error }

func (e errInput) Error() string { return e.err.Error() }
func (e errInput) Unwrap() error { return e.err }

// failureReason is the Failure.Reason of a policy call's error: the module's kind of failure (host/wasm's
// error kinds), an answer the host refused, or the host's own input.
func failureReason(err error) string {
	var in errInput
	switch {
	case errors.As(err, &in):
		return FailInput
	case errors.Is(err, wasm.ErrTrap):
		return FailTrap
	case errors.Is(err, wasm.ErrTimeout):
		return FailTimeout
	case errors.Is(err, wasm.ErrOutOfMemory):
		return FailOutOfMemory
	case errors.Is(err, wasm.ErrCanceled):
		return FailCanceled
	case errors.Is(err, ErrSkipped):
		return FailSkipped
	case errors.Is(err, ErrUndecided):
		return FailUndecided
	case errors.Is(err, errAnswer), errors.Is(err, wasm.ErrBadModule): // an output out of bounds is no answer either
		return FailInvalidAnswer
	}
	return FailOther
}

// failure is the Failure of policy for err, its reason read from err.
func failure(policy string, err error) Failure {
	return Failure{Policy: policy, Reason: failureReason(err), Err: err}
}

// errAnswer marks an answer out of contract (CheckAnswer's and the spends' checks).
var errAnswer = errors.New("answer out of contract")

// answerError is an answer out of contract: its message as it is, errAnswer to errors.Is.
type answerError struct{ err error }

func (e answerError) Error() string        { return e.err.Error() }
func (e answerError) Is(target error) bool { return target == errAnswer }
func (e answerError) Unwrap() error        { return e.err }

func (f Failure) Error() string { return "policy " + f.Policy + ": " + f.Err.Error() }

// Event reasons of the host's own events about policies (the holds are the module's Failed<Verb> events).
const (
	EventFailed   = "PolicyFailed"   // Warning: a policy could not answer; it held nothing back
	EventReleased = "PolicyReleased" // Normal: a write held in the previous sync is held no longer
	// Warning: the set's record of its policies' holds (AnnotationHeld) is unreadable; they are timed afresh
	EventMemoryInvalid = "PolicyMemoryInvalid"
)

// Run is the policies of one sync.
type Run struct {
	Policies []Module
	Snapshot []byte // the reconcile module's snapshot, whole
	Memory   *Memory
	Signals  map[string]json.RawMessage
	// PodDisruptionBudgets, for policies that ask for them (abi.PolicyContext.PodDisruptionBudgets): JSON
	// values, written into the input as they are.
	PodDisruptionBudgets []json.RawMessage
	// Nodes, for policies that ask for them (abi.PolicyContext.Nodes): JSON values, written as they are.
	Nodes []json.RawMessage
	// Failed is told of each policy that failed (may be nil); the sync goes on without its holds.
	Failed func(Failure)
	// Timed is told how long each policy call took, its input written and its answer checked (may be nil).
	Timed func(policy string, d time.Duration)

	// What the host that wrote the snapshot knows of it, so that a policy's input is written from those
	// parts instead of read out of the snapshot (each may be nil: the snapshot is then read for it). They
	// are the host's own encoding: JSON, not checked again.
	//
	// Object is the snapshot's object of that kind and name as the snapshot carries it (the host's encoding
	// of it): the objects a plan names are then found without reading the snapshot's lists.
	Object func(kind, name string) (json.RawMessage, bool)
	// Head is the snapshot's members other than pods, revisions and claims — abi, now, features, the
	// statefulSet — as the host wrote them: a JSON object without its closing brace.
	Head []byte
	// Pods are the snapshot's pods' names and those of them that are down, for context "disrupted".
	Pods func() Pods

	// Budgets commits the disruptions allowed pod deletes spend (Admit; nil: nothing is committed, for a
	// host that only asks, as `kubectl ordinal status` does).
	Budgets BudgetWriter
	// Now is the sync's time: when a spent disruption's pod is recorded as disrupted (zero: the clock's).
	Now time.Time

	// also: the holds of policies after the first that held a write, by write (Held)
	also map[heldKey][]hostplan.HeldWrite
	// spends: the budgets each action of the plan last judged spends, by action (spend.go)
	spends map[int][]spent
	// ledger: the context's budgets by name, as given or as the host's last update of each returned it
	ledger map[string]*budgetEntry
	// returned: the disruptions of in-place updates that are over were given back (spend_return.go)
	returned bool

	view  *view          // the snapshot indexed for policies that read the plan's objects only (snapshot_view.go)
	ctx   encodedContext // the context's members but held, encoded once
	valid bool           // the whole snapshot was found to be JSON
}

// Judge is host/plan's Options.Judge: every policy asked about p from from on; an action held by several
// is held by the first that names it, in the set's order.
//
// A plan with no write a policy may hold from from on (each is the status write or planned to fail) is not
// shown to the policies (abi/POLICY.md section 4): every answer could only hold nothing. Most of a set's
// syncs are such plans (a pod's status changed, and the sync writes the set's status).
func (r *Run) Judge(ctx context.Context, p *abi.Plan, from int) map[int]hostplan.Hold {
	holds := map[int]hostplan.Hold{}
	r.spends = nil // the previous plan's: its writes from from on were not issued
	if len(r.Policies) == 0 {
		return holds
	}
	r.returnSpent(ctx) // before the budgets are read: once a sync
	if !holdable(p, from) {
		return holds
	}
	wire := *p // as the ABI writes a plan: arrays, never null
	if wire.Actions == nil {
		wire.Actions = []abi.Action{}
	}
	if wire.Events == nil {
		wire.Events = []abi.Event{}
	}
	planJSON, err := json.Marshal(&wire)
	if err != nil {
		for _, m := range r.Policies {
			r.fail(failure(m.Name(), errInput{err}))
		}
		return holds
	}
	var viewJSON []byte
	var viewErr error
	for _, m := range r.Policies {
		snapshot := r.Snapshot
		if !m.Wants(abi.ContextSnapshot) {
			if viewJSON == nil {
				if r.view == nil {
					r.view = newView(r.Snapshot, r.Head, r.Object)
				}
				// Written of the host's own encoding (Head, Object) it is JSON; of pieces read out of the
				// snapshot, it is checked (a view is small; checking it cost a small policy's call a fifth).
				if viewJSON = r.view.of(p); (r.Head == nil || r.Object == nil) && !json.Valid(viewJSON) {
					viewErr = errInput{errors.New("the snapshot is not JSON")}
				}
			}
			if viewErr != nil {
				r.fail(failure(m.Name(), viewErr))
				continue
			}
			snapshot = viewJSON
		}
		t0 := time.Now()
		answer, err := r.ask(ctx, m, p, snapshot, planJSON, from)
		if r.Timed != nil {
			r.Timed(m.Name(), time.Since(t0))
		}
		if err != nil {
			r.fail(failure(m.Name(), err))
			continue
		}
		r.spend(m.Name(), answer.Spends)
		for _, h := range answer.Holds {
			hold := hostplan.Hold{Policy: m.Name(), Reason: h.Reason, Message: h.Message,
				RetryAfter: time.Duration(h.RetryAfterSeconds * float64(time.Second))}
			if _, dup := holds[h.Action]; !dup {
				holds[h.Action] = hold
				continue
			}
			a := &p.Actions[h.Action]
			k := heldKey{a.Verb, a.Kind, a.Name}
			if r.also == nil {
				r.also = map[heldKey][]hostplan.HeldWrite{}
			}
			r.also[k] = append(r.also[k], hostplan.HeldWrite{Verb: a.Verb, Kind: a.Kind, Name: a.Name, Hold: hold})
		}
	}
	return holds
}

// Held is held, the writes the sync's policies held back, with every other policy that held one of them too
// (Judge attributes a write to the first policy that holds it): Memory remembers since when each policy has
// held each write, so that a later policy's own hold (a handoff's timeout) counts from when it first held, not
// from when the earlier one let go. A nil Run has nothing to add.
func (r *Run) Held(held []hostplan.HeldWrite) []hostplan.HeldWrite {
	if r == nil || len(r.also) == 0 {
		return held
	}
	out := slices.Clone(held)
	for _, h := range held {
		for _, o := range r.also[heldKey{h.Verb, h.Kind, h.Name}] {
			if o.Policy != h.Policy && !slices.ContainsFunc(out, func(x hostplan.HeldWrite) bool {
				return x.Policy == o.Policy && x.Verb == o.Verb && x.Kind == o.Kind && x.Name == o.Name
			}) {
				out = append(out, o)
			}
		}
	}
	return out
}

// holdable: the plan has a write from from on that a policy may hold (abi/POLICY.md section 3).
func holdable(p *abi.Plan, from int) bool {
	for i := max(from, 0); i < len(p.Actions); i++ {
		if a := &p.Actions[i]; a.Error == "" && a.Verb != abi.VerbUpdateStatus {
			return true
		}
	}
	return false
}

func (r *Run) fail(f Failure) {
	if r.Failed != nil {
		r.Failed(f)
	}
}

// ask runs one policy and checks its answer.
func (r *Run) ask(ctx context.Context, m Module, p *abi.Plan, snapshot, planJSON []byte, from int) (*abi.PolicyAnswer, error) {
	in, err := r.input(m, snapshot, planJSON, from)
	if err != nil {
		return nil, errInput{err}
	}
	out, err := m.Evaluate(ctx, in)
	if err != nil {
		return nil, err
	}
	a, err := CheckAnswer(out, p, from, r.podRevision)
	if err != nil {
		return nil, err
	}
	if err := r.checkSpends(p, a.Spends); err != nil {
		return nil, answerError{err}
	}
	return a, nil
}

// input is evaluate's input, written around the snapshot's bytes (no second encoding of the world).
func (r *Run) input(m Module, snapshot, planJSON []byte, from int) (_ []byte, err error) {
	var mem []abi.HeldWrite
	if r.Memory != nil {
		mem = r.Memory.held(m.Name())
	}
	// The context: held is the policy's own; the rest is the same for every call of the sync, each member
	// encoded once (as json.Marshal(abi.PolicyContext) writes it: omitted when empty).
	ctxJSON := []byte{'{'}
	member := func(name string, v []byte) {
		if len(v) == 0 {
			return
		}
		if len(ctxJSON) > 1 {
			ctxJSON = append(ctxJSON, ',')
		}
		ctxJSON = append(append(append(append(ctxJSON, '"'), name...), `":`...), v...)
	}
	if len(mem) > 0 {
		held, err := json.Marshal(mem)
		if err != nil {
			return nil, err
		}
		member("held", held)
	}
	if err := r.encodeContext(); err != nil {
		return nil, err
	}
	member("signals", r.ctx.signals)
	if m.Wants(abi.ContextPodDisruptionBudgets) {
		if r.ctx.budgets == nil && len(r.PodDisruptionBudgets) > 0 {
			r.ctx.budgets = joinRaw(r.PodDisruptionBudgets)
		}
		member("podDisruptionBudgets", r.ctx.budgets)
	}
	if m.Wants(abi.ContextNodes) {
		if r.ctx.nodes == nil && len(r.Nodes) > 0 {
			r.ctx.nodes = joinRaw(r.Nodes)
		}
		member("nodes", r.ctx.nodes)
	}
	if m.Wants(abi.ContextDisrupted) {
		if r.ctx.disrupted == nil {
			pods := r.Pods
			if pods == nil {
				pods = func() Pods { return podsOf(r.Snapshot) }
			}
			if r.ctx.disrupted, err = json.Marshal(disruptedOf(r.set(), pods())); err != nil {
				return nil, err
			}
		}
		member("disrupted", r.ctx.disrupted)
	}
	ctxJSON = append(ctxJSON, '}')
	if m.Wants(abi.ContextSnapshot) && !r.valid { // the whole snapshot: checked once a sync (a view, once a plan)
		if !json.Valid(snapshot) {
			return nil, errors.New("the snapshot is not JSON")
		}
		r.valid = true
	}
	b := make([]byte, 0, len(snapshot)+len(planJSON)+len(ctxJSON)+64)
	b = append(b, `{"abi":1,"snapshot":`...)
	b = append(b, snapshot...)
	b = append(b, `,"plan":`...)
	b = append(b, planJSON...)
	b = fmt.Appendf(b, `,"from":%d,"context":`, from)
	b = append(b, ctxJSON...)
	return append(b, '}'), nil
}

// joinRaw is a JSON array of the host's own JSON values, as they are (json.Marshal would check and compact
// each, which cost a small policy's call a tenth).
func joinRaw(vs []json.RawMessage) json.RawMessage {
	n := 2
	for _, v := range vs {
		n += len(v) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, v := range vs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, v...)
	}
	return append(out, ']')
}

// encodedContext is the members of a sync's context other than held, each encoded once (nil: absent or not yet asked for).
type encodedContext struct {
	done                               bool
	signals, budgets, nodes, disrupted json.RawMessage
}

// encodeContext encodes the signals once a Run (the budgets, nodes and disrupted pods are encoded when a
// policy first asks for them: a sync pays for what its policies read).
func (r *Run) encodeContext() error {
	if r.ctx.done {
		return nil
	}
	var err error
	if len(r.Signals) > 0 {
		if r.ctx.signals, err = json.Marshal(r.Signals); err != nil {
			return err
		}
	}
	r.ctx.done = true
	return nil
}

// set is the snapshot's statefulSet: from the view's head (the host's Head, or read once), else read out of
// the snapshot.
func (r *Run) set() gjson.Result {
	head := r.Head
	if r.view != nil {
		head = r.view.head
	}
	if head == nil {
		return gjson.GetBytes(r.Snapshot, "statefulSet")
	}
	return gjson.GetBytes(append(head[:len(head):len(head)], '}'), "statefulSet")
}

var reasonPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// CheckAnswer reads a policy's answer to a plan and checks it against the contract (POLICY.md "Answer"):
// holds only of writes from from on that are not planned to fail nor the status write, each once, within
// the limits; spends only of pod disruptions it does not hold — a pod delete, or an in-place update named
// by its first action (POLICY.md section 2.1) — each budget once. podRevision is the revision label of the
// snapshot's pod of a name, which tells an in-place update from another pod update (nil: the snapshot has
// no pods). One hold or spend out of contract refuses the whole answer.
// An answer whose error member is set fails with ErrUndecided; any other refusal is errors.Is an answer out of
// contract (failureReason tells them apart).
func CheckAnswer(out []byte, p *abi.Plan, from int, podRevision func(name string) string) (*abi.PolicyAnswer, error) {
	a, err := checkAnswer(out, p, from, podRevision)
	if err != nil && !errors.Is(err, ErrUndecided) {
		err = answerError{err}
	}
	return a, err
}

func checkAnswer(out []byte, p *abi.Plan, from int, podRevision func(name string) string) (*abi.PolicyAnswer, error) {
	a, err := decodeAnswer(out)
	if err != nil {
		return nil, err
	}
	switch {
	case a.ABI != abi.Version:
		return nil, fmt.Errorf("answer abi is %d, not %d", a.ABI, abi.Version)
	case a.Error != nil:
		return nil, fmt.Errorf("%w: %s", ErrUndecided, cut(a.Error.Message, abi.MaxPolicyMessageLength))
	case len(a.Holds) > abi.MaxPolicyHolds:
		return nil, fmt.Errorf("answer holds %d writes, more than %d", len(a.Holds), abi.MaxPolicyHolds)
	}
	seen := map[int]bool{}
	for i, h := range a.Holds {
		at := fmt.Sprintf("holds[%d]", i)
		if err := toIssue(p, from, h.Action); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		switch {
		case p.Actions[h.Action].Verb == abi.VerbUpdateStatus:
			return nil, fmt.Errorf("%s: action %d is the status write, which a policy cannot hold", at, h.Action)
		case seen[h.Action]:
			return nil, fmt.Errorf("%s: action %d is held twice", at, h.Action)
		case !reasonPattern.MatchString(h.Reason) || len(h.Reason) > abi.MaxPolicyReasonLength:
			return nil, fmt.Errorf("%s: reason %q is not UpperCamelCase of at most %d characters", at, cut(h.Reason, 64), abi.MaxPolicyReasonLength)
		case h.Message == "" || len(h.Message) > abi.MaxPolicyMessageLength:
			return nil, fmt.Errorf("%s: message is empty or longer than %d bytes", at, abi.MaxPolicyMessageLength)
		case strings.ContainsFunc(h.Message, unicode.IsControl):
			return nil, fmt.Errorf("%s: message has a control character (a line break, an escape): messages are one line", at)
		case !(h.RetryAfterSeconds >= 0 && h.RetryAfterSeconds <= abi.MaxPolicyRetrySeconds):
			return nil, fmt.Errorf("%s: retryAfterSeconds %v is not between 0 and %d", at, h.RetryAfterSeconds, abi.MaxPolicyRetrySeconds)
		}
		seen[h.Action] = true
	}
	if len(a.Spends) > abi.MaxPolicySpends {
		return nil, fmt.Errorf("answer spends %d budgets, more than %d", len(a.Spends), abi.MaxPolicySpends)
	}
	type pair struct {
		action int
		budget string
	}
	spent := map[pair]bool{}
	for i, s := range a.Spends {
		at := fmt.Sprintf("spends[%d]", i)
		if err := toIssue(p, from, s.Action); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		a := &p.Actions[s.Action]
		u, inPlace := hostplan.InPlaceAt(p, s.Action, podRevision)
		switch {
		case !inPlace && (a.Verb != abi.VerbDelete || a.Kind != abi.KindPod):
			return nil, fmt.Errorf("%s: action %d is neither a pod delete nor an in-place update: only those spend a disruption", at, s.Action)
		case inPlace && u.First() != s.Action:
			return nil, fmt.Errorf("%s: action %d is the update of pod %s's in-place update, whose resize (action %d) comes first: an in-place update spends by its first action", at, s.Action, u.Pod, u.First())
		case seen[s.Action]:
			return nil, fmt.Errorf("%s: action %d is held by the same answer: a held delete spends nothing", at, s.Action)
		case inPlace && seen[u.Update]:
			return nil, fmt.Errorf("%s: pod %s's in-place update is held by the same answer (its update, action %d): a held in-place update spends nothing", at, u.Pod, u.Update)
		case s.PodDisruptionBudget == "":
			return nil, fmt.Errorf("%s: podDisruptionBudget is empty", at)
		case spent[pair{s.Action, s.PodDisruptionBudget}]:
			return nil, fmt.Errorf("%s: action %d spends PodDisruptionBudget %q twice", at, s.Action, cut(s.PodDisruptionBudget, 64))
		}
		spent[pair{s.Action, s.PodDisruptionBudget}] = true
	}
	return a, nil
}

// toIssue: action i of p is a write the answer may name — from from on, not planned to fail already.
func toIssue(p *abi.Plan, from, i int) error {
	switch {
	case i < from || i >= len(p.Actions):
		return fmt.Errorf("action %d is not a write still to issue (%d to %d)", i, from, len(p.Actions)-1)
	case p.Actions[i].Error != "":
		return fmt.Errorf("action %d is planned to fail already", i)
	}
	return nil
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// RetryAfter is when the set should be synced again for its holds: the soonest a hold asked for, at least
// MinRetryAfter (a policy cannot make a host sync a set back to back); 0 when none asked.
func RetryAfter(held []hostplan.HeldWrite) time.Duration {
	var d time.Duration
	for _, h := range held {
		if h.RetryAfter > 0 && (d == 0 || h.RetryAfter < d) {
			d = h.RetryAfter
		}
	}
	if d > 0 && d < MinRetryAfter {
		d = MinRetryAfter
	}
	return d
}

// MinRetryAfter is the soonest a hold brings a set's next sync.
const MinRetryAfter = time.Second

// Events are the host's events about a set's policies after a sync at now, as every host records them: each
// policy that failed (it held nothing back), and each write a policy held before and holds no longer (mem
// records this sync's holds). The holds themselves are reported by the module's events for the refused
// writes (Failed<Verb>, carrying the policy's message).
// unmade is what the sync left unmade (UnmadeOf): a write in it is not released.
func Events(now time.Time, mem *Memory, held []hostplan.HeldWrite, failures []Failure, unmade Unmade) []abi.Event {
	var out []abi.Event
	for _, f := range failures {
		out = append(out, abi.Event{Type: abi.EventWarning, Reason: EventFailed, Message: f.Error() + "; it held nothing back"})
	}
	for _, r := range mem.Record(now, held, unmade) {
		out = append(out, abi.Event{Type: abi.EventNormal, Reason: EventReleased, Message: r.String()})
	}
	return out
}

// Names reads the value of abi.AnnotationPolicies: names separated by commas, each once.
func Names(value string) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	for _, n := range strings.Split(value, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			if strings.TrimSpace(value) == "" {
				continue // an empty annotation names none
			}
			return nil, fmt.Errorf("%s %q has an empty name: names are separated by single commas", abi.AnnotationPolicies, value)
		}
		if seen[n] {
			return nil, fmt.Errorf("%s names the policy %q twice", abi.AnnotationPolicies, n)
		}
		seen[n] = true
		names = append(names, n)
	}
	return names, nil
}

// Resolve is the policies a set names (the value of abi.AnnotationPolicies), in its order, each from get;
// an error says why the set cannot be synced with them (a name twice, unknown, or refused at load).
func Resolve(ctx context.Context, value string, get func(ctx context.Context, name string) (Module, error)) ([]Module, error) {
	names, err := Names(value)
	if err != nil {
		return nil, err
	}
	var out []Module
	for _, name := range names {
		if get == nil {
			return nil, fmt.Errorf("%s names the policy %q, and this host runs no policies", abi.AnnotationPolicies, name)
		}
		p, err := get(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("%s names the policy %q: %w", abi.AnnotationPolicies, name, err)
		}
		out = append(out, p)
	}
	return out, nil
}
