package rollout

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/host/kube"
)

// The webhook's record of the edits it previewed (docs/webhook.md): an Event of reason PreviewEventReason on
// the set for each edit it let through, annotated with the generation the edit gave the set. A status that
// finds the set past the generation of its last such Event knows the API server stored an edit the webhook
// never previewed: the webhook was down or failed open (failurePolicy Ignore says nothing to the user), or
// the API server did not call it. The Event also carries a digest of the spec it previewed: an edit refused
// after the webhook's preview (by a later admission webhook, or a write conflict) leaves an Event of a
// generation the next edit then gets, and only the digest tells that edit from the one previewed.
const (
	PreviewEventReason            = "RolloutPreview"
	AnnotationPreviewedGeneration = "ordinal.dev/previewed-generation"
	AnnotationPreviewedSpec       = "ordinal.dev/previewed-spec"
)

// SpecDigest is a digest of a set's spec (its JSON, as encoding/json writes it: fields in order, map keys
// sorted), the same for the set a review carries and the set the API server then stores: a validating
// webhook sees the object after defaulting, and nothing changes it after.
func SpecDigest(spec *appsv1.StatefulSetSpec) string {
	b, err := json.Marshal(spec)
	if err != nil {
		return "" // a spec that does not encode has no digest; the generation alone is compared
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

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
	// OtherEdit: the preview is of the set's generation but of another spec than the one stored: an edit
	// refused after the preview, whose generation the stored edit got.
	OtherEdit bool `json:"otherEdit,omitempty"`
}

// LastApplyPreview is, of a set's Events, the preview Event of the highest generation up to gen (the set's:
// a higher one is of an edit the API server did not store after all), the latest of those, one of the set's
// spec (its SpecDigest, spec; Events without a digest match any) before one of another; nil when no Event
// says its generation (no webhook, --events=false, expired Events, or one the recorder aggregated).
func LastApplyPreview(events []corev1.Event, gen int64, spec string) *ApplyPreview {
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
		d := e.Annotations[AnnotationPreviewedSpec]
		other := g == gen && d != "" && spec != "" && d != spec
		at := kube.EventTime(e)
		if last == nil || g > last.Generation || g == last.Generation && (last.OtherEdit && !other || last.OtherEdit == other && at.After(lastAt)) {
			last, lastAt = &ApplyPreview{Generation: g, Message: e.Message, OtherEdit: other}, at
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
	switch {
	case p.Generation == s.Generation && p.OtherEdit:
		return fmt.Sprintf("NOT previewed at apply: the webhook's preview of generation %d%s is of another edit, one refused after the preview "+
			"(by another admission webhook, or a write conflict); it recorded none of the edit stored (it was down or failed open, which "+
			"failurePolicy Ignore does silently, or the API server did not call it)", p.Generation, at)
	case p.Generation == s.Generation:
		return fmt.Sprintf("previewed at apply by the webhook%s", at)
	}
	return fmt.Sprintf("NOT previewed at apply: the webhook's last preview is of generation %d%s; it recorded none of generation %d "+
		"(it was down or failed open, which failurePolicy Ignore does silently, or the API server did not call it)",
		p.Generation, at, s.Generation)
}
