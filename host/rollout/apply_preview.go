package rollout

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/host/kube"
)

// The webhook's record of the edits it previewed (docs/webhook.md): an Event of reason PreviewEventReason on
// the set for each edit it let through, annotated with the generation the edit gave the set. A status that
// finds the set past the generation of its last such Event knows the API server stored an edit the webhook
// never previewed: the webhook was down or failed open (failurePolicy Ignore says nothing to the user), or
// the API server did not call it.
const (
	PreviewEventReason            = "RolloutPreview"
	AnnotationPreviewedGeneration = "ordinal.dev/previewed-generation"
)

// PreviewEventMessage is the message of the Event recording the preview of the edit that gave the set
// generation gen: the generation first, so that a later edit back to the same template (the same summary)
// is an Event of its own and not a repeat the recorder folds into the earlier one, keeping its annotation.
func PreviewEventMessage(gen int64, summary string) string {
	return fmt.Sprintf("generation %d: %s", gen, summary)
}

// ApplyPreview is the last preview the webhook recorded of a set's edits.
type ApplyPreview struct {
	Generation int64  `json:"generation"`
	Time       string `json:"time,omitempty"` // RFC 3339: when it was last recorded
	Message    string `json:"message"`
}

// LastApplyPreview is, of a set's Events, the preview Event of the highest generation up to gen (the set's:
// a higher one is of an edit the API server did not store after all), the latest of those; nil when no
// Event says its generation (no webhook, --events=false, expired Events, or one the recorder aggregated).
func LastApplyPreview(events []corev1.Event, gen int64) *ApplyPreview {
	var last *ApplyPreview
	var lastAt time.Time
	for i := range events {
		e := &events[i]
		if e.Reason != PreviewEventReason {
			continue
		}
		g, err := strconv.ParseInt(e.Annotations[AnnotationPreviewedGeneration], 10, 64)
		if err != nil || g < 1 || g > gen {
			continue
		}
		at := kube.EventTime(e)
		if last == nil || g > last.Generation || g == last.Generation && at.After(lastAt) {
			last, lastAt = &ApplyPreview{Generation: g, Message: e.Message}, at
			if !at.IsZero() {
				last.Time = at.UTC().Format(time.RFC3339)
			}
		}
	}
	return last
}

// PreviewedAtApply records the webhook's last preview of the set (LastApplyPreview; nil: none known).
func (s *Status) PreviewedAtApply(p *ApplyPreview) { s.ApplyPreview = p }

// applyPreviewLine says whether the set's generation was previewed at apply ("" when nothing is known); the
// preview's summary is -o json's (the status shows the rollout itself).
func (s *Status) applyPreviewLine() string {
	p := s.ApplyPreview
	if p == nil {
		return ""
	}
	at := ""
	if p.Time != "" {
		at = ", " + p.Time
	}
	if p.Generation == s.Generation {
		return fmt.Sprintf("previewed at apply by the webhook%s", at)
	}
	return fmt.Sprintf("NOT previewed at apply: the webhook's last preview is of generation %d%s; it recorded none of generation %d "+
		"(it was down or failed open, which failurePolicy Ignore does silently, or the API server did not call it)",
		p.Generation, at, s.Generation)
}
