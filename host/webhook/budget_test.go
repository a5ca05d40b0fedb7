package webhook

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/ordinal-dev/ordinal/host/preview"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

// Issue 11 hole 9 / issue 12 item 1: a preview longer than its budget answered "no rollout preview"
// (a 20-pod rollout on a loaded machine). It now stops at its budget and answers with the steps it
// replayed and a marked estimate of the rest. Budgets are given in syncs here, so nothing depends on
// the machine's speed.
func TestPreviewStopsAtBudgetWithEstimate(t *testing.T) {
	w := newWorld(t, 20, "OrderedReady", 2, "Retain", "")
	cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "x:2" })
	in := w.previewInput(cur)
	full, err := preview.Preview(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if full.Preview.Outcome.Result != "complete" || full.Preview.Estimate != nil {
		t.Fatalf("unbounded preview: %s, estimate %v", full.Preview.Outcome.Result, full.Preview.Estimate)
	}
	in.Budget = replay.Budget{Syncs: 8}
	part, err := preview.Preview(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	p := part.Preview
	if p.Outcome.Result != "partial" || p.Outcome.Steps != 8 || p.Estimate == nil {
		t.Fatalf("bounded preview: %s after %d syncs, estimate %v", p.Outcome.Result, p.Outcome.Steps, p.Estimate)
	}
	// the replayed part is exactly the start of the full preview
	for i, b := range p.Batches {
		if len(b) != len(full.Preview.Batches[i]) || b[0] != full.Preview.Batches[i][0] {
			t.Fatalf("batch %d: %v, the full preview's %v", i, b, full.Preview.Batches[i])
		}
	}
	// the estimate against what the full preview did after the cut
	restBatches := len(full.Preview.Batches) - len(p.Batches)
	if d := p.Estimate.RemainingBatches - restBatches; d < -1 || d > 1 {
		t.Errorf("estimated %d more batches, the full preview made %d", p.Estimate.RemainingBatches, restBatches)
	}
	if p.Estimate.RemainingPods <= 0 || p.Estimate.RemainingPods > 20 {
		t.Errorf("estimated %d more pods of 20", p.Estimate.RemainingPods)
	}
	if p.Estimate.RemainingDuration == nil {
		t.Fatalf("no duration estimate: %s", p.Estimate)
	}
	rest := time.Duration(full.Preview.Outcome.Duration - p.Outcome.Duration)
	if got := time.Duration(*p.Estimate.RemainingDuration); got < rest/2 || got > rest*2 {
		t.Errorf("estimated %s more, the full preview took %s more", got, rest)
	}

	// through the webhook: allowed, the replayed summary plus the marked estimate, not "no rollout preview"
	f := newFixture(t, w.src, nil, func(c *Config) { c.PreviewSyncs = 8 })
	resp := f.post(t, reviewOf(t, admissionv1.Update, w.set, cur, false))
	if !resp.Allowed {
		t.Fatalf("denied: %+v", resp.Result)
	}
	wantWarning(t, resp.Warnings, "rolling update of 2 pods so far", "[web-19 web-18]; 1 step so far")
	wantWarning(t, resp.Warnings, "preview cut short (the preview's budget of 8 syncs was spent): estimate for the rest: about 19 more pods in about 10 more batches")
	if got := testCounter(f.srv.Metrics(), "UPDATE", DecisionAllowed); got != 1 {
		t.Errorf("allowed counter %v, want 1", got)
	}
}

// A budget already spent still replays one sync and answers partial: the deadline is checked between
// syncs, never inside one.
func TestPreviewDeadlinePassedReplaysOneSync(t *testing.T) {
	w := newWorld(t, 5, "Parallel", 1, "Retain", "")
	cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To(int32(8)) })
	in := w.previewInput(cur)
	in.Budget = replay.Budget{Deadline: time.Unix(1, 0)}
	res, err := preview.Preview(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Preview
	if p.Outcome.Result != "partial" || p.Outcome.Steps != 1 || p.Estimate == nil {
		t.Fatalf("%s after %d syncs, estimate %v", p.Outcome.Result, p.Outcome.Steps, p.Estimate)
	}
	if p.Estimate.RemainingPods != 3 {
		t.Errorf("estimated %d more pods, want the 3 new ones (created, not yet Ready)", p.Estimate.RemainingPods)
	}
	// Nothing finished: the duration is the kubelet model's, one Parallel batch of creations.
	if d := p.Estimate.RemainingDuration; d == nil || time.Duration(*d) != replay.DefaultStartDelay+replay.DefaultReadyDelay ||
		!strings.Contains(p.Estimate.Basis, "kubelet model's pace") {
		t.Errorf("estimate %s (%s): want the kubelet model's start + Ready delays", p.Estimate, p.Estimate.Basis)
	}
}

// Issue 12 item 1: when not one pod finished within the budget, the duration is still estimated, at the
// kubelet model's pace, and comes near what the full replay takes.
func TestPreviewEstimatesDurationWhenNothingFinished(t *testing.T) {
	for _, policy := range []string{"OrderedReady", "Parallel"} {
		t.Run(policy, func(t *testing.T) {
			w := newWorld(t, 20, policy, 2, "Retain", "")
			cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "x:2" })
			in := w.previewInput(cur)
			full, err := preview.Preview(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			in.Budget = replay.Budget{Syncs: 1}
			part, err := preview.Preview(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			e := part.Preview.Estimate
			if e == nil || e.RemainingDuration == nil || !strings.Contains(e.Basis, "no pod finished yet") {
				t.Fatalf("estimate %v", e)
			}
			rest := time.Duration(full.Preview.Outcome.Duration - part.Preview.Outcome.Duration)
			if got := time.Duration(*e.RemainingDuration); got < rest/2 || got > rest*2 {
				t.Errorf("estimated %s more (%s), the full preview took %s more", got, e.Basis, rest)
			}
			if d := e.RemainingBatches - (len(full.Preview.Batches) - len(part.Preview.Batches)); d < -1 || d > 1 {
				t.Errorf("estimated %d more batches, the full preview made %d", e.RemainingBatches, len(full.Preview.Batches)-len(part.Preview.Batches))
			}
			t.Logf("%s: %s; full rest %s", policy, e, rest)
		})
	}
}

// Issue 12 item 1: the webhook previews sets of any size. At 5000 replicas a preview with a budget of a
// few syncs answers with the steps it replayed and an estimate of the whole rest (the budget is given in
// syncs, so nothing here depends on the machine's speed).
func TestPreviewOf5000ReplicasAnswersWithAnEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("5000 pods")
	}
	w := newWorld(t, 5000, "Parallel", 500, "Retain", "")
	cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "x:2" })
	in := w.previewInput(cur)
	in.Budget = replay.Budget{Syncs: 3}
	res, err := preview.Preview(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Preview
	if p.Outcome.Result != "partial" || p.Estimate == nil {
		t.Fatalf("%s after %d syncs, estimate %v", p.Outcome.Result, p.Outcome.Steps, p.Estimate)
	}
	if p.Estimate.RemainingPods < 4000 || p.Estimate.RemainingPods > 5000 || p.Estimate.RemainingBatches < 8 {
		t.Errorf("estimate %s: want about 4500 more pods in about 9 more batches of 500", p.Estimate)
	}
	if p.Estimate.RemainingDuration == nil {
		t.Errorf("estimate %s: no duration", p.Estimate)
	}
	t.Logf("5000 replicas, 3 syncs: %d batches so far; %s", len(p.Batches), p.Estimate)
}

// previewInput previews the edit cur of the world's set, at a fixed now, without a budget.
func (w world) previewInput(cur *appsv1.StatefulSet) preview.Input {
	return preview.Input{Old: w.set, New: cur, Module: testModule, Now: time.Unix(1_800_000_000, 0),
		Objects: snapshot.Objects{Pods: w.src.Pods, Revisions: w.src.Revisions, Claims: w.src.Claims}}
}
