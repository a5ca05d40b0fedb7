package webhook

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Under a flood, the eviction that makes room for new unauthenticated connections closed the API server's
// connection while its handshake was under way (2 of 16 reviews dropped): it closed the oldest, whatever
// it was doing. These tests hold the legitimate caller at a known point (its handshake after the server
// read its ClientHello, or its request in the handler) and flood the listener with idle TCP connections;
// every wait is for a positive signal, bounded only by safety.

// listenerServer serves h with o (client CA and allowed name filled in, metrics on) and returns its
// address, the serving CA, the API server's client certificate and the metrics.
func listenerServer(t *testing.T, o ServeOptions, h http.Handler) (addr string, servingCA *testCA, apiserver tls.Certificate, m *Metrics) {
	t.Helper()
	clientCA := newTestCA(t, "client-ca")
	apiserver = clientCA.issue(t, "kube-apiserver-webhook-client", x509.ExtKeyUsageClientAuth)
	o.ClientCAs, o.AllowedNames = clientCA.pool, []string{"kube-apiserver-webhook-client"}
	o.Metrics = NewMetrics()
	addr, servingCA, _ = serveTLS(t, o, h)
	return addr, servingCA, apiserver, o.Metrics
}

// serveTLS serves h with o on a loopback port with a serving certificate of a new CA, until the test ends.
func serveTLS(t *testing.T, o ServeOptions, h http.Handler) (addr string, servingCA *testCA, l net.Listener) {
	t.Helper()
	servingCA = newTestCA(t, "serving-ca")
	serving := servingCA.issue(t, "webhook", x509.ExtKeyUsageServerAuth)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, hl, err := o.HTTPServer(h, &tls.Config{Certificates: []tls.Certificate{serving}}, ln, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(hl) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String(), servingCA, hl
}

// heldConn lets its first write (the ClientHello) through and holds the second (the client's answer to
// the server's flight, sent once it read the ServerHello: the server has read the ClientHello) until
// release is closed.
type heldConn struct {
	net.Conn
	writes  int // only the handshake's goroutine writes until release
	held    chan struct{}
	release chan struct{}
}

func (c *heldConn) Write(b []byte) (int, error) {
	if c.writes++; c.writes == 2 {
		close(c.held)
		<-c.release
	}
	return c.Conn.Write(b)
}

// heldCaller starts the API server's handshake on a new connection and returns once it is held with its
// ClientHello read by the server. release lets the handshake go on; done gives its end.
func heldCaller(t *testing.T, addr string, servingCA *testCA, cert tls.Certificate) (c *tls.Conn, release func(), done <-chan error) {
	t.Helper()
	raw, err := net.DialTimeout("tcp", addr, safety)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	h := &heldConn{Conn: raw, held: make(chan struct{}), release: make(chan struct{})}
	c = tls.Client(h, &tls.Config{RootCAs: servingCA.pool, Certificates: []tls.Certificate{cert}, ServerName: "127.0.0.1",
		NextProtos: []string{"http/1.1"}})
	errc := make(chan error, 1)
	go func() { errc <- c.Handshake() }()
	select {
	case <-h.held:
	case err := <-errc:
		t.Fatalf("the handshake ended before the server answered its ClientHello: %v", err)
	case <-time.After(safety):
		t.Fatalf("the server did not answer the ClientHello within %s", safety)
	}
	var once sync.Once
	release = func() { once.Do(func() { close(h.release) }) }
	t.Cleanup(release) // a test that failed first does not leave the handshake held
	return c, release, errc
}

// waitDropped waits until n connections were dropped, for any reason, and returns the count by reason.
func waitDropped(t *testing.T, m *Metrics, n float64) map[string]float64 {
	t.Helper()
	for end := time.Now().Add(safety); ; time.Sleep(time.Millisecond) {
		by, total := map[string]float64{}, 0.0
		for _, r := range []string{DropUnauthenticatedFull, DropRefusedFull, DropHandshakeTimeout, DropHandshakeFailed} {
			if v := testutil.ToFloat64(m.ConnectionsDropped.WithLabelValues(r)); v > 0 {
				by[r], total = v, total+v
			}
		}
		if total >= n {
			return by
		}
		if time.Now().After(end) {
			t.Fatalf("connections dropped after %s: %v, want %v", safety, by, n)
		}
	}
}

// dialIdleConns opens n TCP connections that never start a TLS handshake, in order.
func dialIdleConns(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, safety)
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		t.Cleanup(func() { _ = c.Close() })
		cs = append(cs, c)
	}
	return cs
}

// roundTrip sends GET path on c (HTTP/1.1) and returns the answer's status and body.
func roundTrip(t *testing.T, c net.Conn, path string) (int, string) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(safety))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: webhook\r\n\r\n"); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	r, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer r.Body.Close()
	body, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(body)
}

var reachedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, "reached "+r.URL.Path)
})

// The API server's connection, its ClientHello read and its handshake held, is the oldest of two
// unauthenticated places; four idle connections arrive. Each new one closes the oldest idle one, never the
// API server's, which then completes its handshake and is answered. Before the fix the first to need
// room closed the API server's connection.
func TestFloodNeverClosesAHandshakeUnderWay(t *testing.T) {
	addr, servingCA, apiserver, m := listenerServer(t, ServeOptions{MaxUnauthenticatedConnections: 2,
		HandshakeTimeout: time.Hour, ReadHeaderTimeout: time.Hour}, reachedHandler)
	caller, release, done := heldCaller(t, addr, servingCA, apiserver)

	idle := dialIdleConns(t, addr, 4) // room for the first; each of the others closes one
	if by := waitDropped(t, m, 3); by[DropUnauthenticatedFull] != 3 {
		t.Errorf("dropped %v, want 3 %s: there was always an idle one to close", by, DropUnauthenticatedFull)
	}

	release()
	if err := <-done; err != nil {
		t.Fatalf("the API server's handshake, held while the idle connections came: %v", err)
	}
	if code, body := roundTrip(t, caller, "/validate"); code != http.StatusOK || body != "reached /validate" {
		t.Errorf("the API server's request: %d %q", code, body)
	}
	for i, c := range idle[:3] {
		waitClosed(t, fmt.Sprintf("idle connection %d", i+1), c)
	}
}

// Both unauthenticated places are held by handshakes under way: a new connection cannot make room, so it
// is refused (closed at once, counted as refused_full), and both handshakes complete.
func TestFloodRefusesTheNewConnectionWhenNoneMayBeClosed(t *testing.T) {
	addr, servingCA, apiserver, m := listenerServer(t, ServeOptions{MaxUnauthenticatedConnections: 2,
		HandshakeTimeout: time.Hour, ReadHeaderTimeout: time.Hour}, reachedHandler)
	first, releaseFirst, firstDone := heldCaller(t, addr, servingCA, apiserver)
	second, releaseSecond, secondDone := heldCaller(t, addr, servingCA, apiserver)

	idle := dialIdleConns(t, addr, 1)
	if by := waitDropped(t, m, 1); by[DropRefusedFull] != 1 || len(by) != 1 {
		t.Fatalf("dropped %v, want the new connection refused (%s): both places were handshakes under way", by, DropRefusedFull)
	}
	waitClosed(t, "the new connection, with no place to make", idle[0])

	releaseFirst()
	releaseSecond()
	for i, c := range []struct {
		conn *tls.Conn
		done <-chan error
	}{{first, firstDone}, {second, secondDone}} {
		if err := <-c.done; err != nil {
			t.Fatalf("handshake %d: %v", i+1, err)
		}
		if code, body := roundTrip(t, c.conn, "/validate"); code != http.StatusOK || body != "reached /validate" {
			t.Errorf("request %d: %d %q", i+1, code, body)
		}
	}
}

// A probe (no client certificate) with its request in the handler holds one of two unauthenticated
// places; three idle connections arrive. They close one another, never the probe, which gets its answer.
func TestFloodNeverClosesARequestInFlight(t *testing.T) {
	entered, proceed := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			close(entered)
			<-proceed
		}
		_, _ = io.WriteString(w, "reached "+r.URL.Path)
	})
	addr, servingCA, _, m := listenerServer(t, ServeOptions{MaxUnauthenticatedConnections: 2,
		HandshakeTimeout: time.Hour, ReadHeaderTimeout: time.Hour, IdleTimeout: time.Hour}, h)
	probe, err := tls.DialWithDialer(&net.Dialer{Timeout: safety}, "tcp", addr,
		&tls.Config{RootCAs: servingCA.pool, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	answer := make(chan string, 1)
	go func() {
		_ = probe.SetDeadline(time.Now().Add(safety))
		_, _ = io.WriteString(probe, "GET /healthz HTTP/1.1\r\nHost: webhook\r\n\r\n")
		r, err := http.ReadResponse(bufio.NewReader(probe), nil)
		if err != nil {
			answer <- err.Error()
			return
		}
		defer r.Body.Close()
		body, _ := io.ReadAll(r.Body)
		answer <- string(body)
	}()
	select {
	case <-entered:
	case <-time.After(safety):
		t.Fatalf("the probe's request did not reach the handler within %s", safety)
	}

	idle := dialIdleConns(t, addr, 3)
	if by := waitDropped(t, m, 2); by[DropUnauthenticatedFull] != 2 {
		t.Errorf("dropped %v, want 2 %s", by, DropUnauthenticatedFull)
	}
	close(proceed)
	if got := <-answer; got != "reached /healthz" {
		t.Fatalf("the probe's request in flight: %q", got)
	}
	waitClosed(t, "idle connection 1", idle[0])
	waitClosed(t, "idle connection 2", idle[1])
}

// nowhere is a listener that never accepts: the tests below call admit themselves.
type nowhere struct{ done chan struct{} }

func (n nowhere) Accept() (net.Conn, error) { <-n.done; return nil, net.ErrClosed }
func (n nowhere) Close() error              { close(n.done); return nil }
func (n nowhere) Addr() net.Addr            { return &net.TCPAddr{} }

// The eviction rule, stage by stage, over in-memory connections: which one a new connection closes, and
// when it is refused.
func TestEvictionChoosesAmongConnectionsNotYetProven(t *testing.T) {
	var drops []string
	l := newHandshakeListener(nowhere{make(chan struct{})}, &tls.Config{}, func(tls.ConnectionState) bool { return false },
		ServeOptions{MaxUnauthenticatedConnections: 3}.withDefaults(), slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(reason string) { drops = append(drops, reason) })
	defer l.Close()
	conn := func() *trackedConn {
		server, client := net.Pipe()
		t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
		return &trackedConn{Conn: server, l: l}
	}
	closed := func(tc *trackedConn) bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return tc.closed
	}
	admit := func(what string) *trackedConn {
		t.Helper()
		tc := conn()
		if !l.admit(tc) {
			t.Fatalf("%s refused", what)
		}
		return tc
	}

	hello := admit("a handshake")
	hello.setStage(stageHello)
	request := admit("a probe")
	l.ConnState(tls.Server(request, l.cfg), http.StateActive)
	idle := admit("an idle connection")
	admit("a fourth") // closes the idle one: the two older are under way
	if !closed(idle) || closed(hello) || closed(request) || fmt.Sprint(drops) != "[unauthenticated_full]" {
		t.Fatalf("a fourth connection: drops %v, want the idle one closed", drops)
	}

	l.ConnState(tls.Server(request, l.cfg), http.StateIdle) // answered: between requests
	admit("a fifth")                                        // the probe is now the oldest evictable
	if !closed(request) || closed(hello) || len(drops) != 2 {
		t.Fatalf("a fifth connection: drops %v, want the probe between requests closed", drops)
	}

	// Full of handshakes under way: a new connection is refused and nothing open is closed.
	var held []*trackedConn
	for e := l.unauth.Front(); e != nil; e = e.Next() {
		held = append(held, e.Value.(*trackedConn))
	}
	for _, tc := range held {
		tc.setStage(stageHello)
	}
	refused := conn()
	if l.admit(refused) || !closed(refused) {
		t.Fatal("a new connection with every place under way was admitted")
	}
	if fmt.Sprint(drops) != "[unauthenticated_full unauthenticated_full refused_full]" {
		t.Fatalf("drops %v, want the new connection refused (%s)", drops, DropRefusedFull)
	}
	for _, tc := range held {
		if closed(tc) {
			t.Error("a handshake under way was closed")
		}
	}
}

// With --insecure-allow-unauthenticated no certificate tells the API server: a caller proves itself by a
// complete first request line (awaitRequestLine). Before, a handshake done was the proof, so flood
// connections that finished one and sent nothing held the slots, and a caller that had sent its line
// waited behind them (here, with every timeout an hour, for ever).

// unauthenticatedServer serves h with o and AllowUnauthenticated (metrics on) and returns its address, the
// serving CA, the metrics and the listener.
func unauthenticatedServer(t *testing.T, o ServeOptions, h http.Handler) (addr string, servingCA *testCA, m *Metrics, l *handshakeListener) {
	t.Helper()
	o.AllowUnauthenticated, o.Metrics = true, NewMetrics()
	addr, servingCA, hl := serveTLS(t, o, h)
	return addr, servingCA, o.Metrics, hl.(*handshakeListener)
}

var stageNames = map[stage]string{stageAccepted: "accepted", stageHello: "hello", stageIdle: "idle", stageRequest: "request"}

// listenerState is the stage of each unauthenticated connection of l, oldest first, and the slots held.
func listenerState(l *handshakeListener) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var stages []string
	for e := l.unauth.Front(); e != nil; e = e.Next() {
		stages = append(stages, stageNames[e.Value.(*trackedConn).stage])
	}
	return fmt.Sprintf("unauthenticated %v, %d slots held", stages, len(l.slots))
}

// waitListenerState waits until listenerState is want.
func waitListenerState(t *testing.T, l *handshakeListener, after, want string) {
	t.Helper()
	for end := time.Now().Add(safety); ; time.Sleep(time.Millisecond) {
		got := listenerState(l)
		if got == want {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s: %s after %s, want %s", after, got, safety, want)
		}
	}
}

// dialUnauthenticated completes a TLS handshake (HTTP/1.1, no client certificate) and returns the connection.
func dialUnauthenticated(t *testing.T, addr string, servingCA *testCA) *tls.Conn {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: safety}, "tcp", addr,
		&tls.Config{RootCAs: servingCA.pool, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// One slot, two unauthenticated places, every timeout an hour. A flood connection finishes its handshake
// and sends nothing, an idle one fills the places; the caller's connection closes the first (it proved
// nothing), sends its request line, and only then do three more idle connections come. They close one
// another, never the caller, which sends the rest of its request and is answered. Before, the first flood
// connection took the slot with its handshake and the caller's line was never read.
func TestUnauthenticatedFloodNeverClosesACallerPastItsRequestLine(t *testing.T) {
	addr, servingCA, m, l := unauthenticatedServer(t, ServeOptions{MaxConnections: 1, MaxUnauthenticatedConnections: 2,
		HandshakeTimeout: time.Hour, ReadHeaderTimeout: time.Hour, ReadTimeout: time.Hour, IdleTimeout: time.Hour}, reachedHandler)

	hog := dialUnauthenticated(t, addr, servingCA)
	waitListenerState(t, l, "a flood connection that finished its handshake and sent nothing", "unauthenticated [idle], 0 slots held")
	dialIdleConns(t, addr, 1)
	waitListenerState(t, l, "the places filled", "unauthenticated [idle accepted], 0 slots held")

	caller := dialUnauthenticated(t, addr, servingCA)
	if by := waitDropped(t, m, 1); by[DropUnauthenticatedFull] != 1 {
		t.Fatalf("dropped %v, want the flood connection that sent nothing closed (%s)", by, DropUnauthenticatedFull)
	}
	waitClosed(t, "the flood connection that sent nothing", hog)
	_ = caller.SetDeadline(time.Now().Add(safety))
	if _, err := io.WriteString(caller, "GET /validate HTTP/1.1\r\n"); err != nil {
		t.Fatal(err)
	}
	waitListenerState(t, l, "the caller's request line", "unauthenticated [accepted], 1 slots held")

	flood := dialIdleConns(t, addr, 3) // the first takes the free place; each of the others closes one
	if by := waitDropped(t, m, 3); by[DropUnauthenticatedFull] != 3 {
		t.Errorf("dropped %v, want 3 %s: there was always an idle one to close", by, DropUnauthenticatedFull)
	}
	waitClosed(t, "flood connection 1", flood[0])

	if _, err := io.WriteString(caller, "Host: webhook\r\n\r\n"); err != nil {
		t.Fatalf("the rest of the caller's request: %v", err)
	}
	r, err := http.ReadResponse(bufio.NewReader(caller), nil)
	if err != nil {
		t.Fatalf("the caller's request, its line sent before the flood: %v", err)
	}
	defer r.Body.Close()
	if body, _ := io.ReadAll(r.Body); r.StatusCode != http.StatusOK || string(body) != "reached /validate" {
		t.Errorf("the caller's request: %d %q", r.StatusCode, body)
	}
}

// A slowloris: its handshake done, part of a request line sent and never the rest. It has not proven
// itself, so a new connection closes it to make room, and it never took the slot. Before, its handshake
// alone took the slot and nothing could close it but a timeout.
func TestUnauthenticatedPartialRequestLineIsClosedToMakeRoom(t *testing.T) {
	addr, servingCA, m, l := unauthenticatedServer(t, ServeOptions{MaxConnections: 1, MaxUnauthenticatedConnections: 1,
		HandshakeTimeout: time.Hour, ReadHeaderTimeout: time.Hour, ReadTimeout: time.Hour, IdleTimeout: time.Hour}, reachedHandler)

	slow := dialUnauthenticated(t, addr, servingCA)
	_ = slow.SetDeadline(time.Now().Add(safety))
	if _, err := io.WriteString(slow, "GET /valid"); err != nil {
		t.Fatal(err)
	}
	waitListenerState(t, l, "part of a request line", "unauthenticated [idle], 0 slots held")

	dialIdleConns(t, addr, 1)
	if by := waitDropped(t, m, 1); by[DropUnauthenticatedFull] != 1 || len(by) != 1 {
		t.Fatalf("dropped %v, want the slowloris closed (%s)", by, DropUnauthenticatedFull)
	}
	waitClosed(t, "the connection with part of a request line", slow)
	waitListenerState(t, l, "the new connection", "unauthenticated [accepted], 0 slots held")
}

// Reading the request line in the listener does not change what is served: HTTP/2 (as the API server
// speaks to webhooks) and HTTP/1.1, the first request and the next on the same connection.
func TestUnauthenticatedServesHTTP2AndHTTP1(t *testing.T) {
	addr, servingCA, _, _ := unauthenticatedServer(t, ServeOptions{}, reachedHandler)
	c := &http.Client{Timeout: safety, Transport: &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{RootCAs: servingCA.pool}}}
	for i := range 2 {
		resp, err := c.Post("https://"+addr+"/validate", "application/json", nil)
		if err != nil {
			t.Fatalf("HTTP/2 request %d: %v", i+1, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK || string(body) != "reached /validate" {
			t.Errorf("HTTP/2 request %d: %s %d %q", i+1, resp.Proto, resp.StatusCode, body)
		}
	}
	h1 := dialUnauthenticated(t, addr, servingCA)
	for _, path := range []string{"/validate", "/healthz"} {
		if code, body := roundTrip(t, h1, path); code != http.StatusOK || body != "reached "+path {
			t.Errorf("HTTP/1.1 %s: %d %q", path, code, body)
		}
	}
}
