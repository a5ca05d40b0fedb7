package kube

import (
	"fmt"
	"strconv"

	"github.com/ordinal-dev/ordinal/abi"
)

// MaxProgressDeadlineSeconds is the longest progress deadline the extended module takes (guest
// progress_deadline.go's maxProgressDeadlineSeconds).
const MaxProgressDeadlineSeconds = 1 << 30

// ProgressDeadline reads extension progress-deadline's annotations as the module does: the deadline and
// what passing it does (Rollback or Pause) when both are set and valid; none when neither is set; else why
// they do not count. The hosts' one reading: the firewall's rollback rule and the previews' recovery.
func ProgressDeadline(ann map[string]string) (seconds int64, policy, why string) {
	secs, hasSecs := ann[abi.AnnotationProgressDeadlineSeconds]
	policy, hasPolicy := ann[abi.AnnotationOnProgressDeadline]
	if !hasSecs && !hasPolicy {
		return 0, "", ""
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	switch {
	case !hasSecs:
		return 0, "", fmt.Sprintf("%s %q without %s: no deadline", abi.AnnotationOnProgressDeadline, policy, abi.AnnotationProgressDeadlineSeconds)
	case err != nil || n <= 0 || n > MaxProgressDeadlineSeconds:
		return 0, "", fmt.Sprintf("%s %q is not a positive whole number of seconds", abi.AnnotationProgressDeadlineSeconds, secs)
	case !hasPolicy:
		return 0, "", fmt.Sprintf("%s %s without %s (Rollback or Pause): the deadline is only reported", abi.AnnotationProgressDeadlineSeconds, secs, abi.AnnotationOnProgressDeadline)
	case policy != "Rollback" && policy != "Pause":
		return 0, "", fmt.Sprintf("%s %q is neither Rollback nor Pause", abi.AnnotationOnProgressDeadline, policy)
	}
	return n, policy, ""
}
