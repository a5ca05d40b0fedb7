package controller

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

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
	var logs syncBuffer
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(),
		logr.FromSlogHandler(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	done := make(chan struct{})
	go func() { defer close(done); watchReachability(ctx, client, time.Millisecond) }()
	waitFor := func(s string) {
		t.Helper()
		deadline := time.After(time.Minute) // a hang guard: the line comes at the first failed check
		for !strings.Contains(logs.String(), s) {
			select {
			case <-deadline:
				cancel()
				t.Fatalf("no %q in the log:\n%s", s, logs.String())
			case <-time.After(time.Millisecond):
			}
		}
	}
	waitFor(`level=ERROR msg="Cannot reach the API server"`)
	up.Store(true)
	waitFor(`level=INFO msg="Reached the API server again"`)
	cancel()
	<-done
	if n := strings.Count(logs.String(), "Cannot reach the API server"); n != 1 {
		t.Errorf("the outage was logged %d times, want once (then once a minute):\n%s", n, logs.String())
	}
}
