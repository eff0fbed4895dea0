package synth

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzJSONString: the escaper writes ASCII-only JSON that encoding/json
// decodes back to the input, for every valid UTF-8 string.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{
		"", "plain", `a "quote" and a \ backslash`, "tab\tnewline\nreturn\r", "\x00\x01\x1f\x7f",
		"é ü ß Ж 東京 シ", "emoji 😂 🙏 ❤️", "\u2028\u2029", "</script>&amp;", "\uffff\U0010ffff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip()
		}
		for _, q := range [][]byte{appendJSONString(nil, s), appendJSONString(nil, []byte(s))} {
			for _, c := range q {
				if c >= utf8.RuneSelf {
					t.Fatalf("%q: non-ASCII byte in %q", s, q)
				}
			}
			var back string
			if err := json.Unmarshal(q, &back); err != nil {
				t.Fatalf("%q: %q is not JSON: %v", s, q, err)
			}
			if back != s {
				t.Fatalf("%q: decodes to %q", s, back)
			}
		}
	})
}

func TestPyFloat(t *testing.T) {
	for v, want := range map[float64]string{1706745600: "1706745600.0", 0.5: "0.5", 1: "1.0", 0.97: "0.97"} {
		if got := string(appendPyFloat(nil, v)); got != want {
			t.Errorf("%v: %s, want %s", v, got, want)
		}
	}
}
