package text_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/parastream/parastream/transforms/text"
)

func tokenizeOptions(t testing.TB, c goldenCase) text.TokenizeOptions {
	var o text.TokenizeOptions
	if c.opts == "" {
		return o
	}
	for opt := range strings.SplitSeq(c.opts, ",") {
		switch opt {
		case "lower":
			o.Lower = true
		case "startend":
			o.StartEnd = true
		default:
			t.Fatalf("tokenize.input:%d: option %q, want lower or startend", c.line, opt)
		}
	}
	return o
}

// showTokens joins escaped tokens with " | ": no token holds a space, so
// the separator is unambiguous.
func showTokens(toks []string) string {
	esc := make([]string, len(toks))
	for i, t := range toks {
		esc[i] = escape(t)
	}
	return strings.Join(esc, " | ")
}

// withoutSpace is s with its whitespace (unicode.IsSpace) removed, bad
// bytes kept.
func withoutSpace(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) || r == utf8.RuneError && n == 1 {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// checkTokens checks what holds for every tokenisation of s with o.
func checkTokens(t *testing.T, s string, o text.TokenizeOptions, toks []string) {
	t.Helper()
	inner := toks
	if o.StartEnd {
		if len(toks) < 2 || toks[0] != text.StartToken || toks[len(toks)-1] != text.EndToken {
			t.Fatalf("Tokenize(%q, %+v) = %q: want %s first and %s last", s, o, toks, text.StartToken, text.EndToken)
		}
		inner = toks[1 : len(toks)-1]
	}
	for _, tok := range inner {
		if tok == "" {
			t.Fatalf("Tokenize(%q, %+v) = %q: an empty token", s, o, toks)
		}
		for i := 0; i < len(tok); {
			r, n := utf8.DecodeRuneInString(tok[i:])
			if unicode.IsSpace(r) && n > 0 && !(r == utf8.RuneError && n == 1) {
				t.Fatalf("Tokenize(%q, %+v) = %q: token %q holds whitespace %U", s, o, toks, tok, r)
			}
			i += n
		}
	}
	if !o.Lower {
		if got, want := strings.Join(inner, ""), withoutSpace(s); got != want {
			t.Fatalf("Tokenize(%q, %+v) = %q: joined %q, want the text without whitespace %q", s, o, toks, got, want)
		}
	}
	if app := text.AppendTokens([]string{"x"}, s, o); !slices.Equal(app[1:], toks) || app[0] != "x" {
		t.Fatalf("AppendTokens(%q, %+v) = %q, want x then %q", s, o, app, toks)
	}
}

func TestTokenizeGolden(t *testing.T) {
	var out bytes.Buffer
	out.WriteString("# Tokenize of each case of tokenize.input, the tokens joined by \" | \";\n# regenerate with go test ./transforms -run Golden -update\n")
	for _, c := range readCases(t, "tokenize.input") {
		o := tokenizeOptions(t, c)
		toks := text.Tokenize(c.text, o)
		checkTokens(t, c.text, o, toks)
		opts := ""
		if c.opts != "" {
			opts = " [" + c.opts + "]"
		}
		fmt.Fprintf(&out, "\n# line %d%s\nin:  %s\nout: %s\n", c.line, opts, escape(c.text), showTokens(toks))
	}
	checkGolden(t, "tokenize.golden", out.Bytes())
}

func TestTokenizeRules(t *testing.T) {
	plain := text.TokenizeOptions{}
	for _, tc := range []struct {
		in   string
		o    text.TokenizeOptions
		want []string
	}{
		{"", plain, []string{}},
		{" \n\t", plain, []string{}},
		{"", text.TokenizeOptions{StartEnd: true}, []string{"<s>", "</s>"}},
		{"Hi.", text.TokenizeOptions{StartEnd: true}, []string{"<s>", "Hi", ".", "</s>"}},
		{"Don't SHOUT", text.TokenizeOptions{Lower: true}, []string{"do", "n't", "shout"}},
		{"ΣΊΣΥΦΟΣ İ", text.TokenizeOptions{Lower: true}, []string{"σίσυφοσ", "i"}},
		{"don't", plain, []string{"do", "n't"}},
		{"I'm", plain, []string{"I", "'m"}},
		{"they'll", plain, []string{"they", "'ll"}},
		{"John's", plain, []string{"John", "'s"}},
		{"can't", plain, []string{"ca", "n't"}},
		{"won’t", plain, []string{"wo", "n’t"}},
		{"students'", plain, []string{"students", "'"}},
		{"http://x.org/a?b=1&c=2.", plain, []string{"http://x.org/a?b=1&c=2", "."}},
		{"(https://en.wikipedia.org/wiki/Go_(game))", plain, []string{"(", "https://en.wikipedia.org/wiki/Go_(game)", ")"}},
		{"www.example.com,", plain, []string{"www.example.com", ","}},
		{"3.14 1,000 -2 10/17/01 12:30 50%", plain, []string{"3.14", "1,000", "-2", "10/17/01", "12:30", "50", "%"}},
		{"a@b.co", plain, []string{"a@b.co"}},
		{"/r/foo /u/bar u/baz r/qux", plain, []string{"/r/foo", "/u/bar", "u/baz", "r/qux"}},
		{"wait...", plain, []string{"wait", "..."}},
		{"state-of-the-art", plain, []string{"state-of-the-art"}},
		{"U.S. e.g. Mr.", plain, []string{"U.S.", "e.g.", "Mr."}},
		{"日本語", plain, []string{"日", "本", "語"}},
		{"مرحبا، عالم", plain, []string{"مرحبا", "،", "عالم"}},
		{"👍🏽!", plain, []string{"👍🏽", "!"}},
	} {
		got := text.Tokenize(tc.in, tc.o)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Tokenize(%q, %+v) = %q, want %q", tc.in, tc.o, got, tc.want)
		}
	}
}

// TestTokenizeRetokenize checks that tokenised text, joined by spaces,
// tokenises to the same tokens: the tokenised corpora (Europarl,
// TurkCorpus) go through the same tokenizer.
func TestTokenizeRetokenize(t *testing.T) {
	texts := slices.Clone(benchComments)
	for _, c := range readCases(t, "tokenize.input") {
		if c.opts == "" {
			texts = append(texts, c.text)
		}
	}
	for _, s := range texts {
		toks := text.Tokenize(s, text.TokenizeOptions{})
		again := text.Tokenize(strings.Join(toks, " "), text.TokenizeOptions{})
		if !slices.Equal(toks, again) {
			t.Errorf("Tokenize(%q) = %q, but its tokens joined tokenise to %q", s, toks, again)
		}
	}
}

func TestTokenizeAllocs(t *testing.T) {
	skipAllocsUnderRace(t)
	dst := make([]string, 0, 512)
	for _, s := range benchComments {
		if n := testing.AllocsPerRun(100, func() { text.AppendTokens(dst[:0], s, text.TokenizeOptions{}) }); n != 0 {
			t.Errorf("AppendTokens(%.20q): %v allocations, want 0", s, n)
		}
		if n := testing.AllocsPerRun(100, func() { text.Tokenize(s, text.TokenizeOptions{Lower: true}) }); n > 2 {
			t.Errorf("Tokenize(%.20q, Lower): %v allocations, want at most 2", s, n)
		}
	}
}

// FuzzTokenize checks that Tokenize does not panic, that every token is
// non-empty and holds no whitespace, and that the tokens joined are the
// input without its whitespace.
func FuzzTokenize(f *testing.F) {
	for _, c := range readCases(f, "tokenize.input") {
		f.Add(c.text)
	}
	for _, s := range benchComments {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, o := range []text.TokenizeOptions{{}, {Lower: true, StartEnd: true}} {
			checkTokens(t, s, o, text.Tokenize(s, o))
		}
	})
}

func ExampleTokenize() {
	toks := text.Tokenize(`"I can't believe it's 3.14," she said... see https://example.com/pi, /r/math.`,
		text.TokenizeOptions{})
	fmt.Println(strings.Join(toks, " | "))
	toks = text.Tokenize("Don't SHOUT!", text.TokenizeOptions{Lower: true, StartEnd: true})
	fmt.Println(strings.Join(toks, " "))
	// Output:
	// " | I | ca | n't | believe | it | 's | 3.14 | , | " | she | said | ... | see | https://example.com/pi | , | /r/math | .
	// <s> do n't shout ! </s>
}

func BenchmarkTokenize(b *testing.B) {
	texts := make([]string, len(benchComments))
	n := 0
	for i, s := range benchComments {
		texts[i] = text.Normalize(s, text.NormalizeOptions{Reddit: true})
		n += len(texts[i])
	}
	for _, bc := range []struct {
		name string
		o    text.TokenizeOptions
	}{
		{"plain", text.TokenizeOptions{}},
		{"lower", text.TokenizeOptions{Lower: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range texts {
					text.Tokenize(s, bc.o)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/text")
		})
	}
	b.Run("append", func(b *testing.B) {
		b.SetBytes(int64(n))
		b.ReportAllocs()
		dst := make([]string, 0, 512)
		for b.Loop() {
			for _, s := range texts {
				dst = text.AppendTokens(dst[:0], s, text.TokenizeOptions{})
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/text")
	})
}
