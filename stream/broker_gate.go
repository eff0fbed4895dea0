package stream

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The gate stands between the broker's listening socket and kfake: it
// does the TLS handshake and the SASL exchange of each new connection
// itself, and hands kfake only the connections that passed. kfake's own
// SASL is left off: it advertises SaslHandshake v1 only, which librdkafka
// (kcat) reads as "SASL Handshake not supported by broker"; it answers a
// wrong password by closing the connection without saying why; and it
// keeps its users in the data directory and reloads them over those given
// on a later start, so a changed password did not apply.
//
// Before a client is authenticated the gate answers only what Kafka's own
// brokers answer then: ApiVersions (kfake's answer, with SaslHandshake
// v0-1 and SaslAuthenticate v0-2 advertised), SaslHandshake and
// SaslAuthenticate (KIP-152), or, after a SaslHandshake v0, the SASL
// tokens framed by their length alone. Anything else closes the
// connection, as Kafka does.

const (
	// gateTimeout bounds a connection's TLS handshake and SASL exchange.
	gateTimeout = 30 * time.Second
	// gateMaxFrame bounds a request before authentication (Kafka's
	// default for SASL is the same 512 KiB).
	gateMaxFrame = 512 << 10
)

// errGateClosed is Accept's answer once the gate is closed.
var errGateClosed = net.ErrClosed

type gate struct {
	ln     net.Listener
	tls    *tls.Config // nil: plaintext
	users  *saslUsers  // nil: no SASL
	logger *slog.Logger

	conns chan net.Conn // admitted connections, for kfake's Accept
	done  chan struct{}
	once  sync.Once

	mu      sync.Mutex
	pending map[net.Conn]struct{} // connections in their handshake
}

func newGate(ln net.Listener, tlsConfig *tls.Config, users *saslUsers, logger *slog.Logger) *gate {
	g := &gate{ln: ln, tls: tlsConfig, users: users, logger: logger,
		conns: make(chan net.Conn), done: make(chan struct{}), pending: map[net.Conn]struct{}{}}
	go g.serve()
	return g
}

// Accept returns the next admitted connection.
func (g *gate) Accept() (net.Conn, error) {
	select {
	case c := <-g.conns:
		return c, nil
	case <-g.done:
		return nil, errGateClosed
	}
}

// Close stops listening and drops the connections still in their
// handshake; admitted ones are kfake's to close.
func (g *gate) Close() error {
	var err error
	g.once.Do(func() {
		close(g.done)
		err = g.ln.Close()
		g.mu.Lock()
		for c := range g.pending {
			c.Close()
		}
		g.mu.Unlock()
	})
	return err
}

func (g *gate) Addr() net.Addr { return g.ln.Addr() }

func (g *gate) serve() {
	for {
		c, err := g.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			g.Close()
			return
		}
		g.mu.Lock()
		select {
		case <-g.done:
			g.mu.Unlock()
			c.Close()
			return
		default:
		}
		g.pending[c] = struct{}{}
		g.mu.Unlock()
		go g.admit(c)
	}
}

// hand passes c to kfake, or closes it when the gate is closed.
func (g *gate) hand(c net.Conn) bool {
	select {
	case g.conns <- c:
		return true
	case <-g.done:
		c.Close()
		return false
	}
}

// admit runs one connection's TLS handshake and SASL exchange, and hands
// it to kfake if both pass.
func (g *gate) admit(raw net.Conn) {
	defer func() {
		g.mu.Lock()
		delete(g.pending, raw)
		g.mu.Unlock()
	}()
	raw.SetDeadline(time.Now().Add(gateTimeout))
	c := raw
	if g.tls != nil {
		tc := tls.Server(raw, g.tls)
		if err := tc.Handshake(); err != nil {
			g.logger.Info("TLS handshake failed", "client", raw.RemoteAddr().String(), "err", err)
			raw.Close()
			return
		}
		c = tc
	}
	if g.users != nil {
		br := bufio.NewReader(c)
		if err := g.authenticate(c, br); err != nil {
			level := slog.LevelWarn
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				level = slog.LevelDebug
			}
			g.logger.Log(context.Background(), level, "SASL authentication failed", "client", raw.RemoteAddr().String(), "err", err)
			c.Close()
			return
		}
		if br.Buffered() > 0 {
			c = &bufferedConn{Conn: c, r: br}
		}
	}
	raw.SetDeadline(time.Time{})
	g.hand(c)
}

// bufferedConn is a connection whose first bytes were read ahead.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// requestHeader is a Kafka request header.
type requestHeader struct {
	key, version int16
	corr         int32
}

// authenticate answers c's requests until it has authenticated; an error
// means it did not, and c is to be closed.
func (g *gate) authenticate(c net.Conn, br *bufio.Reader) error {
	var (
		session saslSession
		mech    string
	)
	for {
		frame, err := readFrame(br, gateMaxFrame)
		if err != nil {
			return err
		}
		h, body, err := parseRequestHeader(frame)
		if err != nil {
			return err
		}
		switch kmsg.Key(h.key) {
		case kmsg.ApiVersions:
			resp, err := g.apiVersions(frame, h.version)
			if err != nil {
				return err
			}
			if _, err := c.Write(resp); err != nil {
				return err
			}

		case kmsg.SASLHandshake:
			r, err := readRequest(h, body, 1)
			if err != nil {
				return err
			}
			req := r.(*kmsg.SASLHandshakeRequest)
			resp := &kmsg.SASLHandshakeResponse{Version: h.version, SupportedMechanisms: g.users.mechanisms()}
			s, ok := g.users.session(req.Mechanism)
			switch {
			case session != nil:
				resp.ErrorCode = kerr.IllegalSaslState.Code
			case !ok:
				resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
			}
			if err := writeResponse(c, h.corr, resp); err != nil {
				return err
			}
			if resp.ErrorCode == kerr.IllegalSaslState.Code {
				return errors.New("a second SaslHandshake")
			}
			if !ok {
				continue // the client may try another mechanism
			}
			session, mech = s, req.Mechanism
			if h.version == 0 {
				return g.exchangeFramed(c, br, session, mech)
			}

		case kmsg.SASLAuthenticate:
			r, err := readRequest(h, body, 2)
			if err != nil {
				return err
			}
			req := r.(*kmsg.SASLAuthenticateRequest)
			resp := &kmsg.SASLAuthenticateResponse{Version: h.version}
			if session == nil {
				resp.ErrorCode = kerr.IllegalSaslState.Code
				msg := "SaslAuthenticate before SaslHandshake"
				resp.ErrorMessage = &msg
				writeResponse(c, h.corr, resp)
				return errors.New(msg)
			}
			answer, done, err := session.step(req.SASLAuthBytes)
			if err != nil {
				err = refusal(err, mech, session)
				resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
				msg := "Authentication failed: " + err.Error()
				resp.ErrorMessage = &msg
				writeResponse(c, h.corr, resp)
				return err
			}
			resp.SASLAuthBytes = answer
			if err := writeResponse(c, h.corr, resp); err != nil {
				return err
			}
			if done {
				g.logger.Debug("SASL authenticated", "client", c.RemoteAddr().String(), "mechanism", mech, "user", session.user())
				return nil
			}

		default:
			return fmt.Errorf("a %s request (key %d) before SASL authentication: is the client set up for SASL?", kmsg.NameForKey(h.key), h.key)
		}
	}
}

// exchangeFramed runs the SASL exchange that follows a SaslHandshake v0:
// the client's tokens and the broker's answers framed by their length
// alone. A refusal can only close the connection.
func (g *gate) exchangeFramed(c net.Conn, br *bufio.Reader, s saslSession, mech string) error {
	for {
		token, err := readFrame(br, gateMaxFrame)
		if err != nil {
			return err
		}
		answer, done, err := s.step(token)
		if err != nil {
			return refusal(err, mech, s)
		}
		out := binary.BigEndian.AppendUint32(nil, uint32(len(answer)))
		if _, err := c.Write(append(out, answer...)); err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// refusal says why a client's SASL exchange failed.
func refusal(err error, mech string, s saslSession) error {
	return fmt.Errorf("%w (SASL %s, user %q)", err, mech, s.user())
}

// apiVersions has kfake answer an ApiVersions request over a connection of
// its own, and returns that answer with the SASL requests advertised as
// the gate serves them.
func (g *gate) apiVersions(frame []byte, version int16) ([]byte, error) {
	mine, kfakes := net.Pipe()
	defer mine.Close()
	if !g.hand(kfakes) {
		return nil, errGateClosed
	}
	mine.SetDeadline(time.Now().Add(gateTimeout))
	if _, err := mine.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(frame))), frame...)); err != nil {
		return nil, fmt.Errorf("asking the broker for its API versions: %w", err)
	}
	answer, err := readFrame(bufio.NewReader(mine), 1<<20)
	if err != nil || len(answer) < 4 {
		return nil, fmt.Errorf("asking the broker for its API versions: %v", err)
	}
	raw := append(binary.BigEndian.AppendUint32(nil, uint32(len(answer))), answer...)
	resp := kmsg.ApiVersionsResponse{Version: version}
	if err := resp.ReadFrom(answer[4:]); err != nil || resp.ErrorCode != 0 {
		return raw, nil // an error answer (a version too new): as kfake gave it
	}
	advertise(&resp, kmsg.SASLHandshake, 0, 1)
	advertise(&resp, kmsg.SASLAuthenticate, 0, 2)
	out := resp.AppendTo(append([]byte(nil), answer[:4]...))
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(out))), out...), nil
}

func advertise(resp *kmsg.ApiVersionsResponse, key kmsg.Key, minVersion, maxVersion int16) {
	for i := range resp.ApiKeys {
		if resp.ApiKeys[i].ApiKey == int16(key) {
			resp.ApiKeys[i].MinVersion, resp.ApiKeys[i].MaxVersion = minVersion, maxVersion
			return
		}
	}
	k := kmsg.NewApiVersionsResponseApiKey()
	k.ApiKey, k.MinVersion, k.MaxVersion = int16(key), minVersion, maxVersion
	resp.ApiKeys = append(resp.ApiKeys, k)
}

// readFrame reads one length-prefixed frame of at most limit bytes.
func readFrame(r io.Reader, limit int) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > uint32(limit) {
		return nil, fmt.Errorf("a %d-byte request before authentication: the limit is %d (is this a Kafka client?)", n, limit)
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(r, frame); err != nil {
		return nil, err
	}
	return frame, nil
}

// parseRequestHeader splits a request into its header and body.
func parseRequestHeader(frame []byte) (requestHeader, []byte, error) {
	r := kbin.Reader{Src: frame}
	h := requestHeader{key: r.Int16(), version: r.Int16(), corr: r.Int32()}
	r.NullableString() // client id
	req := kmsg.RequestForKey(h.key)
	if req == nil {
		return h, nil, fmt.Errorf("a request of unknown API key %d", h.key)
	}
	req.SetVersion(h.version)
	if req.IsFlexible() {
		kmsg.SkipTags(&r)
	}
	if !r.Ok() {
		return h, nil, errors.New("a truncated request header")
	}
	return h, r.Src, nil
}

// readRequest parses body as the request h heads, refusing a version
// above maxVersion.
func readRequest(h requestHeader, body []byte, maxVersion int16) (kmsg.Request, error) {
	name := kmsg.NameForKey(h.key)
	if h.version < 0 || h.version > maxVersion {
		return nil, fmt.Errorf("%s v%d: the broker serves v0-%d", name, h.version, maxVersion)
	}
	req := kmsg.RequestForKey(h.key)
	req.SetVersion(h.version)
	if err := req.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return req, nil
}

// writeResponse writes resp, framed, as the answer to request corr.
func writeResponse(w io.Writer, corr int32, resp kmsg.Response) error {
	buf := make([]byte, 8, 64)
	if resp.IsFlexible() && resp.Key() != int16(kmsg.ApiVersions) {
		buf = append(buf, 0) // no tagged fields in the response header
	}
	buf = resp.AppendTo(buf)
	binary.BigEndian.PutUint32(buf[:4], uint32(len(buf)-4))
	binary.BigEndian.PutUint32(buf[4:8], uint32(corr))
	_, err := w.Write(buf)
	return err
}
