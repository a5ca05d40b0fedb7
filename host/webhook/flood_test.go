package webhook

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	hostplan "github.com/ordinal-dev/ordinal/host/plan"
)

// Issue 32, finding 2 ("connection flood → fail-open"): 1,000 unauthenticated TCP connections held the
// --max-connections slots, taken before the TLS handshake; a review from the API server waited for one
// past the configuration's timeoutSeconds (5 s, failurePolicy Ignore), so the edit went through unchecked
// and --deny-* were bypassed. These tests prove the fix by what happens, never by how long it takes:
// every wait has only a generous bound that fails the test if hit.

// safety bounds a wait for a positive signal; no test here expects to come near it.
const safety = 2 * time.Minute

// floodServer serves the webhook's real handler for the world's set with o (client CA and allowed name
// filled in) and returns its address, the serving CA, the API server's client certificate and the metrics.
func floodServer(t *testing.T, src Source, mod hostplan.Reconciler, o ServeOptions) (addr string, servingCA *testCA, apiserver tls.Certificate, m *Metrics) {
	t.Helper()
	addr, servingCA, apiserver, m, _ = floodServerListener(t, src, mod, o)
	return addr, servingCA, apiserver, m
}

// floodServerListener is floodServer, with the listener that does the handshakes.
func floodServerListener(t *testing.T, src Source, mod hostplan.Reconciler, o ServeOptions) (addr string, servingCA *testCA, apiserver tls.Certificate, m *Metrics, l *handshakeListener) {
	t.Helper()
	clientCA := newTestCA(t, "client-ca")
	apiserver = clientCA.issue(t, "kube-apiserver-webhook-client", x509.ExtKeyUsageClientAuth)
	o.ClientCAs, o.AllowedNames = clientCA.pool, []string{"kube-apiserver-webhook-client"}
	m = NewMetrics()
	o.Metrics = m
	srv, err := New(Config{Module: mod, Source: src, Metrics: m, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Timeout: 10 * time.Minute}) // a bound, not a measurement (as newFixture)
	if err != nil {
		t.Fatal(err)
	}
	servingCA = newTestCA(t, "serving-ca")
	serving := servingCA.issue(t, "webhook", x509.ExtKeyUsageServerAuth)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, hl, err := o.HTTPServer(srv.Handler(), &tls.Config{Certificates: []tls.Certificate{serving}}, ln, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(hl) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String(), servingCA, apiserver, m, hl.(*handshakeListener)
}

// waitHandshakesDone waits until no unauthenticated connection of l is in its handshake with its
// ClientHello read: a client's handshake ends before the server has read its last message.
func waitHandshakesDone(t *testing.T, l *handshakeListener) {
	t.Helper()
	underWay := func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for e := l.unauth.Front(); e != nil; e = e.Next() {
			if e.Value.(*trackedConn).stage == stageHello {
				return true
			}
		}
		return false
	}
	for end := time.Now().Add(safety); underWay(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("a handshake the client finished is still under way on the server after %s", safety)
		}
	}
}

// apiServerClient is how kube-apiserver calls a webhook: HTTP/2 when offered, its client certificate.
func apiServerClient(servingCA *testCA, cert tls.Certificate) *http.Client {
	return &http.Client{Timeout: safety, Transport: &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{RootCAs: servingCA.pool, Certificates: []tls.Certificate{cert}}}}
}

// postReview sends a review as the API server does and decodes the answer.
func postReview(t *testing.T, c *http.Client, url string, review *admissionv1.AdmissionReview) (*admissionv1.AdmissionResponse, *http.Response) {
	t.Helper()
	resp, err := c.Post(url, "application/json", bytes.NewReader(mustJSON(t, review)))
	if err != nil {
		t.Fatalf("the review was not answered: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d: %s", resp.StatusCode, body)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &out); err != nil || out.Response == nil {
		t.Fatalf("not an AdmissionReview: %v %s", err, body)
	}
	return out.Response, resp
}

// waitClosed reads c until the server closes it (the positive signal), failing after the safety bound.
func waitClosed(t *testing.T, what string, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(safety))
	buf := make([]byte, 512)
	for {
		if _, err := c.Read(buf); err != nil {
			if isTimeout(err) {
				t.Fatalf("%s: still open after %s", what, safety)
			}
			return
		}
	}
}

// dialIdle opens n TCP connections that never start a TLS handshake.
func dialIdle(t *testing.T, addr string, n int) {
	t.Helper()
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, safety)
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		t.Cleanup(func() { _ = c.Close() })
	}
}

// dialNoCert completes a TLS handshake without a client certificate and leaves the connection idle.
func dialNoCert(t *testing.T, addr string, servingCA *testCA) *tls.Conn {
	t.Helper()
	d := &net.Dialer{Timeout: safety}
	c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{RootCAs: servingCA.pool})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// With the shipped connection settings (512 slots, 128 unauthenticated connections) and every timeout of
// the connections set to an hour, so that no timeout frees anything: 1,000 idle TCP connections
// that never start TLS and 20 that finish it without a certificate, all opened before the API server's
// review, do not keep it out. It is answered with a preview over HTTP/2 (not "no rollout preview"); the
// API server's connection opened before the flood keeps its slot and still serves; a probe still gets
// in. Before the fix the review waited for a slot that only a timeout would free (so, here, never).
func TestConnectionFloodDoesNotFailOpen(t *testing.T) {
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "x:2" })
	addr, servingCA, apiserver, m := floodServer(t, w.src, testModule,
		ServeOptions{HandshakeTimeout: time.Hour, ReadHeaderTimeout: time.Hour, ReadTimeout: time.Hour, WriteTimeout: time.Hour})

	// The API server's connection, opened and idle before the flood (HTTP/1.1: no ALPN).
	early, err := tls.DialWithDialer(&net.Dialer{Timeout: safety}, "tcp", addr,
		&tls.Config{RootCAs: servingCA.pool, Certificates: []tls.Certificate{apiserver}})
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()

	dialIdle(t, addr, 1000)
	for range 20 {
		dialNoCert(t, addr, servingCA)
	}

	c := apiServerClient(servingCA, apiserver)
	resp, httpResp := postReview(t, c, "https://"+addr+"/validate", reviewOf(t, admissionv1.Update, w.set, cur, false))
	if !resp.Allowed {
		t.Fatalf("denied: %+v", resp.Result)
	}
	wantWarning(t, resp.Warnings, "rolling update of 3 pods")
	for _, warning := range resp.Warnings {
		if strings.Contains(warning, "no rollout preview") {
			t.Errorf("answered without a preview: %q", warning)
		}
	}
	if httpResp.ProtoMajor != 2 {
		t.Errorf("the review was served over %s; the API server speaks HTTP/2 to webhooks", httpResp.Proto)
	}

	// The early connection kept its slot through the flood.
	_ = early.SetDeadline(time.Now().Add(safety))
	if _, err := io.WriteString(early, "GET /preview HTTP/1.1\r\nHost: webhook\r\n\r\n"); err != nil {
		t.Fatalf("the API server's earlier connection: %v", err)
	}
	r, err := http.ReadResponse(bufio.NewReader(early), nil)
	if err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("the API server's earlier connection: %v %v", r, err)
	}
	r.Body.Close()

	// A probe (no certificate) still gets in.
	if code, _, err := get(t, addr, servingCA.pool, nil, "/healthz"); err != nil || code != http.StatusOK {
		t.Errorf("probe under the flood: %d %v", code, err)
	}
	dropped := testutil.ToFloat64(m.ConnectionsDropped.WithLabelValues(DropUnauthenticatedFull))
	if dropped < 1000+20-DefaultMaxUnauthenticatedConnections {
		t.Errorf("%v unauthenticated connections dropped to make room, want at least %d", dropped, 1000+20-DefaultMaxUnauthenticatedConnections)
	}
	t.Logf("dropped to make room: %v", dropped)
}

// The handshake stage is bounded in number and in time. With room for two unauthenticated connections,
// a third closes the oldest (first one done without a certificate and idle, then one that never started
// TLS), and a newcomer still completes its handshake; a connection that does not finish its handshake in
// time is closed. The signal is the close itself, seen by the peer. (Which connections may be closed so,
// and when a new one is refused instead: listener_test.go.)
func TestConnectionFloodHandshakeStageDropsUnauthenticatedPeers(t *testing.T) {
	t.Run("full", func(t *testing.T) {
		w := newWorld(t, 1, "OrderedReady", 1, "Retain", "")
		addr, servingCA, apiserver, m, l := floodServerListener(t, w.src, testModule,
			ServeOptions{MaxUnauthenticatedConnections: 2, HandshakeTimeout: time.Hour, ReadHeaderTimeout: time.Hour})
		noCert := dialNoCert(t, addr, servingCA)
		waitHandshakesDone(t, l) // done on the server's side too: no longer a handshake under way
		idle, err := net.DialTimeout("tcp", addr, safety)
		if err != nil {
			t.Fatal(err)
		}
		defer idle.Close()
		dialNoCert(t, addr, servingCA) // a third: the oldest goes, this one's handshake completes
		waitClosed(t, "the oldest unauthenticated connection (TLS done, no certificate)", noCert)
		dialNoCert(t, addr, servingCA) // a fourth: the next oldest goes
		waitClosed(t, "the next oldest (no TLS)", idle)
		if got := testutil.ToFloat64(m.ConnectionsDropped.WithLabelValues(DropUnauthenticatedFull)); got != 2 {
			t.Errorf("dropped to make room: %v, want 2", got)
		}
		// The API server's connections are not among them: a review still completes (closing the oldest
		// idle one, once both handshakes are done on the server's side too).
		waitHandshakesDone(t, l)
		if code, _, err := get(t, addr, servingCA.pool, &apiserver, "/preview"); err != nil || code != http.StatusOK {
			t.Errorf("the API server with the unauthenticated connections full: %d %v", code, err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		w := newWorld(t, 1, "OrderedReady", 1, "Retain", "")
		addr, _, _, m := floodServer(t, w.src, testModule,
			ServeOptions{HandshakeTimeout: 50 * time.Millisecond, ReadHeaderTimeout: time.Hour})
		idle, err := net.DialTimeout("tcp", addr, safety)
		if err != nil {
			t.Fatal(err)
		}
		defer idle.Close()
		waitClosed(t, "a connection that never starts its handshake", idle)
		// counted as it is closed; wait for the count, as for the close
		for end := time.Now().Add(safety); testutil.ToFloat64(m.ConnectionsDropped.WithLabelValues(DropHandshakeTimeout)) != 1; time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				t.Fatal("handshake timeout not counted")
			}
		}
	})
}

// The review's deadline counts from when the request arrived, and the API server's own timeout (the
// URL's ?timeout=) lowers it: fixed times, no clock.
func TestConnectionFloodBudgetCountsFromArrival(t *testing.T) {
	arrival := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		budget time.Duration
		param  string
		want   time.Duration // after arrival
	}{
		{3 * time.Second, "5s", 3 * time.Second},           // the shipped configuration: --preview-timeout=3s, timeoutSeconds: 5
		{10 * time.Second, "5s", 4 * time.Second},          // 80% of the API server's 5 s
		{3 * time.Second, "2s", 1600 * time.Millisecond},   // timeoutSeconds: 2
		{3 * time.Second, "", 3 * time.Second},             // no timeout in the URL
		{3 * time.Second, "soon", 3 * time.Second},         // not a duration
		{3 * time.Second, "-5s", 3 * time.Second},          // not a timeout
		{30 * time.Second, "30s", 24 * time.Second},        // the longest the API server allows
		{time.Minute, "1m0s", 48 * time.Second},            // as client-go writes a minute
		{3 * time.Second, "500ms", 400 * time.Millisecond}, // below a second
	} {
		if got := reviewDeadline(arrival, c.budget, c.param).Sub(arrival); got != c.want {
			t.Errorf("budget %s, ?timeout=%s: deadline %s after arrival, want %s", c.budget, c.param, got, c.want)
		}
	}

	// Through the server: a request's arrival is when its connection was accepted (the first on it),
	// or when its headers were read (a later one). The clock of arrivals is moved an hour back while the
	// connection is accepted: the first review's 5 s ran out long ago, so it is answered at once by the
	// failure policy, without a preview; the second, on the same connection, arrives now and is previewed.
	w := newWorld(t, 3, "OrderedReady", 1, "Retain", "")
	cur := w.edit(func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "x:2" })
	mod := &countingModule{}
	var clock atomic.Pointer[time.Time]
	hourAgo := time.Now().Add(-time.Hour)
	clock.Store(&hourAgo)
	o := ServeOptions{now: func() time.Time {
		if t := clock.Load(); t != nil {
			return *t
		}
		return time.Now()
	}}
	addr, servingCA, apiserver, m := floodServer(t, w.src, mod, o)
	c := apiServerClient(servingCA, apiserver)
	c.Transport.(*http.Transport).ForceAttemptHTTP2 = false // HTTP/1.1: one request at a time on the connection
	c.Transport.(*http.Transport).MaxConnsPerHost = 1
	// Accept and handshake at the old time: the handshake's end means the connection was accepted.
	var reused []bool
	trace := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) },
		TLSHandshakeDone: func(tls.ConnectionState, error) {
			clock.Store(nil) // from here the clock is the real one
		},
	})
	post := func(url string) *admissionv1.AdmissionResponse {
		req, _ := http.NewRequestWithContext(trace, http.MethodPost, url, bytes.NewReader(mustJSON(t, reviewOf(t, admissionv1.Update, w.set, cur, false))))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body) // to the end: the connection is reused
		var out admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &out); err != nil || out.Response == nil {
			t.Fatalf("HTTP %d, not an AdmissionReview: %v %s", resp.StatusCode, err, body)
		}
		return out.Response
	}
	first := post("https://" + addr + "/validate?timeout=5s")
	wantWarning(t, first.Warnings, "no rollout preview (the review's deadline passed before its preview could start")
	if n := mod.calls.Load(); n != 0 {
		t.Errorf("the module was called %d times for a review whose time had run out", n)
	}
	second := post("https://" + addr + "/validate")
	wantWarning(t, second.Warnings, "rolling update of 3 pods")
	if mod.calls.Load() == 0 {
		t.Error("the second review was not previewed")
	}
	if fmt.Sprint(reused) != "[false true]" {
		t.Fatalf("connections reused %v: the two reviews must share one", reused)
	}
	if got := testCounter(m, "UPDATE", DecisionFailedOpen); got != 1 {
		t.Errorf("failed_open %v, want 1", got)
	}
}

// countingModule is the embedded module, counting its calls.
type countingModule struct{ calls atomic.Int64 }

func (c *countingModule) Reconcile(ctx context.Context, snapshot []byte) ([]byte, error) {
	c.calls.Add(1)
	return testModule.Reconcile(ctx, snapshot)
}

// The shipped configuration (examples/deploy/webhook and the chart's defaults) answers inside its
// timeoutSeconds: the review's deadline, from arrival, leaves at least a fifth of it for the way back,
// and it keeps the connection limits of TestConnectionFloodDoesNotFailOpen (it sets none of them).
func TestConnectionFloodShippedConfigurationAnswersInsideItsTimeout(t *testing.T) {
	read := func(path string, v any) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var vwc struct {
		Webhooks []struct {
			TimeoutSeconds int `json:"timeoutSeconds"`
		} `json:"webhooks"`
	}
	read("../../examples/deploy/webhook/validatingwebhookconfiguration.yaml", &vwc)
	var dep struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Args []string `json:"args"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	read("../../examples/deploy/webhook/deployment.yaml", &dep)
	var values struct {
		Webhook struct {
			TimeoutSeconds int    `json:"timeoutSeconds"`
			PreviewTimeout string `json:"previewTimeout"`
		} `json:"webhook"`
	}
	read("../../examples/helm/ordinal/values.yaml", &values)
	if len(vwc.Webhooks) != 1 || len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("expected one webhook and one container: %+v %+v", vwc, dep)
	}
	previewTimeout := DefaultTimeout
	for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
		name, val, _ := strings.Cut(a, "=")
		switch name {
		case "--preview-timeout":
			d, err := time.ParseDuration(val)
			if err != nil {
				t.Fatal(err)
			}
			previewTimeout = d
		case "--max-connections", "--max-unauthenticated-connections", "--tls-handshake-timeout", "--insecure-allow-unauthenticated":
			t.Errorf("deployment.yaml sets %s: TestConnectionFloodDoesNotFailOpen runs with the defaults", a)
		}
	}
	chartPreview, err := time.ParseDuration(values.Webhook.PreviewTimeout)
	if err != nil {
		t.Fatal(err)
	}
	arrival := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		what    string
		seconds int
		preview time.Duration
	}{{"examples/deploy/webhook", vwc.Webhooks[0].TimeoutSeconds, previewTimeout}, {"the chart", values.Webhook.TimeoutSeconds, chartPreview}} {
		timeout := time.Duration(c.seconds) * time.Second
		budget := reviewDeadline(arrival, c.preview, fmt.Sprintf("%ds", c.seconds)).Sub(arrival)
		if budget != c.preview {
			t.Errorf("%s: --preview-timeout %s is cut to %s by timeoutSeconds %d: lower it", c.what, c.preview, budget, c.seconds)
		}
		if budget > timeout*4/5 {
			t.Errorf("%s: a review may take %s of the API server's %s", c.what, budget, timeout)
		}
	}
}
