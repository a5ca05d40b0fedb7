package webhook

import (
	"container/list"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
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
//     most maxUnauth are open; a new one closes the oldest, so idle or slow peers cannot keep a new
//     connection from its handshake.
//   - the API server's (a verified client certificate, with an allowed name when names are set; with
//     AllowUnauthenticated, any connection whose handshake is done): at most len(slots) open, as
//     --max-connections; more wait for a slot after their handshake. Nothing else takes a slot, and they
//     are never closed to make room.
type handshakeListener struct {
	inner            net.Listener
	cfg              *tls.Config
	trusted          func(tls.ConnectionState) bool
	handshakeTimeout time.Duration
	maxUnauth        int
	slots            chan struct{}
	now              func() time.Time
	log              *slog.Logger
	dropped          func(reason string) // nil: not counted

	ready chan net.Conn
	ctx   context.Context // done when the listener is closed
	stop  context.CancelFunc

	mu     sync.Mutex
	unauth *list.List // of *trackedConn, oldest first
	err    error      // why the accept loop ended
}

// Reasons a connection is dropped, the `reason` label of ordinal_webhook_connections_dropped_total.
const (
	DropUnauthenticatedFull = "unauthenticated_full" // the oldest unauthenticated connection, to make room for a new one
	DropHandshakeTimeout    = "handshake_timeout"    // no TLS handshake within --tls-handshake-timeout
	DropHandshakeFailed     = "handshake_failed"     // not TLS, or a certificate the handshake refused
)

func newHandshakeListener(inner net.Listener, cfg *tls.Config, trusted func(tls.ConnectionState) bool, o ServeOptions, log *slog.Logger, dropped func(string)) *handshakeListener {
	ctx, stop := context.WithCancel(context.Background())
	now := o.now
	if now == nil {
		now = time.Now
	}
	l := &handshakeListener{inner: inner, cfg: cfg, trusted: trusted, handshakeTimeout: o.HandshakeTimeout,
		maxUnauth: o.MaxUnauthenticatedConnections, slots: make(chan struct{}, o.MaxConnections), now: now, log: log,
		dropped: dropped, ready: make(chan net.Conn), ctx: ctx, stop: stop, unauth: list.New()}
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
	evicted bool          // closed to make room
	slot    bool          // holds one of l.slots
	closed  bool
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
		l.admit(tc)
		go l.handshake(tc)
	}
}

// isTemporary: an accept error worth retrying (too many open files, a connection aborted before it was
// accepted), as net/http judges it.
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// admit puts a new connection among the unauthenticated ones, closing the oldest when they are full.
func (l *handshakeListener) admit(tc *trackedConn) {
	var victim *trackedConn
	l.mu.Lock()
	if l.unauth.Len() >= l.maxUnauth {
		front := l.unauth.Front()
		victim = front.Value.(*trackedConn)
		l.unauth.Remove(front)
		victim.elem, victim.evicted = nil, true
	}
	tc.elem = l.unauth.PushBack(tc)
	l.mu.Unlock()
	if victim != nil {
		l.drop(DropUnauthenticatedFull)
		_ = victim.Close()
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
	if l.trusted(conn.ConnectionState()) {
		l.mu.Lock()
		if tc.elem != nil {
			l.unauth.Remove(tc.elem)
			tc.elem = nil
		}
		gone := tc.closed || tc.evicted // closed to make room as its handshake ended
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
	case l.ready <- conn:
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
