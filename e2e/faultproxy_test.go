//go:build e2e

package e2e

// faultProxy sits between one `ordinal controller` and kube-apiserver and breaks the conversation on
// purpose, at seeded random rates: the faults a controller meets on a busy or sick control plane. The
// controller talks plain HTTP to the proxy (its kubeconfig has no credentials); the proxy forwards with
// the suite's credentials. Only the controller goes through it: the tests' own reads and the invariant
// watchers talk to kube-apiserver directly.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// faultKind names one kind of injected fault (the rows of the chaos table).
type faultKind string

const (
	faultConflict    faultKind = "409 conflict"         // a write refused as if its resourceVersion were stale
	faultThrottle    faultKind = "429 throttled"        // any request, with Retry-After: 1
	faultError       faultKind = "500 error"            // any request, refused before it reaches the server
	faultLostReply   faultKind = "timeout after commit" // a write done by the server, its answer replaced by 504
	faultWatchGone   faultKind = "watch 410 gone"       // a watch refused as expired: the informer lists again
	faultWatchDrop   faultKind = "watch dropped"        // an open watch closed after a random time
	faultWatchDelay  faultKind = "watch delayed"        // a watch whose events arrive late (stale caches)
	faultPartition   faultKind = "partitioned request"  // a request held by a partition until its client gave up
	faultKill        faultKind = "controller SIGKILL"
	faultEtcdRestart faultKind = "etcd restart"
)

var allFaultKinds = []faultKind{faultConflict, faultThrottle, faultError, faultLostReply, faultWatchGone,
	faultWatchDrop, faultWatchDelay, faultPartition, faultKill, faultEtcdRestart}

// faultRates are the probabilities per request (watch rates per watch opened).
type faultRates struct {
	conflict, throttle, error, lostReply float64 // per request (conflict and lostReply: writes only)
	watchGone, watchDrop, watchDelay     float64 // per watch
	maxDelay                             time.Duration
}

func (r faultRates) String() string {
	return fmt.Sprintf("409 %.2f, 429 %.2f, 500 %.2f, lost reply %.2f, watch gone %.2f, drop %.2f, delay %.2f (≤%s)",
		r.conflict, r.throttle, r.error, r.lostReply, r.watchGone, r.watchDrop, r.watchDelay, r.maxDelay)
}

// faultCounts counts injected faults by kind.
type faultCounts struct {
	mu sync.Mutex
	n  map[faultKind]int
}

func (c *faultCounts) add(k faultKind, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[faultKind]int{}
	}
	c.n[k] += n
}

func (c *faultCounts) get(k faultKind) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

func (c *faultCounts) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	for _, k := range allFaultKinds {
		if c.n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, c.n[k]))
		}
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

type faultProxy struct {
	rates    faultRates
	counts   *faultCounts
	upstream string // https://127.0.0.1:port
	rt       http.RoundTripper
	srv      *http.Server
	addr     string
	requests atomic.Int64

	mu   sync.Mutex
	rng  *rand.Rand
	part *partition    // nil: none
	cut  chan struct{} // closed when an all-traffic partition begins: the watches open then end
}

// partition is a network partition between the controller and the API server, of its Lease writes alone
// or of all its traffic: the requests it holds go nowhere until it heals (then on, as delayed packets) or
// their client gives up (then never: a request that reaches the API server after its client gave up is the
// one thing no Lease can fence); all traffic, it also cuts the watches open when it begins.
type partition struct {
	leasesOnly bool
	healed     chan struct{}
}

// partition starts a partition (see partition) and returns its heal.
func (p *faultProxy) partition(leasesOnly bool) (heal func()) {
	pt := &partition{leasesOnly: leasesOnly, healed: make(chan struct{})}
	p.mu.Lock()
	p.part = pt
	if !leasesOnly {
		close(p.cut)
		p.cut = make(chan struct{})
	}
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		if p.part == pt {
			p.part = nil
		}
		p.mu.Unlock()
		close(pt.healed)
	}
}

// held returns the partition that holds r, if any.
func (p *faultProxy) held(r *http.Request, leaseWrite bool) *partition {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.part == nil || (p.part.leasesOnly && !leaseWrite) {
		return nil
	}
	return p.part
}

// startFaultProxy listens on a free local port; it stops when the test ends.
func startFaultProxy(t *testing.T, seed int64, rates faultRates, counts *faultCounts) *faultProxy {
	t.Helper()
	rt, err := rest.TransportFor(cfg.rest)
	if err != nil {
		t.Fatalf("fault proxy transport: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fault proxy: %v", err)
	}
	p := &faultProxy{rates: rates, counts: counts, upstream: strings.TrimRight(cfg.rest.Host, "/"), rt: rt,
		addr: l.Addr().String(), rng: rand.New(rand.NewPCG(uint64(seed), 0x0fa17)), cut: make(chan struct{})}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go p.srv.Serve(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.srv.Shutdown(ctx)
		_ = p.srv.Close()
	})
	return p
}

// kubeconfig writes a kubeconfig that points at the proxy and returns its path.
func (p *faultProxy) kubeconfig(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "kubeconfig-faultproxy")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: chaos, cluster: {server: "http://%s"}}]
users: [{name: chaos, user: {}}]
contexts: [{name: chaos, context: {cluster: chaos, user: chaos}}]
current-context: chaos
`, p.addr)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (p *faultProxy) roll(rate float64) bool {
	if rate <= 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rng.Float64() < rate
}

func (p *faultProxy) duration(max time.Duration) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Duration(p.rng.Int64N(int64(max) + 1))
}

// status answers with a metav1.Status, as kube-apiserver does.
func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	if code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d}`,
		"chaos: "+msg, reason, code)
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	write := r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch || r.Method == http.MethodDelete
	watching := r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1"
	// The lease of leader election and discovery are left alone by the rates: they are not what they test.
	lease := strings.Contains(r.URL.Path, "/leases")
	if pt := p.held(r, lease && write); pt != nil {
		// read the body first: only then does the server notice the client hanging up (r.Context())
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		select {
		case <-pt.healed:
		case <-r.Context().Done():
			p.counts.add(faultPartition, 1)
			return
		}
	}
	p.mu.Lock()
	cut := p.cut
	p.mu.Unlock()
	switch {
	case lease:
	case watching && p.roll(p.rates.watchGone):
		p.counts.add(faultWatchGone, 1)
		status(w, http.StatusGone, "Expired", "too old resource version")
		return
	case p.roll(p.rates.throttle):
		p.counts.add(faultThrottle, 1)
		status(w, http.StatusTooManyRequests, "TooManyRequests", "too many requests")
		return
	case p.roll(p.rates.error):
		p.counts.add(faultError, 1)
		status(w, http.StatusInternalServerError, "InternalError", "internal error")
		return
	case (r.Method == http.MethodPut || r.Method == http.MethodPatch) && p.roll(p.rates.conflict):
		p.counts.add(faultConflict, 1)
		status(w, http.StatusConflict, "Conflict", "the object has been modified; please apply your changes to the latest version and try again")
		return
	}

	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream+r.URL.RequestURI(), r.Body)
	if err != nil {
		status(w, http.StatusBadGateway, "InternalError", err.Error())
		return
	}
	out.Header = r.Header.Clone()
	out.ContentLength = r.ContentLength
	resp, err := p.rt.RoundTrip(out)
	if err != nil {
		status(w, http.StatusBadGateway, "InternalError", "proxy: "+err.Error())
		return
	}
	defer resp.Body.Close()

	if write && !lease && resp.StatusCode < 300 && p.roll(p.rates.lostReply) {
		// the server did the write; the client is told it timed out (after a while, as a real timeout)
		io.Copy(io.Discard, resp.Body)
		time.Sleep(p.duration(p.rates.maxDelay))
		p.counts.add(faultLostReply, 1)
		status(w, http.StatusGatewayTimeout, "Timeout", "the server was unable to return a response in the time allotted")
		return
	}

	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	if !watching || resp.StatusCode != http.StatusOK {
		io.Copy(w, resp.Body)
		return
	}

	// a watch: stream it, maybe late, maybe cut off (not the Leases': streamed as they come)
	var deadline <-chan time.Time
	if !lease && p.roll(p.rates.watchDrop) {
		tm := time.NewTimer(500*time.Millisecond + p.duration(5*time.Second))
		defer tm.Stop()
		deadline = tm.C
	}
	delay := !lease && p.roll(p.rates.watchDelay)
	if delay {
		p.counts.add(faultWatchDelay, 1)
	}
	f, _ := w.(http.Flusher)
	chunks := make(chan []byte)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := resp.Body.Read(buf)
			if n > 0 {
				select {
				case chunks <- buf[:n]:
				case <-r.Context().Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		select {
		case c, ok := <-chunks:
			if !ok {
				return
			}
			if delay {
				// in order, late: what the client sees is a consistent past
				time.Sleep(p.duration(p.rates.maxDelay))
			}
			if _, err := w.Write(c); err != nil {
				return
			}
			if f != nil {
				f.Flush()
			}
		case <-deadline:
			p.counts.add(faultWatchDrop, 1)
			return
		case <-cut:
			return
		case <-r.Context().Done():
			return
		}
	}
}
