package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
)

// Writer is an API server as the applier sees it: client-go REST for the controller, the in-memory API
// server for replay, preview and the webhook. Errors are the API server's (apierrors.APIStatus), so one
// set of rules can read them.
type Writer interface {
	// Write issues one action. precondition, when not empty, is the uid a delete must find (the object
	// the plan was made from).
	Write(ctx context.Context, a *abi.Action, precondition types.UID) error
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
)

// Result is one issued action and what the API server answered (Err is its raw answer).
type Result struct {
	Index   int
	Action  *abi.Action
	Err     error
	Outcome Outcome
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

// Apply carries out a decoded plan: the one applier of the controller and the replay. First the action
// firewall checks every action against scope (what the module was shown); one action out of bounds
// refuses the whole plan and nothing is written (a *firewall.RefusedError). Then the actions are issued
// in order, each reported to each (may be nil), until one fails unexpectedly:
//   - an action carrying an error (the module predicted the rejection from the snapshot, e.g.
//     AlreadyExists) is issued, and its rejection is expected; if it succeeds, the snapshot was stale
//     and the plan stops;
//   - a patch rejected as upstream's ControllerRefManager ignores is ignored (ignorable);
//   - a delete carries a uid precondition: only the object the plan was made from is deleted (a
//     departure from upstream, abi/README.md "Deletes carry no preconditions");
//   - CanAdopt runs once, before the plan's first adoption patch or claim update that makes the set an
//     owner of the claim (AddsSetOwner), so neither reaches a set being deleted.
//
// It returns how many actions were issued and the *WriteError that stopped the plan.
func Apply(ctx context.Context, scope *firewall.Scope, p *abi.Plan, w Writer, each func(Result)) (int, error) {
	if err := firewall.Check(scope, p); err != nil {
		return 0, err
	}
	rechecked := false
	for i := range p.Actions {
		a := &p.Actions[i]
		if !rechecked && (a.Verb == abi.VerbPatch && IsAdoption(a.Patch) || AddsSetOwner(scope, a)) {
			rechecked = true
			if err := w.CanAdopt(ctx); err != nil {
				return i, &WriteError{Index: i, Action: *a, Err: fmt.Errorf("%w: %v", ErrAdoptionRefused, err)}
			}
		}
		err := w.Write(ctx, a, preconditionOf(scope, a))
		r := Result{Index: i, Action: a, Err: err, Outcome: outcomeOf(a, err)}
		if each != nil {
			each(r)
		}
		if r.Outcome == Failed {
			if err == nil {
				err = fmt.Errorf("the plan expected this write to fail (%s) but it succeeded: the snapshot was stale", a.Error)
			}
			return i + 1, &WriteError{Index: i, Action: *a, Err: err}
		}
	}
	return len(p.Actions), nil
}

func outcomeOf(a *abi.Action, err error) Outcome {
	switch {
	case a.Error != "" && err != nil:
		return FailedAsPlanned
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
