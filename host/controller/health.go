package controller

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/tools/leaderelection"

	"github.com/ordinal-dev/ordinal/host/module"
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
	// Module reports the active module and the hot-swap history (/module, /readyz?verbose).
	Module func() module.SwapStatus
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
		details := ""
		if _, verbose := r.URL.Query()["verbose"]; verbose {
			details = h.moduleDetails()
		}
		switch {
		case h.LeaderElection && !h.Leading.Load():
			_, _ = w.Write([]byte("ok: standby" + details))
		case synced && h.LeaderElection:
			_, _ = w.Write([]byte("ok: leader" + details))
		case synced:
			_, _ = w.Write([]byte("ok" + details))
		default:
			http.Error(w, "informer caches not synced"+details, http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("/module", func(w http.ResponseWriter, r *http.Request) {
		if h.Module == nil {
			http.Error(w, "no module information", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(h.Module())
	})
	return mux
}

// moduleDetails are /readyz?verbose's lines about the active module and the last refusal.
func (h *Health) moduleDetails() string {
	if h.Module == nil {
		return ""
	}
	st := h.Module()
	a := st.Active
	s := fmt.Sprintf("\nmodule: %s %s %s (kubernetes %s, abi %d) from %s, active since %s; %d swaps, %d refusals",
		a.Describe.Module, a.Describe.ModuleVersion, a.Digest, a.Describe.KubernetesVersion, a.Describe.ABI, a.Source,
		a.ActiveSince.UTC().Format(time.RFC3339), st.Swaps, st.Refusals)
	if r := st.LastRefusal; r != nil {
		s += fmt.Sprintf("\nlast refused: %s from %s at %s (%s): %s", r.Digest, r.Source, r.At.UTC().Format(time.RFC3339), r.Reason, r.Detail)
	}
	return s + "\n"
}

// MetricsHandler serves the controller's registry on /metrics.
func MetricsHandler(m *Metrics, mux *http.ServeMux) *http.ServeMux {
	if mux == nil {
		mux = http.NewServeMux()
	}
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry}))
	return mux
}
