package transforms_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/parastream/parastream/transforms"
)

func tokenizeOptions(t testing.TB, c goldenCase) transforms.TokenizeOptions {
	var o transforms.TokenizeOptions
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
func checkTokens(t *testing.T, s string, o transforms.TokenizeOptions, toks []string) {
	t.Helper()
	inner := toks
	if o.StartEnd {
		if len(toks) < 2 || toks[0] != transforms.StartToken || toks[len(toks)-1] != transforms.EndToken {
			t.Fatalf("Tokenize(%q, %+v) = %q: want %s first and %s last", s, o, toks, transforms.StartToken, transforms.EndToken)
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
	if app := transforms.AppendTokens([]string{"x"}, s, o); !slices.Equal(app[1:], toks) || app[0] != "x" {
		t.Fatalf("AppendTokens(%q, %+v) = %q, want x then %q", s, o, app, toks)
	}
}

func TestTokenizeGolden(t *testing.T) {
	var out bytes.Buffer
	out.WriteString("# Tokenize of each case of tokenize.input, the tokens joined by \" | \";\n# regenerate with go test ./transforms -run Golden -update\n")
	for _, c := range readCases(t, "tokenize.input") {
		o := tokenizeOptions(t, c)
		toks := transforms.Tokenize(c.text, o)
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
	plain := transforms.TokenizeOptions{}
	for _, tc := range []struct {
		in   string
		o    transforms.TokenizeOptions
		want []string
	}{
		{"", plain, []string{}},
		{" \n\t", plain, []string{}},
		{"", transforms.TokenizeOptions{StartEnd: true}, []string{"<s>", "</s>"}},
		{"Hi.", transforms.TokenizeOptions{StartEnd: true}, []string{"<s>", "Hi", ".", "</s>"}},
		{"Don't SHOUT", transforms.TokenizeOptions{Lower: true}, []string{"do", "n't", "shout"}},
		{"ΣΊΣΥΦΟΣ İ", transforms.TokenizeOptions{Lower: true}, []string{"σίσυφοσ", "i"}},
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
		got := transforms.Tokenize(tc.in, tc.o)
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
		toks := transforms.Tokenize(s, transforms.TokenizeOptions{})
		again := transforms.Tokenize(strings.Join(toks, " "), transforms.TokenizeOptions{})
		if !slices.Equal(toks, again) {
			t.Errorf("Tokenize(%q) = %q, but its tokens joined tokenise to %q", s, toks, again)
		}
	}
}

func TestTokenizeAllocs(t *testing.T) {
	skipAllocsUnderRace(t)
	dst := make([]string, 0, 512)
	for _, s := range benchComments {
		if n := testing.AllocsPerRun(100, func() { transforms.AppendTokens(dst[:0], s, transforms.TokenizeOptions{}) }); n != 0 {
			t.Errorf("AppendTokens(%.20q): %v allocations, want 0", s, n)
		}
		if n := testing.AllocsPerRun(100, func() { transforms.Tokenize(s, transforms.TokenizeOptions{Lower: true}) }); n > 2 {
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
		for _, o := range []transforms.TokenizeOptions{{}, {Lower: true, StartEnd: true}} {
			checkTokens(t, s, o, transforms.Tokenize(s, o))
		}
	})
}

func ExampleTokenize() {
	toks := transforms.Tokenize(`"I can't believe it's 3.14," she said... see https://example.com/pi, /r/math.`,
		transforms.TokenizeOptions{})
	fmt.Println(strings.Join(toks, " | "))
	toks = transforms.Tokenize("Don't SHOUT!", transforms.TokenizeOptions{Lower: true, StartEnd: true})
	fmt.Println(strings.Join(toks, " "))
	// Output:
	// " | I | ca | n't | believe | it | 's | 3.14 | , | " | she | said | ... | see | https://example.com/pi | , | /r/math | .
	// <s> do n't shout ! </s>
}

func BenchmarkTokenize(b *testing.B) {
	texts := make([]string, len(benchComments))
	n := 0
	for i, s := range benchComments {
		texts[i] = transforms.Normalize(s, transforms.NormalizeOptions{Reddit: true})
		n += len(texts[i])
	}
	for _, bc := range []struct {
		name string
		o    transforms.TokenizeOptions
	}{
		{"plain", transforms.TokenizeOptions{}},
		{"lower", transforms.TokenizeOptions{Lower: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range texts {
					transforms.Tokenize(s, bc.o)
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
				dst = transforms.AppendTokens(dst[:0], s, transforms.TokenizeOptions{})
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/text")
	})
}
