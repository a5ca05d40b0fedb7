package controller

import (
	"context"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"k8s.io/client-go/util/workqueue"
)

// client-go's own metrics, under the names kube-controller-manager and controller-runtime publish them:
// the work queue's (workqueue_*{name}) and the REST client's (rest_client_requests_total{code,method,host},
// rest_client_request_duration_seconds{verb,host}). client-go takes one provider per process, so the
// collectors are package-wide and every Metrics registry serves them.
var (
	clientGoOnce sync.Once

	wqDepth = prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "depth",
		Help: "Current depth of the work queue."}, []string{"name"})
	wqAdds = prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: "adds_total",
		Help: "Adds handled by the work queue."}, []string{"name"})
	wqLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: "queue_duration_seconds",
		Help: "How long an item stays in the work queue before being requested.", Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12)}, []string{"name"})
	wqWork = prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: "work_duration_seconds",
		Help: "How long processing an item from the work queue takes.", Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12)}, []string{"name"})
	wqUnfinished = prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "unfinished_work_seconds",
		Help: "Seconds of work in progress not yet observed by work_duration; large values mean stuck workers."}, []string{"name"})
	wqLongest = prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "longest_running_processor_seconds",
		Help: "Seconds the longest-running processor of the work queue has been running."}, []string{"name"})
	wqRetries = prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: "retries_total",
		Help: "Retries handled by the work queue."}, []string{"name"})

	restRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rest_client_requests_total",
		Help: "HTTP requests to the API server, by status code, method and host."}, []string{"code", "method", "host"})
	restLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rest_client_request_duration_seconds",
		Help:    "Request latency to the API server, by verb and host.",
		Buckets: []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}}, []string{"verb", "host"})
)

func clientGoCollectors() []prometheus.Collector {
	return []prometheus.Collector{wqDepth, wqAdds, wqLatency, wqWork, wqUnfinished, wqLongest, wqRetries, restRequests, restLatency}
}

// useClientGoMetrics points client-go's metrics at the collectors above; it must run before the work
// queue is made (the queue reads the provider when it is created).
func useClientGoMetrics() {
	clientGoOnce.Do(func() {
		workqueue.SetProvider(queueMetrics{})
		clientmetrics.Register(clientmetrics.RegisterOpts{RequestResult: requestResult{}, RequestLatency: requestLatency{}})
	})
}

type queueMetrics struct{}

func (queueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return wqDepth.WithLabelValues(name)
}
func (queueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return wqAdds.WithLabelValues(name)
}
func (queueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return wqLatency.WithLabelValues(name)
}
func (queueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return wqWork.WithLabelValues(name)
}
func (queueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return wqUnfinished.WithLabelValues(name)
}
func (queueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return wqLongest.WithLabelValues(name)
}
func (queueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return wqRetries.WithLabelValues(name)
}

type requestResult struct{}

func (requestResult) Increment(_ context.Context, code, method, host string) {
	restRequests.WithLabelValues(code, method, host).Inc()
}

type requestLatency struct{}

func (requestLatency) Observe(_ context.Context, verb string, u url.URL, latency time.Duration) {
	restLatency.WithLabelValues(verb, u.Host).Observe(latency.Seconds())
}
