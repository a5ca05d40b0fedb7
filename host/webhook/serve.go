package webhook

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"golang.org/x/net/netutil"
)

// ServeOptions bound what a caller can hold of the webhook's HTTPS endpoint and say who may call it.
// Slow clients were never timed out (1000 trickling TLS connections were held for 150 s), and /validate
// and /preview answered anyone, recording Events on any named set.
type ServeOptions struct {
	// ReadHeaderTimeout bounds the TLS handshake and the request headers (default 5s); ReadTimeout the
	// whole request, body included (default 15s: the API server sends a review at once); WriteTimeout the
	// answer (default 35s: the longest review the API server allows is 30s); IdleTimeout a kept-alive
	// connection between requests (default 90s).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxConnections open at once (default 512); more wait to be accepted.
	MaxConnections int
	// ClientCAs verify the client certificate the API server presents (AdmissionConfiguration
	// kubeConfigFile); /validate and /preview answer 401 without one. Nil only with AllowUnauthenticated.
	ClientCAs *x509.CertPool
	// AllowedNames, when set, are the only client certificate common names accepted (as kube-apiserver's
	// --requestheader-allowed-names).
	AllowedNames []string
	// AllowUnauthenticated serves /validate and /preview to any caller (for clusters whose API server
	// cannot present a client certificate; restrict who reaches the port by other means).
	AllowUnauthenticated bool
}

// Defaults of ServeOptions.
const (
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 15 * time.Second
	DefaultWriteTimeout      = 35 * time.Second
	DefaultIdleTimeout       = 90 * time.Second
	DefaultMaxConnections    = 512
)

func (o ServeOptions) withDefaults() ServeOptions {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&o.ReadTimeout, DefaultReadTimeout)
	def(&o.WriteTimeout, DefaultWriteTimeout)
	def(&o.IdleTimeout, DefaultIdleTimeout)
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
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

// HTTPServer returns the server of the webhook's HTTPS endpoint, with its timeouts, its TLS config (the
// serving certificate from tlsCfg, client certificates verified against ClientCAs) and the handler
// behind the client check; and ln capped at MaxConnections. Serve it with ServeTLS(ln, "", "").
func (o ServeOptions) HTTPServer(h http.Handler, tlsCfg *tls.Config, ln net.Listener, log *slog.Logger) (*http.Server, net.Listener, error) {
	if o.ClientCAs == nil && !o.AllowUnauthenticated {
		return nil, nil, fmt.Errorf("no client CA: the webhook answers only the API server, which it knows by its client certificate")
	}
	o = o.withDefaults()
	tlsCfg = tlsCfg.Clone()
	if o.ClientCAs != nil {
		tlsCfg.ClientCAs = o.ClientCAs
		// Probes (/healthz, /readyz) come without a certificate; the handler requires one elsewhere.
		tlsCfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	hs := &http.Server{Handler: o.authenticate(h), TLSConfig: tlsCfg,
		ReadHeaderTimeout: o.ReadHeaderTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		IdleTimeout: o.IdleTimeout, MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	return hs, netutil.LimitListener(ln, o.MaxConnections), nil
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
			http.Error(w, "a client certificate is required (the API server's, see AdmissionConfiguration)", http.StatusUnauthorized)
			return
		}
		if cn := r.TLS.VerifiedChains[0][0].Subject.CommonName; len(o.AllowedNames) > 0 && !slices.Contains(o.AllowedNames, cn) {
			http.Error(w, fmt.Sprintf("client certificate %q is not one of the allowed names", cn), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
