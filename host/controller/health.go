package controller

import (
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/tools/leaderelection"
)

// Health serves /healthz and /readyz.
//
//   - /healthz is 200 while the process runs, unless this replica leads and
//     has failed to renew its lease for longer than the watchdog timeout.
//   - /readyz, without leader election: 200 once the informer caches have
//     synced. With leader election: the leader is ready once its caches have
//     synced; a standby (waiting for the lease, informers not started, as
//     kube-controller-manager does) is ready too, answering "ok: standby", so a
//     Deployment's rollout and the metrics Service treat it as a healthy
//     replica. A leader whose caches are still syncing is not ready (503).
type Health struct {
	LeaderElection bool
	Leading        atomic.Bool
	// Synced reports whether the running controller's caches have synced.
	Synced   func() bool
	Watchdog *leaderelection.HealthzAdaptor
}

// Handler returns a mux with /healthz and /readyz.
func (h *Health) Handler() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if h.Watchdog != nil {
			if err := h.Watchdog.Check(r); err != nil {
				http.Error(w, "unhealthy: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		synced := h.Synced != nil && h.Synced()
		switch {
		case h.LeaderElection && !h.Leading.Load():
			_, _ = w.Write([]byte("ok: standby"))
		case synced && h.LeaderElection:
			_, _ = w.Write([]byte("ok: leader"))
		case synced:
			_, _ = w.Write([]byte("ok"))
		default:
			http.Error(w, "informer caches not synced", http.StatusServiceUnavailable)
		}
	})
	return mux
}

// MetricsHandler serves the controller's registry on /metrics.
func MetricsHandler(m *Metrics, mux *http.ServeMux) *http.ServeMux {
	if mux == nil {
		mux = http.NewServeMux()
	}
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry}))
	return mux
}
