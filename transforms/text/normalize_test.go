package text_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/parastream/parastream/transforms/text"
)

// updateGolden rewrites the golden files under testdata/golden:
// go test ./transforms -run Golden -update
var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenCase is one line of a golden input file: options, a TAB and the
// escaped text, or the text alone.
type goldenCase struct {
	line int
	opts string
	text string
}

// readCases reads testdata/golden/<name>.
func readCases(t testing.TB, name string) []goldenCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []goldenCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		opts, text, found := strings.Cut(line, "\t")
		if !found {
			opts, text = "", line
		}
		u, err := unescape(text)
		if err != nil {
			t.Fatalf("%s:%d: %v", name, n, err)
		}
		cases = append(cases, goldenCase{line: n, opts: opts, text: u})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// unescape decodes \n \t \r \\ \uXXXX \UXXXXXXXX and \xHH (a raw byte).
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			return "", fmt.Errorf("a lone backslash ends %q", s)
		}
		i++
		switch c := s[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			if i+1+n > len(s) {
				return "", fmt.Errorf("short \\%c escape in %q", c, s)
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil {
				return "", fmt.Errorf("bad \\%c escape in %q: %v", c, s, err)
			}
			if c == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i += n
		default:
			return "", fmt.Errorf("unknown escape \\%c in %q", c, s)
		}
	}
	return b.String(), nil
}

// escape writes s on one visible line: \n \t \r \\, \xHH for a bad byte,
// and \uXXXX for a character that is not graphic (spaces other than ' ',
// controls, format characters).
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02X`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == ' ' || unicode.IsGraphic(r) && !unicode.IsSpace(r) && !unicode.Is(unicode.Cf, r):
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08X`, r)
		default:
			fmt.Fprintf(&b, `\u%04X`, r)
		}
		i += n
	}
	return b.String()
}

// checkGolden compares got with testdata/golden/<name>, or rewrites it
// with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./transforms -run Golden -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(after checking the change, go test ./transforms -run Golden -update)", path, i+1, g, w)
		}
	}
}

// skipAllocsUnderRace skips a test that counts allocations in a race
// build, where sync.Pool drops items at random.
func skipAllocsUnderRace(t *testing.T) {
	t.Helper()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				t.Skip("skipping: allocation counts differ under the race detector")
			}
		}
	}
}

func normalizeOptions(t testing.TB, c goldenCase) text.NormalizeOptions {
	switch c.opts {
	case "plain":
		return text.NormalizeOptions{}
	case "reddit", "reddit,once":
		return text.NormalizeOptions{Reddit: true}
	}
	t.Fatalf("normalize.input:%d: rules %q, want plain, reddit or reddit,once", c.line, c.opts)
	return text.NormalizeOptions{}
}

func TestNormalizeGolden(t *testing.T) {
	var out bytes.Buffer
	out.WriteString("# Normalize of each case of normalize.input; regenerate with\n# go test ./transforms -run Golden -update\n")
	for _, c := range readCases(t, "normalize.input") {
		o := normalizeOptions(t, c)
		got := text.Normalize(c.text, o)
		fmt.Fprintf(&out, "\n# line %d, %s\nin:  %s\nout: %s\n", c.line, c.opts, escape(c.text), escape(got))

		// Every output is normalised text, and the plain rules are
		// idempotent.
		if again := text.Normalize(got, text.NormalizeOptions{}); again != got {
			t.Errorf("normalize.input:%d: the output %q changes under the plain rules: %q", c.line, got, again)
		}
		// A second reading by the Reddit rules leaves the output as it
		// is, but for the cases marked "once".
		if c.opts == "reddit" {
			if again := text.Normalize(got, o); again != got {
				t.Errorf("normalize.input:%d: Reddit rules not idempotent: %q, then %q", c.line, got, again)
			}
		}
		if app := text.AppendNormalized([]byte("prefix"), c.text, o); string(app) != "prefix"+got {
			t.Errorf("normalize.input:%d: AppendNormalized gives %q, want %q", c.line, app, "prefix"+got)
		}
	}
	checkGolden(t, "normalize.golden", out.Bytes())
}

func TestNormalizeRules(t *testing.T) {
	plain, reddit := text.NormalizeOptions{}, text.NormalizeOptions{Reddit: true}
	for _, tc := range []struct {
		in   string
		o    text.NormalizeOptions
		want string
	}{
		{"", plain, ""},
		{" \t\n ", plain, ""},
		{"a\u00a0\u200b\u3000b", plain, "a b"},
		{"x\x00y", plain, "xy"},
		{"ﬁ", plain, "fi"},
		{"e\u0301", plain, "é"},
		{"\xff", plain, "\ufffd"},
		{"&amp;", plain, "&amp;"},
		{"&amp;", reddit, "&"},
		{"&amp;amp;amp;", reddit, "&"},
		{"&amp;#x200B;", reddit, ""},
		{"&gt; quote", reddit, "quote"},
		{"[a](b)", reddit, "a"},
		{"[deleted]", reddit, "[deleted]"},
		{"[removed]", reddit, "[removed]"},
		{"**b** *i* ~~s~~ ^sup", reddit, "b i s sup"},
		{`\_x\_`, reddit, "_x_"},
		{"<http://x.org>", reddit, "http://x.org"},
		{"&lt;http://x.org&gt;", reddit, "http://x.org"},
		{"line one\n\n&gt; line two", reddit, "line one line two"},
	} {
		if got := text.Normalize(tc.in, tc.o); got != tc.want {
			t.Errorf("Normalize(%q, %+v) = %q, want %q", tc.in, tc.o, got, tc.want)
		}
	}
}

func TestNormalizeAllocs(t *testing.T) {
	skipAllocsUnderRace(t)
	clean := "Absolutely stunning. Really love this, perfect finish IMO as well."
	for _, o := range []text.NormalizeOptions{{}, {Reddit: true}} {
		if n := testing.AllocsPerRun(100, func() { text.Normalize(clean, o) }); n != 0 {
			t.Errorf("Normalize of clean ASCII text, %+v: %v allocations, want 0", o, n)
		}
	}
	buf := make([]byte, 0, 4096)
	for _, s := range benchComments {
		for _, o := range []text.NormalizeOptions{{}, {Reddit: true}} {
			text.AppendNormalized(buf[:0], s, o) // warm the pool
			if n := testing.AllocsPerRun(100, func() { text.AppendNormalized(buf[:0], s, o) }); n != 0 {
				t.Errorf("AppendNormalized(%.20q, %+v): %v allocations, want 0", s, o, n)
			}
			if n := testing.AllocsPerRun(100, func() { text.Normalize(s, o) }); n > 1 {
				t.Errorf("Normalize(%.20q, %+v): %v allocations, want at most 1", s, o, n)
			}
		}
	}
}

// TestNormalizer checks that a Normalizer (its zero value) gives what the
// package functions give, and allocates as little, from several
// goroutines at once.
func TestNormalizer(t *testing.T) {
	var n text.Normalizer
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for _, s := range benchComments {
				for _, o := range []text.NormalizeOptions{{}, {Reddit: true}} {
					want := text.Normalize(s, o)
					if got := n.Normalize(s, o); got != want {
						t.Errorf("Normalizer.Normalize(%.20q, %+v) = %q, want %q", s, o, got, want)
					}
					if buf = n.Append(buf[:0], s, o); string(buf) != want {
						t.Errorf("Normalizer.Append(%.20q, %+v) = %q, want %q", s, o, buf, want)
					}
				}
			}
		}()
	}
	wg.Wait()
	skipAllocsUnderRace(t)
	buf := make([]byte, 0, 4096)
	for _, s := range benchComments {
		o := text.NormalizeOptions{Reddit: true}
		n.Append(buf[:0], s, o) // warm the pool
		if a := testing.AllocsPerRun(100, func() { n.Append(buf[:0], s, o) }); a != 0 {
			t.Errorf("Normalizer.Append(%.20q): %v allocations, want 0", s, a)
		}
	}
}

// FuzzNormalize checks that Normalize does not panic, writes valid UTF-8
// without control characters, stray spaces or removed characters, is
// idempotent under the plain rules, and that the Reddit rules' output is
// normalised text.
func FuzzNormalize(f *testing.F) {
	for _, c := range readCases(f, "normalize.input") {
		f.Add(c.text, c.opts != "plain")
	}
	for _, s := range benchComments {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, reddit bool) {
		o := text.NormalizeOptions{Reddit: reddit}
		got := text.Normalize(s, o)
		if !utf8.ValidString(got) {
			t.Fatalf("Normalize(%q, %+v) = %q: not UTF-8", s, o, got)
		}
		if strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") || strings.Contains(got, "  ") {
			t.Fatalf("Normalize(%q, %+v) = %q: stray spaces", s, o, got)
		}
		for _, r := range got {
			if r != ' ' && (unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u200b') {
				t.Fatalf("Normalize(%q, %+v) = %q: holds %U", s, o, got, r)
			}
		}
		if again := text.Normalize(got, text.NormalizeOptions{}); again != got {
			t.Fatalf("Normalize(%q, %+v) = %q, which the plain rules change to %q", s, o, got, again)
		}
		if app := text.AppendNormalized([]byte("x"), s, o); string(app) != "x"+got {
			t.Fatalf("AppendNormalized(%q, %+v) = %q, want %q", s, o, app, "x"+got)
		}
	})
}

func ExampleNormalize() {
	body := "&gt; quoted\n\n**Bold** claim: see [the docs](https://example.com/docs) \\_now\\_&amp;#x200B;"
	fmt.Println(text.Normalize(body, text.NormalizeOptions{Reddit: true}))
	fmt.Println(text.Normalize("ﬁne\u00a0\u00a0ＡＢＣ\n", text.NormalizeOptions{}))
	// Output:
	// quoted Bold claim: see the docs _now_
	// fine ABC
}

// benchComments are real comment bodies (from pushshift dumps) of the
// lengths and markup Reddit has: the extraction's hot path.
var benchComments = []string{
	"Absolutely stunning. Really love this, perfect finish IMO as well.",
	"Isn’t this sub supposed to boycott mc d lol",
	"I see that I've earned my own personal Troll.\n\nWhat a jerkwad!",
	"&gt;Nebraska\n&gt;Diocese of Grand Island (no priests listed in the database)\n\nThis is hilarious because I know of two priests, one in the 80s and one in the 90s that were moved elsewhere because of what they did.\n\nThe Diocese of Grand Island (iirc) also covers Scottsbluff.  I have a friend here who was molested by a priest.  He molested several kids in the 80s and was moved to California.  He was moved back to Scottsbluff two years ago.  Everyone knows about him, yet no one speaks about it.",
	"You must be one of \n\n&gt; those folks that are THAT into beer that they can’t hold conversations about brews with anyone besides another elite member of their cult \n\nor something...\n\n:)",
	"The site states \"What can I use it for? Meeting notes, Reports, technical specs Sign-up sheets, proposals and much more...\", just like any other new breeed of sites that want us to store everything we have on the web. And they even guarantee multiple levels of security and encryption etc. But what prevents these web site operators fom accessing and/or stealing Meeting notes, Reports, technical specs Sign-up sheets, proposals and much more, for competitive or personal gains...? I am pretty sure that most of them are honest, but what's there to prevent me from setting up a good useful site and stealing all your data? Call me paranoid - I am.",
	"Hello u/Cultural_Entrance312\n\n[You predicted the price of Bitcoin would drop below $35,001.00 by Jan 31 2024 23:59:59 UTC](/r/BitcoinMarkets/comments/199i3jp/daily_discussion_thursday_january_18_2024/kihqf0a/)\n\n**Unfortunately your prediction was wrong. Better luck next time!**\n\nThe price of Bitcoin on Coinbase Pro when this prediction was triggered: **$42,548.08**",
	"um. www.cmu.edu proves that we were the *original* CMU. take THAT",
}

func benchmarkNormalize(b *testing.B, o text.NormalizeOptions, texts []string) {
	n := 0
	for _, s := range texts {
		n += len(s)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			text.Normalize(s, o)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/text")
}

func BenchmarkNormalize(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchmarkNormalize(b, text.NormalizeOptions{}, benchComments) })
	b.Run("reddit", func(b *testing.B) { benchmarkNormalize(b, text.NormalizeOptions{Reddit: true}, benchComments) })
	b.Run("clean", func(b *testing.B) {
		benchmarkNormalize(b, text.NormalizeOptions{Reddit: true}, benchComments[:1])
	})
	b.Run("nonASCII", func(b *testing.B) {
		benchmarkNormalize(b, text.NormalizeOptions{Reddit: true}, []string{
			"Spielt Guerreiro bei Bayern von Anfang an? Ｆｕｌｌ ｗｉｄｔｈ ﬁ café naïve — «Ça va?» 日本語のテキストです。",
		})
	})
	b.Run("append", func(b *testing.B) {
		var n int
		for _, s := range benchComments {
			n += len(s)
		}
		b.SetBytes(int64(n))
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		o := text.NormalizeOptions{Reddit: true}
		for b.Loop() {
			for _, s := range benchComments {
				buf = text.AppendNormalized(buf[:0], s, o)
			}
		}
	})
}
