package controller

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"

	"github.com/ordinal-dev/ordinal/host/module"
)

// series finds the value of a counter, gauge or histogram (its count) by name and labels.
func series(t *testing.T, m *Metrics, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, s := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range s.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			return value(s), true
		}
	}
	return 0, false
}

func value(s *dto.Metric) float64 {
	switch {
	case s.Counter != nil:
		return s.Counter.GetValue()
	case s.Gauge != nil:
		return s.Gauge.GetValue()
	case s.Histogram != nil:
		return float64(s.Histogram.GetSampleCount())
	}
	return 0
}

// Labelled counters exist at zero before anything happens; client-go's work queue and REST client
// metrics, and the Go runtime's, are served under kube-controller-manager's and controller-runtime's names.
func TestMetricsConventions(t *testing.T) {
	m := NewMetrics(nil)
	for name, labels := range map[string]map[string]string{
		"ordinal_syncs_total":           {"result": resultError},
		"ordinal_errors_total":          {"stage": stageFirewall},
		"ordinal_module_refusals_total": {"reason": module.RefusedConformance},
		"ordinal_plan_refusals_total":   {"rule": "owner"},
		"ordinal_stale_skips_total":     {"group": "", "resource": "pods"},
	} {
		if v, ok := series(t, m, name, labels); !ok || v != 0 {
			t.Errorf("%s%v: present %v, value %v; want present at 0", name, labels, ok, v)
		}
	}

	// The runtime's GC series beside the memstats ones, as kube-controller-manager publishes them.
	for _, name := range []string{"go_gc_heap_live_bytes", "go_memstats_next_gc_bytes", "ordinal_set_caches"} {
		if _, ok := series(t, m, name, nil); !ok {
			t.Errorf("no %s", name)
		}
	}

	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "metrics-test"})
	defer q.ShutDown()
	q.Add("a")
	item, _ := q.Get()
	q.Done(item)
	if v, ok := series(t, m, "workqueue_adds_total", map[string]string{"name": "metrics-test"}); !ok || v != 1 {
		t.Errorf("workqueue_adds_total{name=metrics-test}: present %v, value %v; want 1", ok, v)
	}
	if _, ok := series(t, m, "workqueue_queue_duration_seconds", map[string]string{"name": "metrics-test"}); !ok {
		t.Error("no workqueue_queue_duration_seconds{name=metrics-test}")
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","items":[]}`))
	}))
	defer srv.Close()
	c, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods("x").List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	host := srv.Listener.Addr().String()
	if v, ok := series(t, m, "rest_client_requests_total", map[string]string{"code": "200", "method": "GET", "host": host}); !ok || v < 1 {
		t.Errorf("rest_client_requests_total{code=200,method=GET,host=%s}: present %v, value %v", host, ok, v)
	}
	if _, ok := series(t, m, "rest_client_request_duration_seconds", map[string]string{"verb": "GET", "host": host}); !ok {
		t.Error("no rest_client_request_duration_seconds")
	}
}
