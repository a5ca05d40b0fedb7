package rollout

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func previewEvent(gen string, at time.Time, msg string) corev1.Event {
	e := corev1.Event{Reason: PreviewEventReason, Message: msg, LastTimestamp: metav1.NewTime(at)}
	if gen != "" {
		e.Annotations = map[string]string{AnnotationPreviewedGeneration: gen}
	}
	return e
}

// The webhook's last preview is the one of the highest generation the set has reached, the latest of those;
// Events that say no generation (aggregated by the recorder, another reason, a bad value) or one the set never
// reached (an edit the API server refused after the webhook) say nothing.
func TestLastApplyPreview(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	events := []corev1.Event{
		previewEvent("2", t0, "generation 2: first"),
		previewEvent("2", t0.Add(time.Minute), "generation 2: again"),
		previewEvent("3", t0.Add(2*time.Minute), "generation 3: an edit that was not stored"),
		previewEvent("", t0.Add(3*time.Minute), "(combined from similar events): generation 2: x"),
		previewEvent("two", t0.Add(3*time.Minute), "bad"),
		{Reason: "SuccessfulCreate", ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationPreviewedGeneration: "2"}},
			LastTimestamp: metav1.NewTime(t0.Add(4 * time.Minute))},
		previewEvent("1", t0.Add(5*time.Minute), "generation 1: create"),
	}
	got := LastApplyPreview(events, 2, "")
	if got == nil || got.Generation != 2 || got.Message != "generation 2: again" || got.Time != "2026-11-30T12:01:00Z" || got.OtherEdit {
		t.Fatalf("got %+v, want generation 2's latest Event", got)
	}
	if got := LastApplyPreview(events[3:5], 2, ""); got != nil {
		t.Errorf("Events without a readable generation: got %+v, want nil", got)
	}
	if got := LastApplyPreview(nil, 2, ""); got != nil {
		t.Errorf("no Events: got %+v", got)
	}
}

// An edit refused after the webhook previewed it leaves an Event of a generation the next edit gets: the digest
// of the spec tells the two apart, a preview of the stored spec winning over a later one of another.
func TestLastApplyPreviewOfAnotherEdit(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	withSpec := func(e corev1.Event, digest string) corev1.Event {
		e.Annotations[AnnotationPreviewedSpec] = digest
		return e
	}
	refused := withSpec(previewEvent("3", t0.Add(time.Minute), "generation 3: refused later"), "aaa")
	stored := withSpec(previewEvent("3", t0, "generation 3: stored"), "bbb")
	older := withSpec(previewEvent("2", t0.Add(-time.Hour), "generation 2"), "ccc")
	for _, c := range []struct {
		name   string
		events []corev1.Event
		spec   string
		want   string
		other  bool
	}{
		{"only the refused edit's preview", []corev1.Event{older, refused}, "bbb", "generation 3: refused later", true},
		{"the stored edit's preview before a later one of another", []corev1.Event{older, stored, refused}, "bbb", "generation 3: stored", false},
		{"an Event without a digest (an older webhook)", []corev1.Event{older, previewEvent("3", t0, "generation 3: no digest")}, "bbb", "generation 3: no digest", false},
		{"a set whose spec has no digest", []corev1.Event{older, refused}, "", "generation 3: refused later", false},
		{"another spec at an older generation is only older", []corev1.Event{older}, "bbb", "generation 2", false},
	} {
		got := LastApplyPreview(c.events, 3, c.spec)
		if got == nil || got.Message != c.want || got.OtherEdit != c.other {
			t.Errorf("%s: got %+v, want %q, otherEdit %v", c.name, got, c.want, c.other)
		}
	}
}

// status says whether the set's generation was previewed at apply, and when it was not, that the webhook failed
// open or was not called: nothing else tells a user, as failurePolicy Ignore lets the edit through silently.
func TestStatusSaysWhetherTheEditWasPreviewedAtApply(t *testing.T) {
	for _, c := range []struct {
		gen  int64
		last *ApplyPreview
		want string // "" : no line
	}{
		{3, &ApplyPreview{Generation: 3, Time: "2026-11-30T12:00:00Z"}, "  previewed at apply by the webhook, 2026-11-30T12:00:00Z\n"},
		{4, &ApplyPreview{Generation: 3, Time: "2026-11-30T12:00:00Z"}, "  NOT previewed at apply: the webhook's last preview is of generation 3, 2026-11-30T12:00:00Z; " +
			"it recorded none of generation 4 (it was down or failed open, which failurePolicy Ignore does silently, or the API server did not call it)\n"},
		{4, nil, ""},
		{3, &ApplyPreview{Generation: 3, Time: "2026-11-30T12:00:00Z", OtherEdit: true}, "  NOT previewed at apply: the webhook's preview of generation 3, " +
			"2026-11-30T12:00:00Z is of another edit, one refused after the preview (by another admission webhook, or a write conflict); it recorded none " +
			"of the edit stored (it was down or failed open, which failurePolicy Ignore does silently, or the API server did not call it)\n"},
	} {
		s := &Status{Namespace: "prod", Name: "web", Generation: c.gen, ObservedGeneration: c.gen}
		s.PreviewedAtApply(c.last)
		var b strings.Builder
		if err := s.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(b.String(), "\n")
		got := ""
		if strings.Contains(lines[2], "previewed at apply") {
			got = lines[2]
		}
		if got != c.want || strings.Count(b.String(), "previewed at apply") != min(1, len(c.want)) {
			t.Errorf("generation %d, last preview %+v: line %q, want %q\n%s", c.gen, c.last, got, c.want, b.String())
		}
	}
}
