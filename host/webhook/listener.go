package webhook

import (
	"container/list"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// handshakeListener accepts TCP connections at once, completes their TLS handshake itself and hands
// http.Server only *tls.Conn whose handshake is done. It keeps two kinds of connection apart (issue 32,
// finding 2: 1,000 idle TCP connections held every --max-connections slot, taken before the handshake,
// and a review from the API server waited 5 s for one, past its timeoutSeconds, so the edit went through
// unchecked):
//
//   - connections not known to be the API server's: in the TLS handshake (at most handshakeTimeout), or done
//     without a verified client certificate of an allowed name (probes; /validate answers them 401). At
//     most maxUnauth are open. A new one closes the oldest that has shown nothing (evictable: no complete
//     ClientHello yet, or done and between requests), so idle or slow peers cannot keep a new connection
//     from its handshake; one whose handshake is under way (its ClientHello read) or with a request in
//     flight is never closed to make room: under a flood, the API server's own connection is one of them
//     while it proves itself. When every place is held so, the new connection is refused instead.
//   - the API server's (a verified client certificate, with an allowed name when names are set; with
//     AllowUnauthenticated, any connection whose first request line the listener read, awaitRequestLine:
//     until then it is evictable, as idle): at most len(slots) open, as --max-connections; more wait for
//     a slot after their handshake (or line). Nothing else takes a slot, and they are never closed to make
//     room.
type handshakeListener struct {
	inner            net.Listener
	cfg              *tls.Config
	trusted          func(tls.ConnectionState) bool
	handshakeTimeout time.Duration
	maxUnauth        int
	slots            chan struct{}
	// requestLineTimeout, with AllowUnauthenticated, bounds the wait for a connection's first request line,
	// its proof (awaitRequestLine); 0 when a client certificate is the proof.
	requestLineTimeout time.Duration
	now                func() time.Time
	log                *slog.Logger
	refused            *refusalLog         // nil: not logged
	dropped            func(reason string) // nil: not counted

	ready chan net.Conn
	ctx   context.Context // done when the listener is closed
	stop  context.CancelFunc

	mu     sync.Mutex
	unauth *list.List // of *trackedConn, oldest first
	err    error      // why the accept loop ended
}

// Reasons a connection is dropped, the `reason` label of ordinal_webhook_connections_dropped_total.
const (
	DropUnauthenticatedFull = "unauthenticated_full" // the oldest evictable unauthenticated connection, to make room for a new one
	DropRefusedFull         = "refused_full"         // a new connection, every unauthenticated place held by one not evictable
	DropHandshakeTimeout    = "handshake_timeout"    // no TLS handshake within --tls-handshake-timeout
	DropHandshakeFailed     = "handshake_failed"     // not TLS, or a certificate the handshake refused
)

func newHandshakeListener(inner net.Listener, cfg *tls.Config, trusted func(tls.ConnectionState) bool, o ServeOptions, log *slog.Logger, dropped func(string)) *handshakeListener {
	ctx, stop := context.WithCancel(context.Background())
	now := o.now
	if now == nil {
		now = time.Now
	}
	l := &handshakeListener{inner: inner, trusted: trusted, handshakeTimeout: o.HandshakeTimeout,
		maxUnauth: o.MaxUnauthenticatedConnections, slots: make(chan struct{}, o.MaxConnections), now: now, log: log,
		refused: o.refused, dropped: dropped, ready: make(chan net.Conn), ctx: ctx, stop: stop, unauth: list.New()}
	if o.AllowUnauthenticated {
		l.requestLineTimeout = o.ReadHeaderTimeout
	}
	l.cfg = l.markingHello(cfg)
	go l.acceptLoop()
	return l
}

// trackedConn is the TCP connection under a *tls.Conn: it knows when it was accepted (the arrival of its
// first request) and gives back its place, unauthenticated or slot, when closed.
type trackedConn struct {
	net.Conn
	l        *handshakeListener
	accepted time.Time
	served   atomic.Bool // a request was read on it: later ones arrive when their headers do

	// guarded by l.mu
	elem    *list.Element // in l.unauth; nil when not
	stage   stage         // while in l.unauth
	evicted bool          // closed to make room
	slot    bool          // holds one of l.slots
	closed  bool
}

// stage is how far an unauthenticated connection has come, which decides whether it may be closed to make
// room for a new one (evictable). With AllowUnauthenticated a connection is stageIdle from its handshake's
// end until its first request line is read, then stageRequest until it leaves for a slot (awaitRequestLine).
type stage int

const (
	stageAccepted stage = iota // no complete ClientHello yet: evictable
	stageHello                 // its ClientHello read, the handshake under way: closed only by handshakeTimeout
	stageIdle                  // handshake done without the API server's certificate, no request in flight: evictable
	stageRequest               // done so, a request in flight (its headers read): closed only by the server's timeouts
)

func (s stage) evictable() bool { return s == stageAccepted || s == stageIdle }

// trackedOf is the trackedConn under a connection the listener returned.
func trackedOf(c net.Conn) (*trackedConn, bool) {
	if ra, ok := c.(*readAheadConn); ok {
		c = ra.Conn
	}
	tc, ok := c.(*tls.Conn)
	if !ok {
		return nil, false
	}
	t, ok := tc.NetConn().(*trackedConn)
	return t, ok
}

// setStage moves c to s, while it is among the unauthenticated connections (false: it is not, closed to
// make room or by the listener's Close).
func (c *trackedConn) setStage(s stage) bool {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	if c.elem == nil {
		return false
	}
	c.stage = s
	return true
}

// Close closes the connection and gives back its place.
func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	if c.closed {
		c.l.mu.Unlock()
		return err
	}
	c.closed = true
	if c.elem != nil {
		c.l.unauth.Remove(c.elem)
		c.elem = nil
	}
	slot := c.slot
	c.slot = false
	c.l.mu.Unlock()
	if slot {
		<-c.l.slots
	}
	return err
}

// firstArrival returns when the connection was accepted, for its first request only.
func (c *trackedConn) firstArrival() (time.Time, bool) {
	if c.served.Swap(true) {
		return time.Time{}, false
	}
	return c.accepted, true
}

func (l *handshakeListener) acceptLoop() {
	var delay time.Duration
	for {
		c, err := l.inner.Accept()
		if err != nil {
			if isTemporary(err) && l.ctx.Err() == nil {
				// as net/http: back off on EMFILE and the like rather than spin or stop serving
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				l.log.Debug("Accept failed; retrying", "err", err, "delay", delay)
				select {
				case <-time.After(delay):
					continue
				case <-l.ctx.Done():
				}
			}
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			l.stop()
			return
		}
		delay = 0
		tc := &trackedConn{Conn: c, l: l, accepted: l.now()}
		if l.admit(tc) {
			go l.handshake(tc)
		}
	}
}

// isTemporary: an accept error worth retrying (too many open files, a connection aborted before it was
// accepted), as net/http judges it.
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// admit puts a new connection among the unauthenticated ones. When they are full it closes the oldest
// evictable one to make room, or, when none is, refuses the new one (false: closed).
func (l *handshakeListener) admit(tc *trackedConn) bool {
	var victim *trackedConn
	l.mu.Lock()
	if l.unauth.Len() >= l.maxUnauth {
		victim = l.oldestEvictable()
		if victim == nil {
			l.mu.Unlock()
			l.drop(DropRefusedFull)
			_ = tc.Close()
			return false
		}
		l.unauth.Remove(victim.elem)
		victim.elem, victim.evicted = nil, true
	}
	tc.elem = l.unauth.PushBack(tc)
	l.mu.Unlock()
	if victim != nil {
		l.drop(DropUnauthenticatedFull)
		_ = victim.Close()
	}
	return true
}

// oldestEvictable is the oldest unauthenticated connection that may be closed to make room, or nil.
// l.mu is held.
func (l *handshakeListener) oldestEvictable() *trackedConn {
	for e := l.unauth.Front(); e != nil; e = e.Next() {
		if c := e.Value.(*trackedConn); c.stage.evictable() {
			return c
		}
	}
	return nil
}

// markingHello returns cfg, marking each connection whose ClientHello it reads as under way (stageHello)
// before cfg's own GetConfigForClient, if any, answers.
func (l *handshakeListener) markingHello(cfg *tls.Config) *tls.Config {
	cfg = cfg.Clone()
	next := cfg.GetConfigForClient
	cfg.GetConfigForClient = func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
		if tc, ok := hi.Conn.(*trackedConn); ok {
			tc.setStage(stageHello)
		}
		if next != nil {
			return next(hi)
		}
		return nil, nil
	}
	return cfg
}

// ConnState is http.Server.ConnState: an unauthenticated connection with a request in flight is not
// evictable; between requests it is again.
func (l *handshakeListener) ConnState(c net.Conn, s http.ConnState) {
	tc, ok := trackedOf(c)
	if !ok {
		return
	}
	switch s {
	case http.StateActive:
		tc.setStage(stageRequest)
	case http.StateIdle:
		tc.setStage(stageIdle)
	}
}

func (l *handshakeListener) drop(reason string) {
	if l.dropped != nil {
		l.dropped(reason)
	}
}

func (l *handshakeListener) handshake(tc *trackedConn) {
	conn := tls.Server(tc, l.cfg)
	ctx, cancel := context.WithTimeout(l.ctx, l.handshakeTimeout)
	_ = tc.SetDeadline(time.Now().Add(l.handshakeTimeout)) // HandshakeContext also closes the conn at ctx's deadline
	err := conn.HandshakeContext(ctx)
	cancel()
	if err != nil {
		l.mu.Lock()
		evicted := tc.evicted
		l.mu.Unlock()
		switch {
		case evicted, l.ctx.Err() != nil:
		case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
			l.drop(DropHandshakeTimeout)
		default:
			l.drop(DropHandshakeFailed)
			var ve *tls.CertificateVerificationError
			if errors.As(err, &ve) && len(ve.UnverifiedCertificates) > 0 {
				c := ve.UnverifiedCertificates[0]
				l.refused.warn("Refused a client certificate that --client-ca-file does not verify: is that file the CA "+
					"of the client certificate kube-apiserver presents to webhooks (docs/webhook.md)?",
					"remote", tc.RemoteAddr().String(), "commonName", c.Subject.CommonName, "issuer", c.Issuer.CommonName, "err", ve.Err)
			}
			var re tls.RecordHeaderError
			if errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader) {
				_, _ = io.WriteString(re.Conn, "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
			}
		}
		l.log.Debug("TLS handshake failed", "remote", tc.RemoteAddr().String(), "err", err)
		_ = conn.Close()
		return
	}
	_ = tc.SetDeadline(time.Time{}) // http.Server sets its own from here
	var served net.Conn = conn
	if l.requestLineTimeout > 0 {
		var ok bool
		if served, ok = l.awaitRequestLine(tc, conn); !ok {
			return
		}
	}
	if !l.trusted(conn.ConnectionState()) {
		tc.setStage(stageIdle)
	} else {
		l.mu.Lock()
		if tc.elem != nil {
			l.unauth.Remove(tc.elem)
			tc.elem = nil
		}
		gone := tc.closed || tc.evicted // closed (the listener's Close) as its handshake ended
		l.mu.Unlock()
		if gone {
			_ = conn.Close()
			return
		}
		select {
		case l.slots <- struct{}{}:
		case <-l.ctx.Done():
			_ = conn.Close()
			return
		}
		l.mu.Lock()
		closed := tc.closed
		tc.slot = !closed
		l.mu.Unlock()
		if closed { // closed while it waited for the slot: give it back
			<-l.slots
			return
		}
	}
	select {
	case l.ready <- served:
	case <-l.ctx.Done():
		_ = conn.Close()
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// looksLikeHTTP is net/http's test for a plain-HTTP request sent to the TLS port.
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}

// Accept returns the next connection whose TLS handshake is done.
func (l *handshakeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.ctx.Done():
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.err != nil && !errors.Is(l.err, net.ErrClosed) {
			return nil, l.err
		}
		return nil, net.ErrClosed
	}
}

// Close stops accepting and closes the connections still in their handshake.
func (l *handshakeListener) Close() error {
	l.stop()
	err := l.inner.Close()
	l.mu.Lock()
	var pending []*trackedConn
	for e := l.unauth.Front(); e != nil; e = e.Next() {
		pending = append(pending, e.Value.(*trackedConn))
	}
	l.mu.Unlock()
	for _, c := range pending {
		_ = c.Close()
	}
	return err
}

func (l *handshakeListener) Addr() net.Addr { return l.inner.Addr() }
