package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
)

// Writer is an API server as the applier sees it: client-go REST for the controller, the in-memory API
// server for replay, preview and the webhook. Errors are the API server's (apierrors.APIStatus), so one
// set of rules can read them.
type Writer interface {
	// Write issues one action. precondition, when not empty, is the uid a delete must find (the object
	// the plan was made from). It returns the resourceVersion of the object the API server answered with
	// ("" when its answer carries none).
	Write(ctx context.Context, a *abi.Action, precondition types.UID) (resourceVersion string, err error)
	// CanAdopt is upstream's canAdopt (RecheckDeletionTimestamp over an uncached read of the set): nil
	// when the set the plan was made for still exists with its uid and is not being deleted.
	CanAdopt(ctx context.Context) error
}

// Outcome is what became of one action.
type Outcome int

const (
	Succeeded       Outcome = iota // written
	FailedAsPlanned                // rejected as the plan predicted (its action's error): upstream goes on
	Ignored                        // rejected in a way upstream ignores (see ignorable)
	Failed                         // rejected unexpectedly: the sync stops here, as upstream's does
	Held                           // not issued: a policy held it back (Options.Judge), refused as by the API server
)

// Result is one issued action and what the API server answered (Err is its raw answer).
type Result struct {
	Index   int
	Action  *abi.Action
	Err     error
	Outcome Outcome
	// Events are the plan's events to record now that this write was answered (Events.After).
	Events []abi.Event
	// Reported: the refusal went back to the module (Options.Replan), whose new plan carries it.
	Reported bool
	// Hold is the policy's hold of a write not issued (Outcome Held, or Failed without replans).
	Hold *Hold
}

// WriteError is the write that stopped a plan.
type WriteError struct {
	Index  int
	Action abi.Action
	Err    error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("%s %s %s/%s (action %d): %v", e.Action.Verb, e.Action.Kind, e.Action.Namespace, e.Action.Name, e.Index, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// ErrAdoptionRefused wraps a failed CanAdopt: no adoption patch was sent.
var ErrAdoptionRefused = errors.New("adoption refused")

// Replan asks the module again for the same snapshot with the writes refused so far (the snapshot's
// writeFailures, abi/README.md "Writes that failed") and returns its decoded plan.
type Replan func(ctx context.Context, failures []abi.WriteFailure) (*abi.Plan, error)

// Options are what Apply is told besides the plan.
type Options struct {
	// Replan, when set (a module whose describe says writeFailures), is asked for the rest of the sync after
	// a write the API server refused where the plan did not predict it: upstream's sync goes on after such a
	// refusal (the status is written anyway, a Conflict retried, a burst batch finished). Nil: the plan stops
	// at that write.
	Replan Replan
	// Set is the set's name, for the Failed<Verb> event of a refusal a module without Replan cannot report.
	Set string
	// Each is told of every issued write (may be nil).
	Each func(Result)
	// Judge, when set, says which writes of a plan from index from on the set's policies hold back
	// (host/policy). It is asked before the first write and again after every replan. A held write is not
	// issued: it is refused as an API server refuses a write an admission webhook denies (Forbidden, the
	// hold's message), so the module plans the rest of the sync as upstream carries on after that refusal.
	Judge func(ctx context.Context, p *abi.Plan, from int) map[int]Hold
	// Admit, when set, is asked right before action i of p is sent (a write not held, not planned to fail,
	// not the status write), after every other check: a non-nil Hold holds it as Judge's would. The set's
	// policies commit there what the write spends of a PodDisruptionBudget (host/policy's Run.Admit).
	Admit func(ctx context.Context, p *abi.Plan, i int) *Hold
	// Status, when set, records the sync's held writes in the set's status (host/policy's HoldStatus): it is
	// given the plan's status write right before it is sent, and returns the write to send instead (nil:
	// as planned); and once a plan that wrote no status has run to its end, it is given nil and returns a
	// status write to append (nil: none), which is issued and reported as the plan's last action.
	Status func(a *abi.Action, held []HeldWrite) *abi.Action
}

// Hold is a write a policy holds back (abi/POLICY.md).
type Hold struct {
	Policy, Reason, Message string
	RetryAfter              time.Duration // 0: none asked
}

// HeldWrite is a write a policy held in one sync: what it writes, and the hold.
type HeldWrite struct {
	Verb, Kind, Name string
	Hold
}

// heldError is the refusal a held write gets: what kube-apiserver answers when an admission webhook
// denies a write (403 Forbidden, the denial in the message).
func heldError(a *abi.Action, h Hold) error {
	res := map[string]string{abi.KindPod: "pods", abi.KindPersistentVolumeClaim: "persistentvolumeclaims",
		abi.KindControllerRevision: "controllerrevisions", abi.KindStatefulSet: "statefulsets"}[a.Kind]
	group := ""
	if a.Kind == abi.KindControllerRevision || a.Kind == abi.KindStatefulSet {
		group = "apps"
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: group, Resource: res}, a.Name,
		fmt.Errorf("policy %s holds this write: %s", h.Policy, h.Message))
}

// Applied is what Apply carried out.
type Applied struct {
	Plan    *abi.Plan // the plan carried out: the module's last answer (the plan given, unless it replanned)
	Issued  int       // how many of Plan's actions were issued
	Replans int       // how many times the module was asked again
	// AtEnd are the events to record after the whole plan (those that report no write), when it ran to its end.
	AtEnd []abi.Event
	// Held are the writes policies held back, in plan order.
	Held []HeldWrite
}

// Apply carries out a decoded plan: the one applier of the controller and the replay. First the action
// firewall checks every action against scope (what the module was shown); one action out of bounds
// refuses the whole plan and nothing is written (a *firewall.RefusedError). Then the actions are issued
// in order, each reported to opts.Each, until one fails unexpectedly:
//   - an action carrying an error (the module predicted the rejection from the snapshot, e.g.
//     AlreadyExists) is issued, and its rejection is expected; if it succeeds, the snapshot was stale
//     and the plan stops, except for a pod delete (upstream takes its NotFound as success);
//   - a refusal the plan did not predict goes back to the module (opts.Replan): its new plan, checked to be
//     the same sync up to that write and held to the firewall, is carried on from the next write; without
//     Replan, a patch rejected as upstream's ControllerRefManager ignores is ignored (ignorable), and any
//     other refusal stops the plan;
//   - a delete carries a uid precondition: only the object the plan was made from is deleted (a
//     departure from upstream, abi/README.md "Deletes carry no preconditions");
//   - CanAdopt runs once, before the plan's first adoption patch or claim update that makes the set an
//     owner of the claim (AddsSetOwner), so neither reaches a set being deleted.
//
// It returns what was carried out and the *WriteError that stopped the plan.
func Apply(ctx context.Context, scope *firewall.Scope, p *abi.Plan, w Writer, opts Options) (Applied, error) {
	if err := firewall.Check(scope, p); err != nil {
		return Applied{Plan: p}, err
	}
	res := Applied{Plan: p}
	events := NewEvents(p, opts.Set)
	var failures []abi.WriteFailure
	var holds map[int]Hold
	if opts.Judge != nil {
		holds = opts.Judge(ctx, p, 0)
	}
	rechecked, statusWritten := false, false
	own := ownWrites{}
	// rewritten: the status writes Status replaced, by index: the module's and the one sent. A replan is
	// checked against the plan as the module made it (its new plan repeats its own writes, not the host's).
	rewritten := map[int][2]abi.Action{}
	for i := 0; i < len(res.Plan.Actions); i++ {
		a := &res.Plan.Actions[i]
		hold, held := holds[i]
		if held && a.Error == "" && a.Verb != abi.VerbUpdateStatus {
			res.Held = append(res.Held, HeldWrite{Verb: a.Verb, Kind: a.Kind, Name: a.Name, Hold: hold})
		} else {
			held = false
		}
		if !held && !rechecked && (a.Verb == abi.VerbPatch && IsAdoption(a.Patch) || AddsSetOwner(scope, a)) {
			rechecked = true
			if err := w.CanAdopt(ctx); err != nil {
				res.Issued = i
				return res, &WriteError{Index: i, Action: *a, Err: fmt.Errorf("%w: %v", ErrAdoptionRefused, err)}
			}
		}
		if !held && opts.Admit != nil && a.Error == "" && a.Verb != abi.VerbUpdateStatus {
			if h := opts.Admit(ctx, res.Plan, i); h != nil {
				hold, held = *h, true
				res.Held = append(res.Held, HeldWrite{Verb: a.Verb, Kind: a.Kind, Name: a.Name, Hold: hold})
			}
		}
		if !held && a.Verb == abi.VerbUpdateStatus && opts.Status != nil {
			statusWritten = true
			if with := opts.Status(a, res.Held); with != nil {
				if res.Plan == p { // the module's answer stays as it was: the plan carried out is a copy
					carried := *p
					carried.Actions = slices.Clone(p.Actions)
					res.Plan, a = &carried, &carried.Actions[i]
				}
				rewritten[i] = [2]abi.Action{*a, *with}
				*a = *with
			}
		}
		var err error
		if held {
			err = heldError(a, hold)
		} else {
			err = own.write(ctx, w, a, preconditionOf(scope, a))
		}
		outcome, replansBefore := outcomeOf(a, err), res.Replans
		if opts.Replan != nil && err != nil && a.Error == "" && ctx.Err() == nil {
			next, rerr := replanAfter(ctx, opts.Replan, scope, asPlanned(res.Plan, rewritten), i, err, &failures)
			if rerr != nil {
				err, outcome = fmt.Errorf("%w (asking the module for the rest of the sync: %w)", err, rerr), Failed
			} else {
				delete(rewritten, i) // refused: the module's write with the API server's answer
				for k, rw := range rewritten {
					next.Actions[k] = rw[1] // sent as the host rewrote it
				}
				res.Plan, res.Replans, events = next, res.Replans+1, NewEvents(next, opts.Set)
				a, outcome = &res.Plan.Actions[i], FailedAsPlanned
				if opts.Judge != nil {
					holds = opts.Judge(ctx, next, i+1)
				}
			}
		}
		if held && outcome != Failed {
			outcome = Held
		}
		r := Result{Index: i, Action: a, Err: err, Outcome: outcome, Reported: res.Replans > replansBefore}
		if held {
			r.Hold = &hold
		}
		r.Events = events.After(r)
		if opts.Each != nil {
			opts.Each(r)
		}
		if r.Outcome == Failed {
			if err == nil {
				err = fmt.Errorf("the plan expected this write to fail (%s) but it succeeded: the snapshot was stale", a.Error)
			}
			stop := &WriteError{Index: i, Action: *a, Err: err}
			res.Issued = i + 1
			if r.Hold != nil && !statusWritten { // stopped at a hold (a module without replans): still say so
				carried := *res.Plan // the plan carried out ends there (a copy: the module's answer stays as it was)
				carried.Actions = slices.Clone(res.Plan.Actions[:i+1])
				res.Plan = &carried
				if werr := hostStatus(ctx, w, opts, &res); werr != nil {
					return res, werr
				}
			}
			return res, stop
		}
	}
	res.Issued = len(res.Plan.Actions)
	res.AtEnd = events.AtEnd(nil)
	if statusWritten {
		return res, nil
	}
	return res, hostStatus(ctx, w, opts, &res)
}

// hostStatus issues the host's own status write (opts.Status given nil: the sync's holds recorded in the set's
// status) after a plan that wrote none, when there is one to make: the plan carried out then ends with it.
func hostStatus(ctx context.Context, w Writer, opts Options, res *Applied) error {
	if opts.Status == nil {
		return nil
	}
	a := opts.Status(nil, res.Held)
	if a == nil {
		return nil
	}
	carried := *res.Plan // with the host's write (a copy: the module's answer stays as it was)
	carried.Actions = append(slices.Clone(res.Plan.Actions), *a)
	res.Plan = &carried
	i := len(res.Plan.Actions) - 1
	a = &res.Plan.Actions[i]
	_, err := w.Write(ctx, a, "")
	r := Result{Index: i, Action: a, Err: err, Outcome: outcomeOf(a, err)}
	if opts.Each != nil {
		opts.Each(r)
	}
	res.Issued = len(res.Plan.Actions)
	if r.Outcome == Failed {
		return &WriteError{Index: i, Action: *a, Err: err}
	}
	return nil
}

// MaxReplans is how many refusals of one sync go back to the module (the ABI allows 64): the module places
// each by planning again from the start, and TinyGo's leaking GC keeps every pass, so a Parallel burst of
// thousands of refused creates must not ask for dozens (a 1000-replica set ran a module out of memory at
// 51). After that many the sync stops at the refusal, as without replans, and the next one plans again.
const MaxReplans = 8

// maxFailureMessage bounds the API server's message a write failure carries (kube-apiserver's are short).
const maxFailureMessage = 4096

// replanAfter reports the refusal of action i of cur to the module and checks its answer: the same sync
// (the actions already issued unchanged, action i carrying the refusal), a plan the firewall allows.
func replanAfter(ctx context.Context, replan Replan, scope *firewall.Scope, cur *abi.Plan, i int, refusal error, failures *[]abi.WriteFailure) (*abi.Plan, error) {
	if len(*failures) >= MaxReplans {
		return nil, fmt.Errorf("more than %d writes of one sync refused: the next sync plans again", MaxReplans)
	}
	f := abi.WriteFailure{Action: i, Reason: string(apierrors.ReasonForError(refusal)), Message: refusal.Error()}
	var st apierrors.APIStatus
	if errors.As(refusal, &st) && st.Status().Message != "" {
		f.Message = st.Status().Message // what client-go's StatusError prints, whatever wraps it here
	}
	if f.Message == "" {
		f.Message = "unknown error"
	}
	if len(f.Message) > maxFailureMessage {
		f.Message = f.Message[:maxFailureMessage] + "..." // it comes back in events and the sync's error
	}
	*failures = append(*failures, f)
	next, err := replan(ctx, *failures)
	if err != nil {
		return nil, err
	}
	if next.Error != nil && next.Error.Code != abi.CodeSyncFailed {
		return nil, fmt.Errorf("the module refused the write failures: %w", next.Error)
	}
	if len(next.Actions) <= i {
		return nil, fmt.Errorf("its plan has %d actions, not the %d already issued", len(next.Actions), i+1)
	}
	for k := 0; k < i; k++ {
		if !sameAction(&cur.Actions[k], &next.Actions[k]) {
			return nil, fmt.Errorf("its plan's action %d is not the one issued", k)
		}
	}
	want := cur.Actions[i]
	want.Error = f.Message
	if !sameAction(&want, &next.Actions[i]) {
		return nil, fmt.Errorf("its plan's action %d is not the refused write with the API server's answer", i)
	}
	if err := firewall.Check(scope, next); err != nil {
		return nil, err
	}
	return next, nil
}

// asPlanned is p with the status writes Status rewrote as the module planned them.
func asPlanned(p *abi.Plan, rewritten map[int][2]abi.Action) *abi.Plan {
	if len(rewritten) == 0 {
		return p
	}
	out := *p
	out.Actions = slices.Clone(p.Actions)
	for k, rw := range rewritten {
		out.Actions[k] = rw[0]
	}
	return &out
}

func sameAction(a, b *abi.Action) bool {
	return a.Verb == b.Verb && a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name &&
		a.PatchType == b.PatchType && a.Error == b.Error && bytes.Equal(a.Object, b.Object) && bytes.Equal(a.Patch, b.Patch)
}

func outcomeOf(a *abi.Action, err error) Outcome {
	switch {
	case a.Error != "" && err != nil:
		return FailedAsPlanned
	case a.Error != "" && a.Verb == abi.VerbDelete && a.Kind == abi.KindPod:
		// DeleteStatefulPod takes NotFound (all a plan predicts for a pod delete) and success alike: a pod
		// deleted twice in one sync is still there, terminating, on a real API server, and upstream's sync
		// goes on the same either way
		return Succeeded
	case a.Error != "":
		return Failed // predicted a rejection that did not come
	case err == nil:
		return Succeeded
	case ignorable(a, err):
		return Ignored
	}
	return Failed
}

// ignorable: upstream's ControllerRefManager ignores a pod or revision that vanished before it could be
// adopted or released (NotFound), and a release whose uid precondition no longer holds (Invalid).
func ignorable(a *abi.Action, err error) bool {
	if a.Verb != abi.VerbPatch {
		return false
	}
	if apierrors.IsNotFound(err) {
		return true
	}
	return apierrors.IsInvalid(err) && !IsAdoption(a.Patch)
}

// preconditionOf is the uid a delete must find: the object's as the snapshot showed it.
func preconditionOf(s *firewall.Scope, a *abi.Action) types.UID {
	if a.Verb != abi.VerbDelete {
		return ""
	}
	if o := s.Object(a.Kind, a.Name); o != nil {
		return o.UID
	}
	return ""
}

// AddsSetOwner reports whether an action updates a claim of the snapshot to name the set as an owner it
// did not name there (the retention policy's reference). Like an adoption, such a write must not reach a
// set being deleted: once the garbage collector has orphaned the set's dependents, a claim it owns again is
// deleted with it. A set cache that lags a claim cache plans exactly that while the set is orphan-deleted
// (kubectl ordinal migrate), so the applier re-checks the set first, where upstream does not.
func AddsSetOwner(scope *firewall.Scope, a *abi.Action) bool {
	if scope == nil || a.Verb != abi.VerbUpdate || a.Kind != abi.KindPersistentVolumeClaim {
		return false
	}
	var obj struct {
		Metadata struct {
			OwnerReferences []struct {
				UID types.UID `json:"uid"`
			} `json:"ownerReferences"`
		} `json:"metadata"`
	}
	if json.Unmarshal(a.Object, &obj) != nil {
		return false
	}
	before := scope.Object(a.Kind, a.Name)
	for _, r := range obj.Metadata.OwnerReferences {
		if r.UID != scope.UID {
			continue
		}
		if before == nil {
			return true
		}
		for _, o := range before.OwnerReferences {
			if o.UID == r.UID {
				return false
			}
		}
		return true
	}
	return false
}

// IsAdoption reports whether a patch adds a controller ownerReference (adoption), as opposed to
// removing one (release, "$patch":"delete").
func IsAdoption(patch json.RawMessage) bool {
	var p struct {
		Metadata struct {
			OwnerReferences []map[string]any `json:"ownerReferences"`
		} `json:"metadata"`
	}
	if json.Unmarshal(patch, &p) != nil {
		return false
	}
	for _, ref := range p.Metadata.OwnerReferences {
		if _, del := ref["$patch"]; del {
			continue
		}
		if c, _ := ref["controller"].(bool); c {
			return true
		}
	}
	return false
}
