package plan

import (
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
	ap := &applier{scope: scope, w: w, opts: opts, given: p, res: Applied{Plan: p}, events: NewEvents(p, opts.Set),
		own: ownWrites{}, rewritten: map[int][2]abi.Action{}}
	if opts.Judge != nil {
		ap.holds = opts.Judge(ctx, p, 0)
	}
	for i := 0; i < len(ap.res.Plan.Actions); i++ {
		if err := ap.step(ctx, i); err != nil {
			return ap.res, err
		}
	}
	ap.res.Issued = len(ap.res.Plan.Actions)
	ap.res.AtEnd = ap.events.AtEnd(nil)
	if ap.statusWritten {
		return ap.res, nil
	}
	return ap.res, hostStatus(ctx, w, opts, &ap.res)
}

// applier is one Apply under way: the plan carried out so far and what its writes have settled.
type applier struct {
	scope *firewall.Scope
	w     Writer
	opts  Options
	given *abi.Plan // the module's answer, which stays as it was: what is carried out otherwise is a copy
	res   Applied

	events   *Events
	failures []abi.WriteFailure // the refusals reported to the module so far
	holds    map[int]Hold       // opts.Judge's holds of the current plan, by index
	own      ownWrites
	// rechecked: CanAdopt ran (once per plan); statusWritten: the plan's status write was sent
	rechecked, statusWritten bool
	// rewritten: the status writes Status replaced, by index: the module's and the one sent. A replan is
	// checked against the plan as the module made it (its new plan repeats its own writes, not the host's).
	rewritten map[int][2]abi.Action
}

// step carries out action i: held or sent, the module asked again after a refusal it did not predict, the
// result reported. The error is the one that stops the plan.
func (ap *applier) step(ctx context.Context, i int) error {
	a := &ap.res.Plan.Actions[i]
	hold, held := ap.judged(i, a)
	if !held {
		if err := ap.recheckAdoption(ctx, i, a); err != nil {
			return err
		}
		hold, held = ap.admitted(ctx, i, a)
	}
	if !held {
		a = ap.rewriteStatus(i, a)
	}
	var err error
	if held {
		err = heldError(a, hold)
	} else {
		err = ap.own.write(ctx, ap.w, a, preconditionOf(ap.scope, a))
	}
	outcome, replansBefore := outcomeOf(a, err), ap.res.Replans
	if ap.opts.Replan != nil && err != nil && a.Error == "" && ctx.Err() == nil {
		if rerr := ap.replan(ctx, i, err); rerr != nil {
			err, outcome = fmt.Errorf("%w (asking the module for the rest of the sync: %w)", err, rerr), Failed
		} else {
			a, outcome = &ap.res.Plan.Actions[i], FailedAsPlanned
		}
	}
	if held && outcome != Failed {
		outcome = Held
	}
	r := Result{Index: i, Action: a, Err: err, Outcome: outcome, Reported: ap.res.Replans > replansBefore}
	if held {
		r.Hold = &hold
	}
	r.Events = ap.events.After(r)
	if ap.opts.Each != nil {
		ap.opts.Each(r)
	}
	if r.Outcome == Failed {
		return ap.stop(ctx, i, r)
	}
	return nil
}

// judged: the policies' hold of action i (opts.Judge), which never holds a write the module expects to fail
// or the status write.
func (ap *applier) judged(i int, a *abi.Action) (Hold, bool) {
	hold, held := ap.holds[i]
	if !held || a.Error != "" || a.Verb == abi.VerbUpdateStatus {
		return Hold{}, false
	}
	ap.res.Held = append(ap.res.Held, HeldWrite{Verb: a.Verb, Kind: a.Kind, Name: a.Name, Hold: hold})
	return hold, true
}

// recheckAdoption runs CanAdopt before the plan's first adoption patch or claim update that makes the set an
// owner of the claim, so neither reaches a set being deleted.
func (ap *applier) recheckAdoption(ctx context.Context, i int, a *abi.Action) error {
	if ap.rechecked || !(a.Verb == abi.VerbPatch && IsAdoption(a.Patch) || AddsSetOwner(ap.scope, a)) {
		return nil
	}
	ap.rechecked = true
	if err := ap.w.CanAdopt(ctx); err != nil {
		ap.res.Issued = i
		return &WriteError{Index: i, Action: *a, Err: fmt.Errorf("%w: %v", ErrAdoptionRefused, err)}
	}
	return nil
}

// admitted: opts.Admit's hold of action i, asked right before it is sent (never of a write the module
// expects to fail, or of the status write).
func (ap *applier) admitted(ctx context.Context, i int, a *abi.Action) (Hold, bool) {
	if ap.opts.Admit == nil || a.Error != "" || a.Verb == abi.VerbUpdateStatus {
		return Hold{}, false
	}
	h := ap.opts.Admit(ctx, ap.res.Plan, i)
	if h == nil {
		return Hold{}, false
	}
	ap.res.Held = append(ap.res.Held, HeldWrite{Verb: a.Verb, Kind: a.Kind, Name: a.Name, Hold: *h})
	return *h, true
}

// rewriteStatus gives the plan's status write to opts.Status, which may record the sync's holds in it, and
// returns the action to send.
func (ap *applier) rewriteStatus(i int, a *abi.Action) *abi.Action {
	if a.Verb != abi.VerbUpdateStatus || ap.opts.Status == nil {
		return a
	}
	ap.statusWritten = true
	with := ap.opts.Status(a, ap.res.Held)
	if with == nil {
		return a
	}
	if ap.res.Plan == ap.given {
		carried := *ap.res.Plan
		carried.Actions = slices.Clone(ap.res.Plan.Actions)
		ap.res.Plan, a = &carried, &carried.Actions[i]
	}
	ap.rewritten[i] = [2]abi.Action{*a, *with}
	*a = *with
	return a
}

// replan reports the refusal of action i to the module (opts.Replan) and carries on with its new plan: the
// same sync up to that write, the status writes the host rewrote sent as rewritten, the policies asked again.
func (ap *applier) replan(ctx context.Context, i int, refusal error) error {
	next, err := replanAfter(ctx, ap.opts.Replan, ap.scope, asPlanned(ap.res.Plan, ap.rewritten), i, refusal, &ap.failures)
	if err != nil {
		return err
	}
	delete(ap.rewritten, i) // refused: the module's write with the API server's answer
	for k, rw := range ap.rewritten {
		next.Actions[k] = rw[1] // sent as the host rewrote it
	}
	ap.res.Plan, ap.res.Replans, ap.events = next, ap.res.Replans+1, NewEvents(next, ap.opts.Set)
	if ap.opts.Judge != nil {
		ap.holds = ap.opts.Judge(ctx, next, i+1)
	}
	return nil
}

// stop ends the plan at the write of r, which failed: after a hold (a module without replans) that wrote no
// status, the host's status write still records the holds.
func (ap *applier) stop(ctx context.Context, i int, r Result) error {
	err := r.Err
	if err == nil {
		err = fmt.Errorf("the plan expected this write to fail (%s) but it succeeded: the snapshot was stale", r.Action.Error)
	}
	stop := &WriteError{Index: i, Action: *r.Action, Err: err}
	ap.res.Issued = i + 1
	if r.Hold != nil && !ap.statusWritten {
		carried := *ap.res.Plan // the plan carried out ends there (a copy: the module's answer stays as it was)
		carried.Actions = slices.Clone(ap.res.Plan.Actions[:i+1])
		ap.res.Plan = &carried
		if werr := hostStatus(ctx, ap.w, ap.opts, &ap.res); werr != nil {
			return werr
		}
	}
	return stop
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
