package text

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"
)

// NormalizeOptions selects the rules Normalize applies. The zero value
// applies the plain rules only.
type NormalizeOptions struct {
	// Reddit reads the text as the body of a pushshift Reddit record:
	// HTML-escaped markdown. It decodes the entities and strips the markup
	// before the plain rules run; see Normalize.
	Reddit bool
}

// Normalize cleans one text for training. The plain rules, applied to every
// text, in this order:
//
//  1. Bytes that are not UTF-8 become U+FFFD, one for each bad byte.
//  2. Control characters (Unicode Cc) and invisible format characters
//     (Unicode Cf: the soft hyphen, the byte-order mark, bidirectional
//     marks, the word joiner, ...) are removed. The zero-width joiner and
//     non-joiner (U+200D, U+200C), which shape emoji sequences and several
//     scripts, and the tag characters of emoji flags (U+E0020-U+E007F) are
//     kept. Tab, newline, carriage return and the other control
//     characters that are whitespace take rule 3.
//  3. Every run of whitespace (unicode.IsSpace: space, tab, newline, U+00A0
//     no-break space, U+2000-U+200A, U+3000, ...; and U+200B zero-width
//     space) becomes one space, and the text is trimmed.
//  4. Unicode NFKC (compatibility composition): "ﬁ" becomes "fi", full-width
//     "Ａ" becomes "A", "é" written e + U+0301 becomes one code point. NFKC
//     is the identity on ASCII, so ASCII text skips it. NFKC can introduce
//     spaces (U+00A8 becomes space + U+0308), so rule 3 runs again where it
//     did.
//
// Rules 1 to 3 run before NFKC, since removing a character after it could
// bring a base letter and a combining mark together again.
//
// With o.Reddit these rules run first, in this order, on the text as the
// pushshift dumps hold it:
//
//  1. HTML entities are decoded: the named &amp; &lt; &gt; &quot; &apos;
//     &nbsp; and a few dozen common others (&hellip; &mdash; &eacute; ...;
//     see entityRune), and numeric ones, &#39; and &#x200B;. Reddit's API
//     escapes &, < and > of the markdown source, and the markdown itself
//     holds entities (the new editor writes &#x200B; for an empty
//     paragraph), so a body carries "&amp;#x200B;": decoding repeats until
//     no entity is left ("&amp;amp;" becomes "&"). A number that is not a
//     Unicode scalar value (0, a surrogate, above U+10FFFF) becomes U+FFFD.
//     Entities go first: the markdown below is written with them ("&gt;"
//     opens a quote, "&lt;http://x&gt;" is a bare link).
//  2. At the start of each line: a horizontal rule or table separator line
//     (only - * _ : | and spaces, with three or more of - * _) is removed;
//     leading spaces are removed; block-quote markers ">" (nested "> >"
//     too) are removed; then heading markers, one to six "#" ("#######"
//     is text); then a list bullet "*", "+" or "-" followed by a space.
//  3. Inline, left to right: a backslash before ASCII punctuation is
//     removed and the punctuation kept as text ("\_" is "_", "\*" is "*");
//     links "[text](url)" become their text, the url and an optional
//     "title" dropped, and nested links nest ("[[a](x)](y)" is "a"); the
//     url ends at the parenthesis that balances the opening one and may not
//     cross a line, else the brackets stay as text ("[deleted]" stays);
//     bare links "<http://x>" (http, https, ftp, mailto, www.) become the
//     url; emphasis markers are removed and their text kept: a run of "*"
//     ("*it*", "**bold**", "***both***") unless the run stands alone
//     between spaces ("5 * 3"), a run of two or more "~" ("~~strike~~";
//     a single "~" stays), every "^" (superscript: "2^10" is "210"), and
//     "^(" opens a superscript group whose matching ")" is removed too;
//     spoiler markers ">!" and "!<" and code-span backticks are removed.
//     Underscore emphasis is not read: "_" is far more often part of a
//     name (u/some_user) than markup.
//
// Then the plain rules run, which collapse the newlines the markdown rules
// kept; whitespace is last.
//
// Normalize is idempotent for the plain rules: Normalize(Normalize(s, o), o)
// == Normalize(s, o) when o.Reddit is false, and the output of the Reddit
// rules is always normalised text: Normalize(Normalize(s, reddit), plain)
// == Normalize(s, reddit). The Reddit rules themselves read markdown and
// write plain text, and plain text read again as markdown may change: "\\*"
// is "\*" after one reading and "*" after two, as with any unescaping.
// Normalize a Reddit body once.
//
// Text that needs no change is returned as is, without allocating.
func Normalize(s string, o NormalizeOptions) string { return normPool.Normalize(s, o) }

// AppendNormalized appends Normalize(s, o) to dst and returns the extended
// buffer. It allocates only to grow dst.
func AppendNormalized(dst []byte, s string, o NormalizeOptions) []byte {
	return normPool.Append(dst, s, o)
}

// A Normalizer normalises texts as Normalize does, with scratch buffers it
// keeps between calls, so that only the result allocates: a value that
// normalises many texts (a DoFn, a filter) holds one. The zero value is
// ready to use; a Normalizer is safe for concurrent use and must not be
// copied after first use.
type Normalizer struct {
	scratch sync.Pool // of *normScratch
}

// Normalize returns Normalize(s, o).
func (n *Normalizer) Normalize(s string, o NormalizeOptions) string {
	if isClean(s, o.Reddit) {
		return s
	}
	sc := n.get()
	sc.out = appendNormalized(sc, sc.out[:0], s, o)
	r := s
	if string(sc.out) != s {
		r = string(sc.out)
	}
	n.put(sc)
	return r
}

// Append returns AppendNormalized(dst, s, o); it allocates only to grow
// dst.
func (n *Normalizer) Append(dst []byte, s string, o NormalizeOptions) []byte {
	if isClean(s, o.Reddit) {
		return append(dst, s...)
	}
	sc := n.get()
	dst = appendNormalized(sc, dst, s, o)
	n.put(sc)
	return dst
}

// normPool is the Normalizer of the package functions Normalize and
// AppendNormalized. It stays a package variable until their callers in
// the pipeline (transforms.PrepareConfig.Apply) hold a Normalizer of
// their own; archlint reports it until then.
var normPool Normalizer

// normScratch holds the intermediate buffers of one normalisation.
type normScratch struct {
	out      []byte // Normalize's result before it becomes a string
	ent, md  []byte // after the entity rule, after the markdown rules
	nfkc     []byte // NFKC output
	brackets []int  // output offsets of the open "[" of Reddit links
	parens   []bool // open "(": true where it opened a superscript group
}

// normScratchMax bounds the buffers kept between calls, so that one huge
// text does not pin its memory in the pool.
const normScratchMax = 64 << 10

func (n *Normalizer) get() *normScratch {
	if sc, ok := n.scratch.Get().(*normScratch); ok {
		return sc
	}
	return new(normScratch)
}

// put gives sc back to n's pool, less its buffers above normScratchMax.
func (n *Normalizer) put(sc *normScratch) {
	for _, b := range []*[]byte{&sc.out, &sc.ent, &sc.md, &sc.nfkc} {
		if cap(*b) > normScratchMax {
			*b = nil
		}
	}
	n.scratch.Put(sc)
}

// bytesString reads b as a string without copying. The string must not
// outlive the next change to b.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func appendNormalized(sc *normScratch, dst []byte, s string, o NormalizeOptions) []byte {
	if o.Reddit {
		if strings.IndexByte(s, '&') >= 0 {
			sc.ent = appendEntities(sc.ent[:0], s)
			s = bytesString(sc.ent)
		}
		sc.md = sc.appendMarkdown(sc.md[:0], s)
		s = bytesString(sc.md)
	}
	return sc.appendPlain(dst, s)
}

// isClean reports, by a quick byte test, that Normalize returns s as is:
// printable ASCII, single spaces inside only, and with reddit none of the
// bytes that start an entity or markup.
func isClean(s string, reddit bool) bool {
	if len(s) == 0 {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	if reddit && redditLineMarkup[s[0]] != 0 {
		return false
	}
	prevSpace := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f {
			return false
		}
		if c == ' ' {
			if prevSpace {
				return false
			}
			prevSpace = true
			continue
		}
		prevSpace = false
		if reddit && redditMarkup[c] != 0 {
			return false
		}
	}
	return true
}

// redditMarkup is 1 for the bytes that may start an entity or inline
// markup (& \ * ~ ^ [ ] < > `), redditLineMarkup for the further bytes that
// are markup at the start of a line (# - + _ : | * >), 0 for the others:
// constants, indexed by a byte as an array would be. TestASCIITables checks
// them against these lists.
const (
	redditMarkup = "" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\x01\x01\x00" +
		"\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	redditLineMarkup = "" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x01\x01\x00\x01\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
)

// appendPlain applies the plain rules to s.
func (sc *normScratch) appendPlain(dst []byte, s string) []byte {
	start := len(dst)
	dst, ascii := appendCollapsed(dst, s)
	if ascii {
		return dst
	}
	// NFKC from the first character that may change; QuickSpan stops at
	// a boundary, so the normalised prefix stays as it is.
	text := dst[start:]
	n := norm.NFKC.QuickSpan(text)
	if n == len(text) {
		return dst
	}
	sc.nfkc = append(sc.nfkc[:0], text[:n]...)
	sc.nfkc = norm.NFKC.Append(sc.nfkc, text[n:]...)
	dst = dst[:start]
	if needsCollapse(sc.nfkc) {
		dst, _ = appendCollapsed(dst, bytesString(sc.nfkc))
		return dst
	}
	return append(dst, sc.nfkc...)
}

// needsCollapse reports whether b, the NFKC form of collapsed text, has
// gained a space at an end or next to another.
func needsCollapse(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if b[0] == ' ' || b[len(b)-1] == ' ' {
		return true
	}
	for i := 1; i < len(b); i++ {
		if b[i] == ' ' && b[i-1] == ' ' {
			return true
		}
	}
	return false
}

// appendCollapsed applies plain rules 1 to 3 to s: bad bytes become
// U+FFFD, control and format characters go, whitespace runs become one
// space, and the ends are trimmed. It reports whether what it appended is
// ASCII.
func appendCollapsed(dst []byte, s string) ([]byte, bool) {
	start := len(dst)
	ascii := true
	space := false // a space is pending before the next character
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
				space = true
			case c < 0x20 || c == 0x7f:
				// A control character: removed.
			default:
				if space && len(dst) > start {
					dst = append(dst, ' ')
				}
				space = false
				dst = append(dst, c)
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case isNormSpace(r):
			space = true
			continue
		case isRemovedRune(r):
			continue
		}
		// r may be utf8.RuneError from a bad byte: it is written as U+FFFD.
		ascii = false
		if space && len(dst) > start {
			dst = append(dst, ' ')
		}
		space = false
		dst = utf8.AppendRune(dst, r)
	}
	return dst, ascii
}

// isNormSpace reports whether r is whitespace for Normalize: unicode.IsSpace,
// and the zero-width space.
func isNormSpace(r rune) bool { return unicode.IsSpace(r) || r == '\u200b' }

// isRemovedRune reports whether Normalize removes r: a control character, or a
// format character other than the joiners and emoji tags.
func isRemovedRune(r rune) bool {
	if r < 0x80 {
		return r < 0x20 || r == 0x7f
	}
	if r <= 0x9f {
		return true // C1 controls (U+0085 is whitespace, tested first)
	}
	switch {
	case r == '\u200c' || r == '\u200d':
		return false
	case r >= 0xe0020 && r <= 0xe007f:
		return false
	}
	return unicode.Is(unicode.Cf, r)
}

// appendEntities appends s to dst with its HTML entities decoded until none
// is left: each time a ";" is written, the entity that ends the output, if
// any, is replaced by its character, and again while that character is
// itself a ";". The output never holds an entity.
func appendEntities(dst []byte, s string) []byte {
	start := len(dst)
	for len(s) > 0 {
		k := strings.IndexByte(s, ';')
		if k < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:k+1]...)
		s = s[k+1:]
		for {
			r, at := tailEntity(dst, start)
			if at < 0 {
				break
			}
			dst = utf8.AppendRune(dst[:at], r)
			if r != ';' {
				break
			}
		}
	}
	return dst
}

// maxEntity bounds the length of an entity's name, "#x0001F600" included.
const maxEntity = 16

// tailEntity finds the entity "&name;" that ends b[start:] and returns its
// character and offset, or -1.
func tailEntity(b []byte, start int) (rune, int) {
	end := len(b) - 1 // the ";"
	for j := end - 1; j >= start && j >= end-1-maxEntity; j-- {
		c := b[j]
		if c == '&' {
			if j == end-1 {
				return 0, -1
			}
			r, ok := entityRune(bytesString(b[j+1 : end]))
			if !ok {
				return 0, -1
			}
			return r, j
		}
		if !isAlnum(c) && c != '#' {
			return 0, -1
		}
	}
	return 0, -1
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// entityRune decodes an entity's name: a number "#39" or "#x200B", or one
// of the named entities common in Reddit bodies.
func entityRune(name string) (rune, bool) {
	if name[0] == '#' {
		return numericEntity(name[1:])
	}
	switch name {
	case "amp":
		return '&', true
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "quot":
		return '"', true
	case "apos":
		return '\'', true
	case "nbsp":
		return '\u00a0', true
	case "ensp":
		return '\u2002', true
	case "emsp":
		return '\u2003', true
	case "thinsp":
		return '\u2009', true
	case "ZeroWidthSpace":
		return '\u200b', true
	case "zwnj":
		return '\u200c', true
	case "zwj":
		return '\u200d', true
	case "lrm":
		return '\u200e', true
	case "rlm":
		return '\u200f', true
	case "shy":
		return '\u00ad', true
	case "hellip":
		return '…', true
	case "mdash":
		return '—', true
	case "ndash":
		return '–', true
	case "lsquo":
		return '‘', true
	case "rsquo":
		return '’', true
	case "sbquo":
		return '‚', true
	case "ldquo":
		return '“', true
	case "rdquo":
		return '”', true
	case "bdquo":
		return '„', true
	case "laquo":
		return '«', true
	case "raquo":
		return '»', true
	case "bull":
		return '•', true
	case "middot":
		return '·', true
	case "copy":
		return '©', true
	case "reg":
		return '®', true
	case "trade":
		return '™', true
	case "deg":
		return '°', true
	case "plusmn":
		return '±', true
	case "times":
		return '×', true
	case "divide":
		return '÷', true
	case "frac12":
		return '½', true
	case "frac14":
		return '¼', true
	case "frac34":
		return '¾', true
	case "sup2":
		return '²', true
	case "sup3":
		return '³', true
	case "micro":
		return 'µ', true
	case "para":
		return '¶', true
	case "sect":
		return '§', true
	case "cent":
		return '¢', true
	case "pound":
		return '£', true
	case "yen":
		return '¥', true
	case "euro":
		return '€', true
	case "iexcl":
		return '¡', true
	case "iquest":
		return '¿', true
	case "larr":
		return '←', true
	case "rarr":
		return '→', true
	case "uarr":
		return '↑', true
	case "darr":
		return '↓', true
	case "hearts":
		return '♥', true
	case "aacute":
		return 'á', true
	case "agrave":
		return 'à', true
	case "acirc":
		return 'â', true
	case "auml":
		return 'ä', true
	case "eacute":
		return 'é', true
	case "egrave":
		return 'è', true
	case "ecirc":
		return 'ê', true
	case "iacute":
		return 'í', true
	case "oacute":
		return 'ó', true
	case "ouml":
		return 'ö', true
	case "uacute":
		return 'ú', true
	case "uuml":
		return 'ü', true
	case "ntilde":
		return 'ñ', true
	case "ccedil":
		return 'ç', true
	case "szlig":
		return 'ß', true
	case "Eacute":
		return 'É', true
	case "Auml":
		return 'Ä', true
	case "Ouml":
		return 'Ö', true
	case "Uuml":
		return 'Ü', true
	case "Ntilde":
		return 'Ñ', true
	}
	return 0, false
}

// numericEntity decodes the digits of "&#39;" or "&#x200B;". A value that
// is not a Unicode scalar value decodes to U+FFFD, as HTML does.
func numericEntity(d string) (rune, bool) {
	base := rune(10)
	if len(d) > 0 && (d[0] == 'x' || d[0] == 'X') {
		base, d = 16, d[1:]
	}
	if len(d) == 0 {
		return 0, false
	}
	var v rune
	for i := 0; i < len(d); i++ {
		c := d[i]
		var x rune
		switch {
		case c >= '0' && c <= '9':
			x = rune(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			x = rune(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			x = rune(c-'A') + 10
		default:
			return 0, false
		}
		if v <= utf8.MaxRune {
			v = v*base + x
		}
	}
	if v == 0 || v > utf8.MaxRune || v >= 0xd800 && v <= 0xdfff {
		return utf8.RuneError, true
	}
	return v, true
}

// Bounds of the markdown rules against hostile input: the nesting of
// brackets and parentheses tracked, and the length of a link's url.
const (
	mdMaxDepth = 64
	mdMaxURL   = 4096
)

// mdSpecial is 1 for the bytes the inline markdown rules look at (\n \ *
// ~ ^ ( ) ` [ ] < > !), 0 for the others: a constant, indexed by a byte as
// an array would be. TestASCIITables checks it against this list.
const mdSpecial = "" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x01\x00\x00\x00\x00\x00\x00\x01\x01\x01\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\x01\x01\x00" +
	"\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// appendMarkdown applies the Reddit markdown rules 2 and 3 (line prefixes,
// inline markup) to s; see Normalize.
func (sc *normScratch) appendMarkdown(dst []byte, s string) []byte {
	sc.brackets, sc.parens = sc.brackets[:0], sc.parens[:0]
	extraBrackets, extraParens := 0, 0 // open beyond mdMaxDepth, untracked
	spoilers := 0
	lineStart := true
	for i := 0; i < len(s); {
		if lineStart {
			lineStart = false
			i = skipLinePrefix(s, i)
			continue
		}
		c := s[i]
		if mdSpecial[c] == 0 {
			j := i + 1
			for j < len(s) && mdSpecial[s[j]] == 0 {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		i++
		switch c {
		case '\n':
			dst = append(dst, '\n')
			lineStart = true
		case '\\':
			if i < len(s) && isASCIIPunct(s[i]) {
				dst = append(dst, s[i])
				i++
			} else {
				dst = append(dst, '\\')
			}
		case '*':
			j := i
			for j < len(s) && s[j] == '*' {
				j++
			}
			if (i == 1 || isBlankByte(s[i-2])) && (j == len(s) || isBlankByte(s[j])) {
				dst = append(dst, s[i-1:j]...) // a lone "*" between spaces
			}
			i = j
		case '~':
			j := i
			for j < len(s) && s[j] == '~' {
				j++
			}
			if j == i {
				dst = append(dst, '~')
			}
			i = j
		case '^':
			if i < len(s) && s[i] == '(' {
				i++
				if len(sc.parens) < mdMaxDepth {
					sc.parens = append(sc.parens, true)
				} else {
					extraParens++
				}
			}
		case '(':
			if len(sc.parens) < mdMaxDepth {
				sc.parens = append(sc.parens, false)
			} else {
				extraParens++
			}
			dst = append(dst, '(')
		case ')':
			switch n := len(sc.parens); {
			case extraParens > 0:
				extraParens--
				dst = append(dst, ')')
			case n > 0 && sc.parens[n-1]:
				sc.parens = sc.parens[:n-1] // closes a superscript group
			case n > 0:
				sc.parens = sc.parens[:n-1]
				dst = append(dst, ')')
			default:
				dst = append(dst, ')')
			}
		case '`':
		case '[':
			if len(sc.brackets) < mdMaxDepth {
				sc.brackets = append(sc.brackets, len(dst))
			} else {
				extraBrackets++
			}
			dst = append(dst, '[')
		case ']':
			if extraBrackets > 0 {
				extraBrackets--
			} else if n := len(sc.brackets); n > 0 {
				open := sc.brackets[n-1]
				sc.brackets = sc.brackets[:n-1]
				if i < len(s) && s[i] == '(' {
					if end := linkEnd(s, i); end > 0 {
						dst = append(dst[:open], dst[open+1:]...) // the text stays
						i = end
						continue
					}
				}
			}
			dst = append(dst, ']')
		case '<':
			if end := bareLinkEnd(s, i-1); end > 0 {
				dst = append(dst, s[i:end-1]...)
				i = end
			} else {
				dst = append(dst, '<')
			}
		case '>':
			if i < len(s) && s[i] == '!' {
				spoilers++
				i++
			} else {
				dst = append(dst, '>')
			}
		case '!':
			if spoilers > 0 && i < len(s) && s[i] == '<' {
				spoilers--
				i++
			} else {
				dst = append(dst, '!')
			}
		}
	}
	return dst
}

// skipLinePrefix returns where the text of the line starting at s[i]
// begins, past a rule line (to its newline), leading blanks, quote
// markers, heading markers and a list bullet.
func skipLinePrefix(s string, i int) int {
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		end = len(s)
	} else {
		end += i
	}
	if isRuleLine(s[i:end]) {
		return end
	}
	i = skipBlanks(s, i)
	for i < len(s) && s[i] == '>' && (i+1 == len(s) || s[i+1] != '!') {
		i = skipBlanks(s, i+1)
	}
	if j := i; j < len(s) && s[j] == '#' {
		for j < len(s) && s[j] == '#' {
			j++
		}
		if j-i <= 6 {
			i = skipBlanks(s, j)
		}
	}
	if i+1 < len(s) && (s[i] == '*' || s[i] == '+' || s[i] == '-') && (s[i+1] == ' ' || s[i+1] == '\t') {
		i = skipBlanks(s, i+1)
	}
	return i
}

// isRuleLine reports whether a line is a horizontal rule ("---", "* * *")
// or a table's separator row ("|:---|---:|"): only - * _ : | and blanks,
// with at least three of - * _.
func isRuleLine(line string) bool {
	marks := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '-', '*', '_':
			marks++
		case ':', '|', ' ', '\t', '\r':
		default:
			return false
		}
	}
	return marks >= 3
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func isBlankByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// linkEnd returns the offset after the ")" that closes the link url opened
// by the "(" at s[i], or -1: the url may hold balanced parentheses
// (Wikipedia's "Go_(game)") but no newline.
func linkEnd(s string, i int) int {
	depth := 0
	for j := i; j < len(s) && j-i <= mdMaxURL; j++ {
		switch s[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j + 1
			}
		case '\n':
			return -1
		}
	}
	return -1
}

// bareLinkEnd returns the offset after the ">" of a bare link "<url>" that
// starts at s[i], or -1.
func bareLinkEnd(s string, i int) int {
	rest := s[i+1:]
	if !hasURLScheme(rest) && !hasPrefixFold(rest, "mailto:") {
		return -1
	}
	for j := i + 1; j < len(s) && j-i <= mdMaxURL; j++ {
		switch c := s[j]; {
		case c == '>':
			return j + 1
		case c == '<' || isBlankByte(c):
			return -1
		}
	}
	return -1
}

// hasURLScheme reports whether s starts a URL: http://, https://, ftp://
// or www., in any case.
func hasURLScheme(s string) bool {
	return hasPrefixFold(s, "http://") || hasPrefixFold(s, "https://") ||
		hasPrefixFold(s, "ftp://") || hasPrefixFold(s, "www.")
}

// hasPrefixFold is strings.HasPrefix with ASCII case folding; prefix is
// lower case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}
