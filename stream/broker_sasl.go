package stream

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"strings"
)

// The broker's side of SASL PLAIN (RFC 4616) and SCRAM-SHA-256 and
// SCRAM-SHA-512 (RFC 5802, RFC 7677, as Kafka uses them: no channel
// binding). The gate (broker_gate.go) carries the messages; this file
// checks them.

// scramIterations is the PBKDF2 iteration count of the salted passwords:
// Kafka's least, which every client accepts.
const scramIterations = 4096

// errBadCredentials is the one answer to an unknown user or a wrong
// password, so that a client cannot tell which it was.
var errBadCredentials = errors.New("invalid credentials")

// saslUsers are the credentials the broker checks, made once at start from
// BrokerConfig.Users: PLAIN keeps a digest of the password, SCRAM the
// stored and server keys of a freshly salted one. Nothing is written to
// disk, so a changed password applies from the next start.
type saslUsers struct {
	plain map[string][32]byte             // user → SHA-256 of the password
	scram map[string]map[string]scramKeys // mechanism → user → keys
}

type scramKeys struct {
	salt                 []byte
	iterations           int
	storedKey, serverKey []byte
}

func newSASLUsers(users []BrokerUser) (*saslUsers, error) {
	s := &saslUsers{plain: map[string][32]byte{}, scram: map[string]map[string]scramKeys{}}
	for _, u := range users {
		switch u.Mechanism {
		case SASLPlain:
			s.plain[u.User] = sha256.Sum256([]byte(u.Password))
		case SASLScramSHA256, SASLScramSHA512:
			salt := make([]byte, 24)
			rand.Read(salt)
			k, err := saltPassword(u.Mechanism, u.Password, salt, scramIterations)
			if err != nil {
				return nil, err
			}
			if s.scram[u.Mechanism] == nil {
				s.scram[u.Mechanism] = map[string]scramKeys{}
			}
			s.scram[u.Mechanism][u.User] = k
		default:
			return nil, fmt.Errorf("stream: SASL mechanism %q: give PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", u.Mechanism)
		}
	}
	return s, nil
}

// mechanisms are those some user may authenticate with, sorted.
func (s *saslUsers) mechanisms() []string {
	var m []string
	if len(s.plain) > 0 {
		m = append(m, SASLPlain)
	}
	for mech := range s.scram {
		m = append(m, mech)
	}
	slices.Sort(m)
	return m
}

// saslSession is one client's exchange with one mechanism.
type saslSession interface {
	// step takes the client's next message and returns the broker's
	// answer, and whether the client is now authenticated. An error
	// refuses the client: errBadCredentials, or a malformed message.
	step(msg []byte) (answer []byte, done bool, err error)
	// user is the name the client gave, once it gave one.
	user() string
}

// session starts an exchange with mech, or returns false when no user
// may use it.
func (s *saslUsers) session(mech string) (saslSession, bool) {
	switch mech {
	case SASLPlain:
		if len(s.plain) > 0 {
			return &plainSession{users: s.plain}, true
		}
	case SASLScramSHA256, SASLScramSHA512:
		if keys := s.scram[mech]; len(keys) > 0 {
			return &scramSession{mech: mech, users: keys}, true
		}
	}
	return nil, false
}

type plainSession struct {
	users map[string][32]byte
	name  string
}

func (p *plainSession) user() string { return p.name }

// step checks "authzid NUL authcid NUL password" (RFC 4616); authzid, if
// given, must be the user itself.
func (p *plainSession) step(msg []byte) ([]byte, bool, error) {
	parts := bytes.Split(msg, []byte{0})
	if len(parts) != 3 {
		return nil, false, errors.New("malformed PLAIN message: want authzid, user and password separated by NUL")
	}
	p.name = string(parts[1])
	if len(parts[0]) > 0 && string(parts[0]) != p.name {
		return nil, false, fmt.Errorf("PLAIN: user %q may not act as %q", p.name, parts[0])
	}
	want, ok := p.users[p.name]
	got := sha256.Sum256(parts[2])
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 || !ok {
		return nil, false, errBadCredentials
	}
	return []byte{}, true, nil
}

// scramSession is the server side of RFC 5802: client-first, server-first,
// client-final, server-final.
type scramSession struct {
	mech  string
	users map[string]scramKeys
	nonce func() string // the server's nonce; nil: random

	name        string
	keys        scramKeys
	gs2Header   string
	clientFirst string // client-first-message-bare
	serverFirst string
	fullNonce   string
	answered    bool
}

func (s *scramSession) user() string { return s.name }

func (s *scramSession) step(msg []byte) ([]byte, bool, error) {
	if !s.answered {
		out, err := s.first(string(msg))
		if err != nil {
			return nil, false, err
		}
		s.answered = true
		return out, false, nil
	}
	out, err := s.final(string(msg))
	return out, err == nil, err
}

// first reads "gs2-header client-first-message-bare", where gs2-header is
// "n,," or "y,," (no channel binding) with an optional authzid, and the
// bare message is "n=user,r=nonce[,extensions]".
func (s *scramSession) first(msg string) ([]byte, error) {
	cb, rest, ok := strings.Cut(msg, ",")
	if !ok {
		return nil, errors.New("malformed SCRAM client-first message")
	}
	if cb != "n" && cb != "y" {
		return nil, fmt.Errorf("SCRAM: channel binding %q is not supported", cb)
	}
	authz, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, errors.New("malformed SCRAM client-first message")
	}
	s.gs2Header = cb + "," + authz + ","
	s.clientFirst = bare
	attrs := strings.Split(bare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") || len(attrs[1]) == 2 {
		return nil, errors.New("malformed SCRAM client-first message: want n=user,r=nonce")
	}
	name, err := scramName(attrs[0][2:])
	if err != nil {
		return nil, err
	}
	s.name = name
	if authz != "" {
		a, err := scramName(strings.TrimPrefix(authz, "a="))
		if err != nil || !strings.HasPrefix(authz, "a=") || a != name {
			return nil, fmt.Errorf("SCRAM: user %q may not act as %q", name, authz)
		}
	}
	keys, ok := s.users[name]
	if !ok {
		return nil, errBadCredentials
	}
	s.keys = keys
	serverNonce := ""
	if s.nonce != nil {
		serverNonce = s.nonce()
	} else {
		b := make([]byte, 24)
		rand.Read(b)
		serverNonce = base64.RawURLEncoding.EncodeToString(b)
	}
	s.fullNonce = attrs[1][2:] + serverNonce
	s.serverFirst = "r=" + s.fullNonce + ",s=" + base64.StdEncoding.EncodeToString(keys.salt) + ",i=" + strconv.Itoa(keys.iterations)
	return []byte(s.serverFirst), nil
}

// final reads "c=gs2-header,r=nonce[,extensions],p=proof", checks the
// proof and answers "v=server-signature".
func (s *scramSession) final(msg string) ([]byte, error) {
	withoutProof, proof, ok := strings.Cut(msg, ",p=")
	if !ok || strings.Contains(proof, ",") {
		return nil, errors.New("malformed SCRAM client-final message: no proof")
	}
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 || attrs[0] != "c="+base64.StdEncoding.EncodeToString([]byte(s.gs2Header)) {
		return nil, errors.New("malformed SCRAM client-final message: channel binding differs from the client-first message")
	}
	// The nonce must end with the broker's (client's and broker's), as
	// Kafka checks it: librdkafka sends its own nonce before that again.
	if !strings.HasPrefix(attrs[1], "r=") || !strings.HasSuffix(attrs[1], s.fullNonce) {
		return nil, errors.New("SCRAM: the nonce in the client-final message is not the broker's")
	}
	clientProof, err := base64.StdEncoding.DecodeString(proof)
	if err != nil {
		return nil, fmt.Errorf("malformed SCRAM proof: %v", err)
	}
	h := scramHash(s.mech)
	authMessage := []byte(s.clientFirst + "," + s.serverFirst + "," + withoutProof)
	clientSignature := hmacOf(h, s.keys.storedKey, authMessage)
	if len(clientProof) != len(clientSignature) {
		return nil, errBadCredentials
	}
	clientKey := make([]byte, len(clientProof))
	for i := range clientProof {
		clientKey[i] = clientProof[i] ^ clientSignature[i]
	}
	storedKey := h()
	storedKey.Write(clientKey)
	if subtle.ConstantTimeCompare(storedKey.Sum(nil), s.keys.storedKey) != 1 {
		return nil, errBadCredentials
	}
	return []byte("v=" + base64.StdEncoding.EncodeToString(hmacOf(h, s.keys.serverKey, authMessage))), nil
}

// scramName undoes SCRAM's escaping of "," as "=2C" and "=" as "=3D".
func scramName(s string) (string, error) {
	if !strings.Contains(s, "=") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", fmt.Errorf("malformed SCRAM user name %q", s)
		}
		i += 2
	}
	return b.String(), nil
}

func scramHash(mech string) func() hash.Hash {
	if mech == SASLScramSHA512 {
		return sha512.New
	}
	return sha256.New
}

// saltPassword derives the keys the broker keeps for a SCRAM user.
func saltPassword(mech, password string, salt []byte, iterations int) (scramKeys, error) {
	h := scramHash(mech)
	salted, err := pbkdf2.Key(h, password, salt, iterations, h().Size())
	if err != nil {
		return scramKeys{}, fmt.Errorf("stream: salting the %s password: %w", mech, err)
	}
	clientKey := hmacOf(h, salted, []byte("Client Key"))
	stored := h()
	stored.Write(clientKey)
	return scramKeys{salt: salt, iterations: iterations, storedKey: stored.Sum(nil), serverKey: hmacOf(h, salted, []byte("Server Key"))}, nil
}

func hmacOf(h func() hash.Hash, key, msg []byte) []byte {
	m := hmac.New(h, key)
	m.Write(msg)
	return m.Sum(nil)
}
