package webhook

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"time"
)

// requestLineMax bounds the first request line the listener reads (awaitRequestLine): the webhook's paths
// are short, and each unauthenticated place holds at most this much until its line is complete.
const requestLineMax = 4 << 10

// awaitRequestLine is how a caller proves itself when no client certificate can tell the API server
// (AllowUnauthenticated): by a complete first request line ("POST /validate HTTP/1.1", or HTTP/2's
// "PRI * HTTP/2.0"), read here, at the end of the handshake, in the handshake's goroutine.
//
// Why here and not in http.Server's hooks: with TLS 1.3 the client sends its request line right behind its
// last handshake message, so the line has often arrived, even been read into the *tls.Conn, when the
// handshake ends. http.Server reports a request only once its headers are read (ConnState StateActive),
// after the hand-off through Accept, and not at all for HTTP/2 (its hooks are skipped), so a caller that
// had sent its line stayed evictable until then; and a handshake that was done was the only proof, so
// flood connections that completed one and sent nothing held the --max-connections slots. Read here, the
// line is seen as soon as it is decrypted, and the rule holds for both protocols: until the line is
// complete the connection may be closed to make room (stageIdle: idle, or a slowloris trickling its line),
// from then on it may not (stageRequest) and it goes on to a slot.
//
// It returns the connection to serve, which gives http.Server back what was read here (readAheadConn);
// false when the connection was closed: no line within ReadHeaderTimeout, a line longer than
// requestLineMax, or closed to make room first.
func (l *handshakeListener) awaitRequestLine(tc *trackedConn, conn *tls.Conn) (net.Conn, bool) {
	if !tc.setStage(stageIdle) {
		_ = conn.Close()
		return nil, false
	}
	_ = conn.SetReadDeadline(time.Now().Add(l.requestLineTimeout))
	br := bufio.NewReaderSize(conn, requestLineMax)
	line, err := br.ReadSlice('\n')
	if err == nil && !tc.setStage(stageRequest) { // closed to make room while its line was on the way
		err = net.ErrClosed
	}
	if err != nil {
		l.log.Debug("No request line after the TLS handshake", "remote", tc.RemoteAddr().String(), "err", err)
		_ = conn.Close()
		return nil, false
	}
	_ = conn.SetReadDeadline(time.Time{}) // http.Server sets its own
	rest, _ := br.Peek(br.Buffered())
	read := append(append(make([]byte, 0, len(line)+len(rest)), line...), rest...)
	return &readAheadConn{Conn: conn, r: io.MultiReader(bytes.NewReader(read), conn)}, true
}

// readAheadConn is a *tls.Conn whose first bytes the listener read (awaitRequestLine): Read gives them
// back first. It is a net.Conn only, on purpose: http.Server serves it as it would an unencrypted
// connection (the TLS is done), HTTP/1.1 or, with Protocols.UnencryptedHTTP2, HTTP/2 from its preface
// (HTTPServer sets that with AllowUnauthenticated), which it would not were ConnectionState exposed.
type readAheadConn struct {
	net.Conn // the *tls.Conn
	r        io.Reader
}

func (c *readAheadConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// readAheadProtocols are the protocols http.Server serves on readAheadConn: HTTP/1.1, and HTTP/2 as on an
// unencrypted connection (the client negotiated "h2" in the listener's handshake); HTTP2 for *tls.Conn.
func readAheadProtocols() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	return &p
}
