package webhook

import (
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
)

// Issue 12 item 1, as a figure rather than a timed test: one admission review of a template change to a
// 5000-replica set, over HTTP, with the server's default budget (3 s, 70% of it for the replay). It
// reports the time per review and the share of reviews answered with a preview (replayed steps, and an
// estimate of the rest when the budget ran out) rather than "no rollout preview". Run it beside another
// CPU-heavy job to see a loaded machine: the answer must stay a preview, only the replayed part shrinks.
func BenchmarkWebhookReview5000Replicas(b *testing.B) {
	benchReview(b, newWorld(b, 5000, "Parallel", 500, "Retain", ""))
}

// The 1000-pod OrderedReady set with claims that the preview's scaling figures use, reviewed with the
// default budget: "whole/review" is the share of reviews whose answer replayed the whole rollout (no
// estimate for the rest), the figure the preview's speed is for, and "syncs/review" how many of the
// rollout's 6,002 syncs the replay got through.
func BenchmarkWebhookReview1000OrderedReady(b *testing.B) {
	benchReview(b, newWorld(b, 1000, "OrderedReady", 1, "Retain", ""))
}

// benchReview posts b.N image changes of w's set, each a new image, to a server with the default budget.
func benchReview(b *testing.B, w world) {
	f := newFixture(b, w.src, nil, func(c *Config) { c.Timeout = 0 }) // 0: the server's default
	previews, estimates, syncs := 0, 0, 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cur := w.edit(func(s *appsv1.StatefulSet) {
			s.Spec.Template.Spec.Containers[0].Image = "x:" + time.Now().Format("150405.000000")
		})
		resp := f.post(b, reviewOf(b, admissionv1.Update, w.set, cur, false))
		all := strings.Join(resp.Warnings, "\n")
		if strings.Contains(all, "rolling update of") {
			previews++
		}
		if strings.Contains(all, "estimate for the rest") {
			estimates++
		}
		if p, ok := f.srv.store.get(w.set.Namespace + "/" + w.set.Name); ok && p.Preview != nil {
			syncs += p.Preview.Outcome.Steps
		}
	}
	b.ReportMetric(float64(previews)/float64(b.N), "previews/review")
	b.ReportMetric(float64(estimates)/float64(b.N), "estimates/review")
	b.ReportMetric(float64(previews-estimates)/float64(b.N), "whole/review")
	b.ReportMetric(float64(syncs)/float64(b.N), "syncs/review")
}
