package plan

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ordinal-dev/ordinal/abi"
)

// outcomeOf is what became of action a, the API server having answered err.
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
