package stream

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// TestScramRFC7677 runs the broker's side of the SCRAM-SHA-256 example
// exchange of RFC 7677, section 3, with its salt and nonces: the proof is
// accepted and the server signature is the RFC's.
func TestScramRFC7677(t *testing.T) {
	const (
		clientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
		serverFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
		clientFinal = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
		serverFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
	)
	session := func(password string) *scramSession {
		salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
		keys, err := saltPassword(SASLScramSHA256, password, salt, 4096)
		if err != nil {
			t.Fatal(err)
		}
		return &scramSession{mech: SASLScramSHA256, users: map[string]scramKeys{"user": keys},
			nonce: func() string { return "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0" }}
	}

	s := session("pencil")
	out, done, err := s.step([]byte(clientFirst))
	if err != nil || done || string(out) != serverFirst {
		t.Fatalf("server-first: %q, done %v, %v; want %q", out, done, err, serverFirst)
	}
	out, done, err = s.step([]byte(clientFinal))
	if err != nil || !done || string(out) != serverFinal {
		t.Fatalf("server-final: %q, done %v, %v; want %q", out, done, err, serverFinal)
	}

	// The same exchange against another password: refused at the proof.
	s = session("pencil2")
	if _, _, err := s.step([]byte(clientFirst)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.step([]byte(clientFinal)); !errors.Is(err, errBadCredentials) {
		t.Errorf("a proof for another password: %v, want errBadCredentials", err)
	}

	// librdkafka puts its nonce before the broker's whole nonce again;
	// Kafka accepts that, and so do we (the proof then covers that text).
	s = session("pencil")
	s.step([]byte(clientFirst))
	doubled := strings.Replace(clientFinal, "r=", "r=rOprNGfwEbeRWgbNEkqO", 1)
	if _, _, err := s.step([]byte(doubled)); !errors.Is(err, errBadCredentials) {
		t.Errorf("a doubled nonce with the RFC's proof: %v, want errBadCredentials (the proof covers the nonce)", err)
	}

	for _, c := range []struct{ name, first, final, want string }{
		{"unknown user", "n,,n=someone,r=abc", "", "invalid credentials"},
		{"channel binding", "p=tls-unique,,n=user,r=abc", "", "channel binding"},
		{"no nonce", "n,,n=user", "", "malformed"},
		{"bad escape", "n,,n=us=er,r=abc", "", "malformed SCRAM user name"},
		{"other authzid", "n,a=admin,n=user,r=abc", "", "may not act as"},
		{"nonce", clientFirst, "c=biws,r=other,p=AAAA", "nonce"},
		{"binding differs", clientFirst, "c=eSws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AAAA", "channel binding"},
		{"no proof", clientFirst, "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0", "no proof"},
		{"short proof", clientFirst, "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AAAA", "invalid credentials"},
	} {
		s := session("pencil")
		_, _, err := s.step([]byte(c.first))
		if err == nil && c.final != "" {
			_, _, err = s.step([]byte(c.final))
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

func TestScramName(t *testing.T) {
	for in, want := range map[string]string{"user": "user", "a=2Cb=3Dc": "a,b=c", "=3D": "="} {
		if got, err := scramName(in); err != nil || got != want {
			t.Errorf("scramName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"=", "a=2", "=41"} {
		if _, err := scramName(in); err == nil {
			t.Errorf("scramName(%q): no error", in)
		}
	}
}

func TestPlainSession(t *testing.T) {
	users, err := newSASLUsers([]BrokerUser{{Mechanism: SASLPlain, User: "trainer", Password: "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		msg string
		ok  bool
	}{
		{"\x00trainer\x00pw", true},
		{"trainer\x00trainer\x00pw", true},
		{"\x00trainer\x00pw2", false},
		{"\x00other\x00pw", false},
		{"admin\x00trainer\x00pw", false},
		{"trainer\x00pw", false},
	} {
		s, ok := users.session(SASLPlain)
		if !ok {
			t.Fatal("no PLAIN session")
		}
		_, done, err := s.step([]byte(c.msg))
		if done != c.ok || (err == nil) != c.ok {
			t.Errorf("PLAIN %q: done %v, %v; want accepted %v", c.msg, done, err, c.ok)
		}
	}
	if _, ok := users.session(SASLScramSHA256); ok {
		t.Error("a SCRAM session where no user has SCRAM")
	}
}
