package webhook

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
)

// gatedModule holds every reconcile until release is closed, and counts them.
type gatedModule struct {
	release chan struct{}
	calls   atomic.Int64
}

func (g *gatedModule) Reconcile(ctx context.Context, snapshot []byte) ([]byte, error) {
	g.calls.Add(1)
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return testModule.Reconcile(ctx, snapshot)
}

// Issue 11 hole 9: throughput collapsed under concurrency (200 reviews in parallel: 16 previews, the rest
// answered fail-open). Identical reviews made at the same time now share one preview: 50 of them, all
// waiting (the gauge says so) before the module may run, are all answered with the same preview, made
// once.
func TestIdenticalReviewsShareOnePreview(t *testing.T) {
	w := newWorld(t, 5, "OrderedReady", 1, "Retain", "")
	cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "x:2" })
	review := reviewOf(t, admissionv1.Update, w.set, cur, true)

	// The syncs one preview of this edit takes, from a review alone.
	alone := &gatedModule{release: make(chan struct{})}
	close(alone.release)
	want := newFixture(t, w.src, alone, nil).srv
	wantResp, wantDecision := want.Review(context.Background(), review.Request)
	if wantDecision != DecisionAllowed || alone.calls.Load() == 0 {
		t.Fatalf("a single review: %s, %d syncs", wantDecision, alone.calls.Load())
	}

	const n = 50
	gate := &gatedModule{release: make(chan struct{})}
	f := newFixture(t, w.src, gate, func(c *Config) { c.MaxConcurrent = 1 })
	type answer struct {
		resp     *admissionv1.AdmissionResponse
		decision string
	}
	answers := make(chan answer, n)
	for range n {
		go func() {
			resp, decision := f.srv.Review(context.Background(), review.Request)
			answers <- answer{resp, decision}
		}()
	}
	deadline := time.Now().Add(2 * time.Minute) // a bound; the reviews arrive at once
	for testutil.ToFloat64(f.srv.metrics.Waiting) < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %v of %d reviews waiting", testutil.ToFloat64(f.srv.metrics.Waiting), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(gate.release)
	for range n {
		a := <-answers
		if a.decision != DecisionAllowed || !slices.Equal(a.resp.Warnings, wantResp.Warnings) {
			t.Fatalf("a shared review: %s %q, want %s %q", a.decision, a.resp.Warnings, wantDecision, wantResp.Warnings)
		}
	}
	if got, want := gate.calls.Load(), alone.calls.Load(); got != want {
		t.Errorf("%d reviews made %d syncs; one preview makes %d", n, got, want)
	}
	if shared := testutil.ToFloat64(f.srv.metrics.SharedPreviews); shared != n {
		t.Errorf("shared previews %v, want %d", shared, n)
	}
}

// Beyond MaxWaiting, a review is answered by the failure policy at once instead of holding a
// connection; the waiting ones are still answered.
func TestWaitingReviewsAreBounded(t *testing.T) {
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "x:2" })
	review := reviewOf(t, admissionv1.Update, w.set, cur, true)
	gate := &gatedModule{release: make(chan struct{})}
	f := newFixture(t, w.src, gate, func(c *Config) { c.MaxConcurrent = 1; c.MaxWaiting = 2 })
	done := make(chan string, 2)
	for range 2 {
		go func() { _, d := f.srv.Review(context.Background(), review.Request); done <- d }()
	}
	deadline := time.Now().Add(2 * time.Minute)
	for testutil.ToFloat64(f.srv.metrics.Waiting) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the two reviews never waited")
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, decision := f.srv.Review(context.Background(), review.Request)
	if decision != DecisionFailedOpen || len(resp.Warnings) == 0 {
		t.Fatalf("third review: %s %q; want failed open at once", decision, resp.Warnings)
	}
	close(gate.release)
	for range 2 {
		if d := <-done; d != DecisionAllowed {
			t.Errorf("a waiting review: %s", d)
		}
	}
}
