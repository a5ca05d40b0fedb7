package kube

import (
	"fmt"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/internal/deadline"
)

// MaxProgressDeadlineSeconds is the longest progress deadline the extended module takes.
const MaxProgressDeadlineSeconds = deadline.MaxSeconds

// ProgressDeadline reads extension progress-deadline's annotations as the module does: the deadline and
// what passing it does (Rollback or Pause) when both are set and valid; none when neither is set; else why
// they do not count. The hosts' one reading: the firewall's rollback rule and the previews' recovery.
func ProgressDeadline(ann map[string]string) (seconds int64, policy, why string) {
	secs, hasSecs := ann[abi.AnnotationProgressDeadlineSeconds]
	policy, hasPolicy := abi.EnumAnnotation(ann, abi.AnnotationOnProgressDeadline)
	if !hasSecs && !hasPolicy {
		return 0, "", ""
	}
	n, ok := deadline.Seconds(secs) // the module's reading (guest progress_deadline.go)
	switch {
	case !hasSecs:
		return 0, "", fmt.Sprintf("%s %q without %s: no deadline", abi.AnnotationOnProgressDeadline, policy, abi.AnnotationProgressDeadlineSeconds)
	case !ok:
		return 0, "", fmt.Sprintf("%s %q is not a positive whole number of seconds", abi.AnnotationProgressDeadlineSeconds, secs)
	case !hasPolicy:
		return 0, "", fmt.Sprintf("%s %s without %s (Rollback or Pause): the deadline is only reported", abi.AnnotationProgressDeadlineSeconds, secs, abi.AnnotationOnProgressDeadline)
	case policy != "Rollback" && policy != "Pause":
		return 0, "", fmt.Sprintf("%s %q is neither Rollback nor Pause", abi.AnnotationOnProgressDeadline, policy)
	}
	return n, policy, ""
}
