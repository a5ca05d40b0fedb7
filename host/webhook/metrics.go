package webhook

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics of the webhook, on their own registry (plus Go and process collectors).
type Metrics struct {
	Registry        *prometheus.Registry
	Requests        *prometheus.CounterVec
	Duration        *prometheus.HistogramVec
	PreviewDuration prometheus.Histogram
	CertReloads     *prometheus.CounterVec
	// Waiting is the reviews waiting for a preview (their own, or an identical one in flight).
	Waiting prometheus.Gauge
	// SharedPreviews counts reviews answered with a preview that served identical reviews made at the
	// same time (each of them counts, the first included).
	SharedPreviews prometheus.Counter
	// ConnectionsDropped counts connections the HTTPS listener closed before they reached the server, by
	// reason (DropUnauthenticatedFull, DropRefusedFull, DropHandshakeTimeout, DropHandshakeFailed).
	ConnectionsDropped *prometheus.CounterVec
}

// NewMetrics creates the metrics and their registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ordinal_webhook_requests_total",
			Help: "Admission reviews answered, by operation and decision (allowed, denied, skipped, failed_open, failed_closed, bad_request).",
		}, []string{"operation", "decision"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ordinal_webhook_request_duration_seconds",
			Help:    "Time to answer one admission review, by decision.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"decision"}),
		PreviewDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ordinal_webhook_preview_duration_seconds",
			Help:    "Time to build the snapshot and replay the edit.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		Waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ordinal_webhook_reviews_waiting",
			Help: "Admission reviews waiting for a preview, their own or an identical one in flight.",
		}),
		SharedPreviews: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ordinal_webhook_shared_previews_total",
			Help: "Admission reviews answered with a preview shared with identical reviews made at the same time (each counts).",
		}),
		ConnectionsDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ordinal_webhook_connections_dropped_total",
			Help: "Connections closed before they reached the server, by reason (unauthenticated_full: the oldest connection without a verified client certificate that had not proven itself, to make room; refused_full: a new connection, no place to make; handshake_timeout; handshake_failed).",
		}, []string{"reason"}),
		CertReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ordinal_webhook_certificate_reloads_total",
			Help: "Serving certificate (re)loads from --tls-cert-file/--tls-private-key-file, by result (ok, error).",
		}, []string{"result"}),
	}
	m.Registry.MustRegister(m.Requests, m.Duration, m.PreviewDuration, m.CertReloads, m.Waiting, m.SharedPreviews, m.ConnectionsDropped,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) observe(op, decision string, d time.Duration) {
	m.Requests.WithLabelValues(op, decision).Inc()
	m.Duration.WithLabelValues(decision).Observe(d.Seconds())
}

// Handler serves the registry.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}
