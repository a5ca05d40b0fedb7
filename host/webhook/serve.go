package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

// ServeOptions bound what a caller can hold of the webhook's HTTPS endpoint and say who may call it.
// Slow clients were never timed out (1000 trickling TLS connections were held for 150 s), and /validate
// and /preview answered anyone, recording Events on any named set.
type ServeOptions struct {
	// HandshakeTimeout bounds the TLS handshake, from when the connection is accepted (default 2s);
	// ReadHeaderTimeout the request headers (default 5s); ReadTimeout the whole request, body included
	// (default 15s: the API server sends a review at once); WriteTimeout the answer (default 35s: the
	// longest review the API server allows is 30s); IdleTimeout a kept-alive connection between requests
	// (default 90s).
	HandshakeTimeout, ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxConnections of the API server open at once (default 512): connections whose handshake presented a
	// verified client certificate (of an allowed name, when names are set), or with AllowUnauthenticated
	// any that sent a complete first request line (until then it is one of the unauthenticated, closed to
	// make room as an idle one). More wait for one. No other connection takes one.
	MaxConnections int
	// MaxUnauthenticatedConnections open at once (default 128): connections in their TLS handshake, or
	// done without a verified client certificate (probes, and anyone else; they reach only /healthz and
	// /readyz). When they are full a new one closes the oldest that has not proven itself (no ClientHello
	// read yet, or between requests), so idle peers cannot hold a new connection off its handshake; a
	// handshake under way or a request in flight is never closed so, and when only such are open the new
	// one is refused (handshakeListener).
	MaxUnauthenticatedConnections int
	// ClientCAs verify the client certificate the API server presents (AdmissionConfiguration
	// kubeConfigFile); /validate and /preview answer 401 without one. Nil only with AllowUnauthenticated.
	ClientCAs *x509.CertPool
	// AllowedNames, when set, are the only client certificate common names accepted (as kube-apiserver's
	// --requestheader-allowed-names).
	AllowedNames []string
	// AllowUnauthenticated serves /validate and /preview to any caller (for clusters whose API server
	// cannot present a client certificate; restrict who reaches the port by other means).
	AllowUnauthenticated bool
	// Metrics, when set, counts the connections dropped (ordinal_webhook_connections_dropped_total).
	Metrics *Metrics

	now func() time.Time // the clock of arrivals (tests); default time.Now

	refused *refusalLog // set by HTTPServer: the callers turned away for their client certificate
}

// Defaults of ServeOptions.
const (
	DefaultHandshakeTimeout              = 2 * time.Second
	DefaultReadHeaderTimeout             = 5 * time.Second
	DefaultReadTimeout                   = 15 * time.Second
	DefaultWriteTimeout                  = 35 * time.Second
	DefaultIdleTimeout                   = 90 * time.Second
	DefaultMaxConnections                = 512
	DefaultMaxUnauthenticatedConnections = 128
)

func (o ServeOptions) withDefaults() ServeOptions {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.HandshakeTimeout, DefaultHandshakeTimeout)
	def(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&o.ReadTimeout, DefaultReadTimeout)
	def(&o.WriteTimeout, DefaultWriteTimeout)
	def(&o.IdleTimeout, DefaultIdleTimeout)
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.MaxUnauthenticatedConnections <= 0 {
		o.MaxUnauthenticatedConnections = DefaultMaxUnauthenticatedConnections
	}
	if o.now == nil {
		o.now = time.Now
	}
	return o
}

// LoadClientCAs reads a PEM bundle of client CAs (--client-ca-file).
func LoadClientCAs(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate", path)
	}
	return pool, nil
}

// HTTPServer returns the server of the webhook's HTTPS endpoint, with its timeouts and the handler behind
// the client check, and the listener to serve it on: ln, with the TLS handshake done by the listener
// (the serving certificate from tlsCfg, client certificates verified against ClientCAs, HTTP/2 and
// HTTP/1.1 offered) under HandshakeTimeout and MaxUnauthenticatedConnections, and MaxConnections slots
// for the API server's connections only (handshakeListener). Serve it with Serve(ln), not ServeTLS: the
// connections it returns are TLS already.
func (o ServeOptions) HTTPServer(h http.Handler, tlsCfg *tls.Config, ln net.Listener, log *slog.Logger) (*http.Server, net.Listener, error) {
	if o.ClientCAs == nil && !o.AllowUnauthenticated {
		return nil, nil, fmt.Errorf("no client CA: the webhook answers only the API server, which it knows by its client certificate")
	}
	o = o.withDefaults()
	if log == nil {
		log = slog.Default()
	}
	o.refused = &refusalLog{log: log, now: o.now}
	tlsCfg = tlsCfg.Clone()
	if o.ClientCAs != nil {
		tlsCfg.ClientCAs = o.ClientCAs
		// Probes (/healthz, /readyz) come without a certificate; the handler requires one elsewhere.
		tlsCfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	// The listener negotiates the protocol, so it offers what http.Server.ServeTLS would: the API server
	// speaks HTTP/2 to webhooks. With "h2" in TLSConfig.NextProtos, Serve sets up HTTP/2.
	if !slices.Contains(tlsCfg.NextProtos, "h2") {
		tlsCfg.NextProtos = append(tlsCfg.NextProtos, "h2")
	}
	if !slices.Contains(tlsCfg.NextProtos, "http/1.1") {
		tlsCfg.NextProtos = append(tlsCfg.NextProtos, "http/1.1")
	}
	var dropped func(string)
	if o.Metrics != nil {
		dropped = func(reason string) { o.Metrics.ConnectionsDropped.WithLabelValues(reason).Inc() }
	}
	trusted := o.isAPIServer
	if o.AllowUnauthenticated {
		trusted = func(tls.ConnectionState) bool { return true }
	}
	hl := newHandshakeListener(ln, tlsCfg.Clone(), trusted, o, log, dropped)
	hs := &http.Server{Handler: o.withArrival(o.authenticate(h)), TLSConfig: tlsCfg,
		ReadHeaderTimeout: o.ReadHeaderTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		IdleTimeout: o.IdleTimeout, MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		ConnState: hl.ConnState,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if t, ok := trackedOf(c); ok {
				return context.WithValue(ctx, connKey{}, t)
			}
			return ctx
		}}
	if o.AllowUnauthenticated {
		hs.Protocols = readAheadProtocols() // the listener hands over readAheadConn (awaitRequestLine)
	}
	return hs, hl, nil
}

// isAPIServer: the handshake presented a client certificate verified against ClientCAs, with an allowed
// name when names are set (what authenticate lets through to /validate).
func (o ServeOptions) isAPIServer(cs tls.ConnectionState) bool {
	if len(cs.VerifiedChains) == 0 {
		return false
	}
	return len(o.AllowedNames) == 0 || slices.Contains(o.AllowedNames, cs.VerifiedChains[0][0].Subject.CommonName)
}

type connKey struct{}
type arrivalKey struct{}

// withArrival puts in each request's context when it arrived: for the first request of a connection,
// when the connection was accepted (its TLS handshake, and any wait for a slot, are part of the time the
// API server waits); for a later one, when the server read its headers.
func (o ServeOptions) withArrival(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := o.now()
		if c, ok := r.Context().Value(connKey{}).(*trackedConn); ok {
			if first, ok := c.firstArrival(); ok {
				at = first
			}
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), arrivalKey{}, at)))
	})
}

// requestArrival is when the request arrived (withArrival), or def when the request did not come through
// HTTPServer (an httptest server).
func requestArrival(ctx context.Context, def time.Time) time.Time {
	if at, ok := ctx.Value(arrivalKey{}).(time.Time); ok {
		return at
	}
	return def
}

// authenticate lets /healthz and /readyz through and requires a verified client certificate (with an
// allowed name, when names are set) for everything else.
func (o ServeOptions) authenticate(h http.Handler) http.Handler {
	if o.AllowUnauthenticated {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			h.ServeHTTP(w, r)
			return
		}
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			o.refused.warn("Refused a caller without a client certificate: kube-apiserver presents one only when its "+
				"--admission-control-config-file gives the webhook plugins a kubeconfig with one (docs/webhook.md); "+
				"else run with --insecure-allow-unauthenticated", "remote", r.RemoteAddr, "path", r.URL.Path)
			http.Error(w, "a client certificate is required (the API server's, see AdmissionConfiguration)", http.StatusUnauthorized)
			return
		}
		if cn := r.TLS.VerifiedChains[0][0].Subject.CommonName; !o.isAPIServer(*r.TLS) {
			o.refused.warn("Refused a client certificate whose common name is not in --client-cert-allowed-names",
				"remote", r.RemoteAddr, "path", r.URL.Path, "commonName", cn, "allowed", o.AllowedNames)
			http.Error(w, fmt.Sprintf("client certificate %q is not one of the allowed names", cn), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// refusalLog logs the callers turned away for their client certificate, at most one line a minute (a flood
// of them must not flood the log). The API server turned away is the usual misconfiguration of a new
// install, and with failurePolicy: Ignore nothing else shows it: kubectl apply just prints no warning.
type refusalLog struct {
	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	next    time.Time // no line before then
	skipped int       // refusals not logged since the last line
}

// refusalLogEvery is the least time between two lines of a refusalLog.
const refusalLogEvery = time.Minute

func (r *refusalLog) warn(msg string, args ...any) {
	if r == nil {
		return
	}
	r.mu.Lock()
	now := r.now()
	if now.Before(r.next) {
		r.skipped++
		r.mu.Unlock()
		return
	}
	skipped := r.skipped
	r.skipped, r.next = 0, now.Add(refusalLogEvery)
	r.mu.Unlock()
	if skipped > 0 {
		args = append(args, "refusedWithoutALine", skipped)
	}
	r.log.Warn(msg, args...)
}
