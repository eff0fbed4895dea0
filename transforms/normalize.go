package transforms

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
//     too) are removed; then heading markers "#" up to six; then a list
//     bullet "*", "+" or "-" followed by a space.
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
func Normalize(s string, o NormalizeOptions) string {
	if isClean(s, o.Reddit) {
		return s
	}
	sc := scratchPool.Get().(*scratch)
	sc.out = appendNormalized(sc, sc.out[:0], s, o)
	var r string
	if string(sc.out) == s {
		r = s
	} else {
		r = string(sc.out)
	}
	scratchPool.Put(sc)
	return r
}

// AppendNormalized appends Normalize(s, o) to dst and returns the extended
// buffer. It allocates only to grow dst.
func AppendNormalized(dst []byte, s string, o NormalizeOptions) []byte {
	if isClean(s, o.Reddit) {
		return append(dst, s...)
	}
	sc := scratchPool.Get().(*scratch)
	dst = appendNormalized(sc, dst, s, o)
	scratchPool.Put(sc)
	return dst
}

// scratch holds the intermediate buffers of one normalisation.
type scratch struct {
	out      []byte // Normalize's result before it becomes a string
	ent, md  []byte // after the entity rule, after the markdown rules
	nfkc     []byte // NFKC output
	brackets []int  // output offsets of the open "[" of Reddit links
	parens   []bool // open "(": true where it opened a superscript group
}

// scratchMax bounds the buffers kept between calls, so that one huge text
// does not pin its memory in the pool.
const scratchMax = 64 << 10

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func (sc *scratch) release() {
	for _, b := range []*[]byte{&sc.out, &sc.ent, &sc.md, &sc.nfkc} {
		if cap(*b) > scratchMax {
			*b = nil
		}
	}
	scratchPool.Put(sc)
}

// view reads b as a string without copying. The string must not outlive
// the next change to b.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func appendNormalized(sc *scratch, dst []byte, s string, o NormalizeOptions) []byte {
	if o.Reddit {
		if strings.IndexByte(s, '&') >= 0 {
			sc.ent = appendEntities(sc.ent[:0], s)
			s = view(sc.ent)
		}
		sc.md = sc.appendMarkdown(sc.md[:0], s)
		s = view(sc.md)
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
	if reddit && redditLineMarkup[s[0]] {
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
		if reddit && redditMarkup[c] {
			return false
		}
	}
	return true
}

// redditMarkup marks the bytes that may start an entity or inline markup;
// redditLineMarkup the further bytes that are markup at the start of a line.
var (
	redditMarkup = [256]bool{'&': true, '\\': true, '*': true, '~': true, '^': true,
		'[': true, ']': true, '<': true, '>': true, '`': true, '!': true}
	redditLineMarkup = [256]bool{'#': true, '-': true, '+': true, '_': true, ':': true, '|': true,
		'*': true, '>': true}
)

// appendPlain applies the plain rules to s.
func (sc *scratch) appendPlain(dst []byte, s string) []byte {
	start := len(dst)
	dst, ascii := appendCollapsed(dst, s)
	if ascii || norm.NFKC.IsNormal(dst[start:]) {
		return dst
	}
	sc.nfkc = norm.NFKC.Append(sc.nfkc[:0], dst[start:]...)
	dst = dst[:start]
	if needsCollapse(sc.nfkc) {
		dst, _ = appendCollapsed(dst, view(sc.nfkc))
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
		case isSpace(r):
			space = true
			continue
		case removed(r):
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

// isSpace reports whether r is whitespace for Normalize: unicode.IsSpace,
// and the zero-width space.
func isSpace(r rune) bool { return unicode.IsSpace(r) || r == '\u200b' }

// removed reports whether Normalize removes r: a control character, or a
// format character other than the joiners and emoji tags.
func removed(r rune) bool {
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
