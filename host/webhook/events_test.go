package webhook

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	testclock "k8s.io/utils/clock/testing"

	"github.com/ordinal-dev/ordinal/host/rollout"
)

// previewEventOf is the Event the webhook's recorder makes of generation gen's preview of one set.
func previewEventOf(gen int, at time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web.%x", at.UnixNano()), Namespace: "prod",
			Annotations: map[string]string{rollout.AnnotationPreviewedGeneration: fmt.Sprint(gen)}},
		InvolvedObject: corev1.ObjectReference{Kind: "StatefulSet", Namespace: "prod", Name: "web", UID: "u1", APIVersion: "apps/v1"},
		Reason:         EventReason, Message: rollout.PreviewEventMessage(int64(gen), "rolling update of 3 pods"), Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "ordinal-webhook"}, Count: 1, FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at),
	}
}

// A burst of 40 edits of one set within a minute: every preview's Event is sent, each its own, annotated with
// its generation (kubectl ordinal status reads them), where client-go's defaults drop the Events past 25 and
// fold the 11th on into one without annotations, so status would call the later edits not previewed. A repeat
// of one generation's preview is still folded into a count and rate-limited.
func TestEventCorrelationKeepsEachEditsPreview(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	burst := func(c *record.EventCorrelator, clock *testclock.FakeClock) (sent int, annotated int) {
		for gen := 2; gen < 42; gen++ {
			clock.Step(time.Second)
			r, err := c.EventCorrelate(previewEventOf(gen, clock.Now()))
			if err != nil {
				t.Fatal(err)
			}
			if r.Skip {
				continue
			}
			sent++
			if r.Event.Annotations[rollout.AnnotationPreviewedGeneration] == fmt.Sprint(gen) && !strings.HasPrefix(r.Event.Message, "(combined") {
				annotated++
			}
		}
		return sent, annotated
	}
	clock := testclock.NewFakeClock(t0)
	defaults := record.NewEventCorrelatorWithOptions(record.CorrelatorOptions{Clock: clock})
	if sent, annotated := burst(defaults, clock); sent == 40 && annotated == 40 {
		t.Fatalf("client-go's defaults kept all 40 (the case no longer shows what EventCorrelation is for)")
	}
	clock = testclock.NewFakeClock(t0)
	opts := EventCorrelation()
	opts.Clock = clock
	ours := record.NewEventCorrelatorWithOptions(opts)
	if sent, annotated := burst(ours, clock); sent != 40 || annotated != 40 {
		t.Errorf("EventCorrelation: %d of 40 previews sent, %d with their generation; want all", sent, annotated)
	}

	// one generation's preview repeated (the API server retrying a review): one Event counted up, then limited
	repeats, skipped := 0, 0
	for i := 0; i < 60; i++ {
		clock.Step(time.Second)
		r, err := ours.EventCorrelate(previewEventOf(7, clock.Now()))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Skip:
			skipped++
		case r.Event.Count > 1 && r.Event.Annotations[rollout.AnnotationPreviewedGeneration] == "7":
			repeats++
		}
	}
	if skipped == 0 || repeats == 0 {
		t.Errorf("a repeated preview: %d counted as repeats, %d rate-limited; want both", repeats, skipped)
	}
}
