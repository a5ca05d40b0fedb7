package kube

import (
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
)

// The hosts read extension progress-deadline's annotations as the module does: an empty
// on-progress-deadline (a Helm value left unset) is no annotation, so the deadline is only reported, and
// the reason says that rather than calling "" neither Rollback nor Pause.
func TestProgressDeadlineEmptyPolicyIsNone(t *testing.T) {
	for _, c := range []struct {
		ann    map[string]string
		secs   int64
		policy string
		why    string
	}{
		{map[string]string{abi.AnnotationProgressDeadlineSeconds: "600", abi.AnnotationOnProgressDeadline: "Rollback"}, 600, "Rollback", ""},
		{map[string]string{abi.AnnotationProgressDeadlineSeconds: "600", abi.AnnotationOnProgressDeadline: ""}, 0, "",
			abi.AnnotationProgressDeadlineSeconds + " 600 without " + abi.AnnotationOnProgressDeadline + " (Rollback or Pause): the deadline is only reported"},
		{map[string]string{abi.AnnotationOnProgressDeadline: ""}, 0, "", ""},
		{map[string]string{abi.AnnotationProgressDeadlineSeconds: "600", abi.AnnotationOnProgressDeadline: "rollback"}, 0, "",
			abi.AnnotationOnProgressDeadline + ` "rollback" is neither Rollback nor Pause`},
	} {
		secs, policy, why := ProgressDeadline(c.ann)
		if secs != c.secs || policy != c.policy || why != c.why {
			t.Errorf("%v: %d %q %q, want %d %q %q", c.ann, secs, policy, why, c.secs, c.policy, c.why)
		}
	}
}
