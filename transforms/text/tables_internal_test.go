package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestASCIITables checks the constant byte tables against the definitions
// their comments give.
func TestASCIITables(t *testing.T) {
	class := func(c byte) byte {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
			return clWord
		case c >= '0' && c <= '9':
			return clDigit
		}
		return clPunct
	}
	set := func(chars string) func(byte) byte {
		return func(c byte) byte {
			if strings.IndexByte(chars, c) >= 0 {
				return 1
			}
			return 0
		}
	}
	for _, tc := range []struct {
		name  string
		table string
		n     int
		want  func(byte) byte
	}{
		{"asciiSpace", asciiSpace, utf8.RuneSelf, set(" \t\n\v\f\r")},
		{"asciiClass", asciiClass, utf8.RuneSelf, class},
		{"redditMarkup", redditMarkup, 256, set("&\\*~^[]<>`")},
		{"redditLineMarkup", redditLineMarkup, 256, set("#-+_:|*>")},
		{"mdSpecial", mdSpecial, 256, set("\n\\*~^()`[]<>!")},
	} {
		if len(tc.table) != tc.n {
			t.Errorf("len(%s) = %d, want %d", tc.name, len(tc.table), tc.n)
			continue
		}
		for c := 0; c < tc.n; c++ {
			if got, want := tc.table[c], tc.want(byte(c)); got != want {
				t.Errorf("%s[%#02x] = %d, want %d", tc.name, c, got, want)
			}
		}
	}
}
