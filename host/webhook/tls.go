package webhook

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// CertReloader serves the certificate in a pair of PEM files and reloads it when either file changes
// (checked at most once per second, on a TLS handshake): a renewed Secret mounted into the pod, or a
// cert-manager rotation, takes effect without a restart. A pair that fails to load keeps the previous one.
type CertReloader struct {
	certFile, keyFile string
	metrics           *Metrics
	onError           func(error)

	mu        sync.Mutex
	cert      *tls.Certificate
	certStamp string
	lastCheck time.Time
}

// NewCertReloader loads the pair once (an error if it cannot).
func NewCertReloader(certFile, keyFile string, m *Metrics, onError func(error)) (*CertReloader, error) {
	r := &CertReloader{certFile: certFile, keyFile: keyFile, metrics: m, onError: onError}
	if err := r.reload(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *CertReloader) stamp() (string, error) {
	var s string
	for _, f := range []string{r.certFile, r.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		s += fmt.Sprintf("%s:%d:%d;", f, fi.Size(), fi.ModTime().UnixNano())
	}
	return s, nil
}

func (r *CertReloader) reload() error {
	st, err := r.stamp()
	if err == nil && st == r.certStamp && r.cert != nil {
		return nil
	}
	if err == nil {
		var c tls.Certificate
		c, err = tls.LoadX509KeyPair(r.certFile, r.keyFile)
		if err == nil {
			r.cert, r.certStamp = &c, st
			if r.metrics != nil {
				r.metrics.CertReloads.WithLabelValues("ok").Inc()
			}
			return nil
		}
	}
	if r.metrics != nil {
		r.metrics.CertReloads.WithLabelValues("error").Inc()
	}
	return fmt.Errorf("loading the serving certificate %s / %s: %w", r.certFile, r.keyFile, err)
}

// GetCertificate is tls.Config.GetCertificate.
func (r *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.lastCheck) >= time.Second {
		r.lastCheck = time.Now()
		if err := r.reload(); err != nil && r.onError != nil {
			r.onError(err)
		}
	}
	return r.cert, nil
}

// TLSConfig returns a server configuration using the reloader (TLS 1.2 or later).
func (r *CertReloader) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
}
