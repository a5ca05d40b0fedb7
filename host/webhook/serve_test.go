package webhook

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordinal-dev/ordinal/internal/logbuffer"
)

// testCA issues certificates for the serve tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T, cn string) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return &testCA{cert: c, key: key, pool: pool}
}

func (ca *testCA) issue(t *testing.T, cn string, usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// serveTest starts HTTPServer with o over a trivial handler and returns its address and serving CA.
func serveTest(t *testing.T, o ServeOptions) (string, *testCA) {
	t.Helper()
	servingCA := newTestCA(t, "serving-ca")
	serving := servingCA.issue(t, "webhook", x509.ExtKeyUsageServerAuth)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // as /validate reads its review: a trickled body holds the handler
		_, _ = io.WriteString(w, "reached "+r.URL.Path)
	})
	hs, limited, err := o.HTTPServer(h, &tls.Config{Certificates: []tls.Certificate{serving}}, ln, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(limited) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String(), servingCA
}

func get(t *testing.T, addr string, roots *x509.CertPool, client *tls.Certificate, path string) (int, string, error) {
	t.Helper()
	cfg := &tls.Config{RootCAs: roots}
	if client != nil {
		cfg.Certificates = []tls.Certificate{*client}
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
	resp, err := c.Get("https://" + addr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// Issue 11 hole 9: /validate and /preview answered any caller (and recorded Events on any named set). Only
// a client certificate from --client-ca-file, with an allowed name, reaches them; probes reach /healthz.
func TestWebhookRequiresAPIServerClientCert(t *testing.T) {
	clientCA := newTestCA(t, "client-ca")
	addr, servingCA := serveTest(t, ServeOptions{ClientCAs: clientCA.pool, AllowedNames: []string{"kube-apiserver-webhook-client"}})
	apiserver := clientCA.issue(t, "kube-apiserver-webhook-client", x509.ExtKeyUsageClientAuth)
	other := clientCA.issue(t, "someone-else", x509.ExtKeyUsageClientAuth)
	stranger := newTestCA(t, "stranger-ca").issue(t, "kube-apiserver-webhook-client", x509.ExtKeyUsageClientAuth)

	for _, path := range []string{"/validate", "/preview", "/preview/default/web"} {
		if code, _, err := get(t, addr, servingCA.pool, nil, path); err != nil || code != http.StatusUnauthorized {
			t.Errorf("%s without a certificate: %d %v; want 401", path, code, err)
		}
		if code, _, err := get(t, addr, servingCA.pool, &other, path); err != nil || code != http.StatusForbidden {
			t.Errorf("%s with a certificate of another name: %d %v; want 403", path, code, err)
		}
		// A certificate of another CA is refused in the handshake or not even offered (Go's client sends
		// only a certificate the server's acceptable CAs name): either way the handler is not reached.
		if code, _, err := get(t, addr, servingCA.pool, &stranger, path); err == nil && code != http.StatusUnauthorized {
			t.Errorf("%s with a certificate of another CA: %d", path, code)
		}
		if code, body, err := get(t, addr, servingCA.pool, &apiserver, path); err != nil || code != http.StatusOK || body != "reached "+path {
			t.Errorf("%s as the API server: %d %q %v", path, code, body, err)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _, err := get(t, addr, servingCA.pool, nil, path); err != nil || code != http.StatusOK {
			t.Errorf("probe %s: %d %v", path, code, err)
		}
	}
	if _, _, err := (ServeOptions{}).HTTPServer(http.NotFoundHandler(), &tls.Config{}, nil, nil); err == nil {
		t.Error("a server without client CAs and without AllowUnauthenticated was made")
	}
}

// Issue 11 hole 9: slow clients were never timed out (1000 trickling TLS connections held for 150 s). A
// connection that never finishes its handshake, and one that trickles its body, are closed by the server:
// the test waits for the close (a positive signal) under a generous bound.
func TestWebhookSlowClientsTimedOut(t *testing.T) {
	addr, servingCA := serveTest(t, ServeOptions{AllowUnauthenticated: true, ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 600 * time.Millisecond})
	closed := func(c net.Conn) error {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute)) // a bound: the server closes long before
		buf := make([]byte, 1024)
		for {
			if _, err := c.Read(buf); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					return errors.New("the server kept the connection open for 2 minutes")
				}
				return nil
			}
		}
	}
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if err := closed(silent); err != nil {
		t.Errorf("silent connection: %v", err)
	}

	trickle, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: servingCA.pool})
	if err != nil {
		t.Fatal(err)
	}
	defer trickle.Close()
	if _, err := io.WriteString(trickle, "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- closed(trickle) }()
	for { // one byte at a time until the server gives up on the body
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("trickling connection: %v", err)
			}
			return
		case <-time.After(50 * time.Millisecond):
			if _, err := io.WriteString(trickle, "x"); err != nil {
				err = <-done
				if err != nil {
					t.Errorf("trickling connection: %v", err)
				}
				return
			}
		}
	}
}

// A newcomer ran the webhook with --client-ca-file naming the CA of its own serving certificate (the ca.crt
// beside tls.crt) instead of the CA of the API server's client certificate: every review was refused in the
// TLS handshake, failurePolicy: Ignore let every edit through without a warning, and the webhook's log
// said nothing at its default level. A caller turned away for its client certificate is now a warning
// (each way of being turned away), at most one line a minute, the next line counting those not logged.
func TestRefusedClientCertificatesAreLogged(t *testing.T) {
	clientCA := newTestCA(t, "client-ca")
	var (
		mu    sync.Mutex
		clock = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func() { mu.Lock(); defer mu.Unlock(); clock = clock.Add(refusalLogEvery) }
	logs := &logbuffer.Buffer{}
	o := ServeOptions{ClientCAs: clientCA.pool, AllowedNames: []string{"kube-apiserver-webhook-client"}, now: now}
	servingCA := newTestCA(t, "serving-ca")
	serving := servingCA.issue(t, "webhook", x509.ExtKeyUsageServerAuth)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, hl, err := o.HTTPServer(http.NotFoundHandler(), &tls.Config{Certificates: []tls.Certificate{serving}}, ln,
		slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(hl) }()
	t.Cleanup(func() { _ = hs.Close() })
	addr := ln.Addr().String()

	// As kube-apiserver does (a client certificate callback): the certificate is sent whatever CAs the
	// server names, so the handshake refuses it.
	stranger := newTestCA(t, "stranger-ca").issue(t, "kube-apiserver-webhook-client", x509.ExtKeyUsageClientAuth)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: servingCA.pool,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &stranger, nil }}}}
	if resp, err := c.Post("https://"+addr+"/validate", "application/json", nil); err == nil {
		resp.Body.Close()
		t.Fatalf("a certificate of another CA reached the handler: %s", resp.Status)
	}
	logs.WaitFor(t, `level=WARN msg="Refused a client certificate that --client-ca-file does not verify`, `commonName=kube-apiserver-webhook-client issuer=stranger-ca`)

	advance()
	if code, _, err := get(t, addr, servingCA.pool, nil, "/validate"); err != nil || code != http.StatusUnauthorized {
		t.Fatalf("without a certificate: %d %v", code, err)
	}
	logs.WaitFor(t, `level=WARN msg="Refused a caller without a client certificate`, "path=/validate")

	// Within the minute: counted, not logged; the next line, a minute on, says how many.
	other := clientCA.issue(t, "someone-else", x509.ExtKeyUsageClientAuth)
	for range 2 {
		if code, _, err := get(t, addr, servingCA.pool, &other, "/validate"); err != nil || code != http.StatusForbidden {
			t.Fatalf("another name: %d %v", code, err)
		}
	}
	advance()
	if code, _, err := get(t, addr, servingCA.pool, &other, "/validate"); err != nil || code != http.StatusForbidden {
		t.Fatalf("another name: %d %v", code, err)
	}
	logs.WaitFor(t, `level=WARN msg="Refused a client certificate whose common name is not in --client-cert-allowed-names"`,
		"commonName=someone-else", "refusedWithoutALine=2")
	if n := strings.Count(logs.String(), "level=WARN"); n != 3 {
		t.Errorf("%d warnings, want 3 (one a minute):\n%s", n, logs.String())
	}
}
