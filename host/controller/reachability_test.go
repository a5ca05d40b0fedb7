package controller

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/ordinal-dev/ordinal/internal/logbuffer"
)

// An API server that cannot be reached is logged at the default verbosity, and so is its return.
func TestReachabilityIsLogged(t *testing.T) {
	var up atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.1"}`))
	}))
	defer srv.Close()
	client, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var logs logbuffer.Buffer
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(),
		logr.FromSlogHandler(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	t.Cleanup(cancel) // a test that fails waiting stops the watch too
	done := make(chan struct{})
	go func() { defer close(done); watchReachability(ctx, client, time.Millisecond) }()
	logs.WaitFor(t, `level=ERROR msg="Cannot reach the API server"`)
	up.Store(true)
	logs.WaitFor(t, `level=INFO msg="Reached the API server again"`)
	cancel()
	<-done
	if n := strings.Count(logs.String(), "Cannot reach the API server"); n != 1 {
		t.Errorf("the outage was logged %d times, want once (then once a minute):\n%s", n, logs.String())
	}
}
