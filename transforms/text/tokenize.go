package text

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// TokenizeOptions selects what Tokenize adds to the plain split. The zero
// value splits only.
type TokenizeOptions struct {
	// Lower lowercases the text first (Unicode-aware, strings.ToLower),
	// URLs and e-mail addresses included.
	Lower bool
	// StartEnd adds StartToken before the text's tokens and EndToken after
	// them, the start- and end-of-sentence tags that Wieting and Gimpel
	// (2017) tune as a hyperparameter ("adding EOS tags at the end of
	// training and test sentences, SOS tags at the start"). An empty text
	// gives the two tags alone.
	StartEnd bool
}

// The sentence tags StartEnd adds. Neither can come out of the split of a
// text, which would give "<", "s", ">".
const (
	StartToken = "<s>"
	EndToken   = "</s>"
)

// Tokenize splits a text into tokens, in the manner of the Penn Treebank
// with the exceptions web text needs. The rules, in the order they are
// tried at each position:
//
//   - The text is split at whitespace (unicode.IsSpace), which no token
//     holds. Every other character is kept: the tokens of a text, joined,
//     are the text without its whitespace (before Lower and StartEnd).
//   - At the start of a word (after whitespace or a character that is not
//     part of a word) these stay one token:
//     a URL that starts with http://, https://, ftp:// or www. (any case),
//     to the end of the whitespace-delimited chunk, less trailing
//     punctuation (. , ; : ! ? ' " ’ ” * >) and less a ")" or "]" that
//     does not close one opened inside the URL ("(see http://x.org/a_(b))"
//     gives "http://x.org/a_(b)" and ")");
//     an e-mail address (ASCII local part, @, a dotted domain whose last
//     label has two letters or more);
//     a Reddit reference, /r/name, /u/name, r/name or u/name, with any
//     further path (/r/foo/comments/abc/);
//     a mention or hashtag, "@" or "#" followed by word characters.
//   - A word is a run of letters, marks, digits, "_" and the joiners
//     U+200C and U+200D, with these inside it when both neighbours are
//     word characters: a hyphen ("state-of-the-art", "5-2"), a slash
//     ("and/or", "10/17/01"), a period ("3.14", "e.g", "node.js"), an
//     apostrophe ("o'clock", "don't"), "&" between letters ("AT&T"), and a
//     comma or colon between digits ("1,000", "12:30"). So numbers stay
//     one token, with a sign at the start of a word ("-2", "+1") and a
//     leading period (".5"); "50%" is "50" and "%", and "$5" is "$" and
//     "5", as in the Penn Treebank.
//   - A word followed by a period keeps the period when it is an
//     abbreviation: single letters joined by periods ("U.S.", "e.g.",
//     "a.m.") or one of Mr, Mrs, Ms, Dr, Prof, Sr, Jr, St, vs, etc, Inc,
//     Ltd, Co (any case). Otherwise the period is a token of its own.
//   - English clitics are split off the end of a word as the Penn Treebank
//     does, which keeps every character: "n't" ("don't" is "do" "n't",
//     "can't" is "ca" "n't", "won't" is "wo" "n't"), "'s", "'m", "'d",
//     "'re", "'ve" and "'ll" ("John's" is "John" "'s", "I'm" is "I" "'m",
//     "they'll" is "they" "'ll", "shouldn't've" is "should" "n't" "'ve"),
//     in either case, with the apostrophe ' or ’; and "cannot", "gonna",
//     "gotta", "wanna" are "can" "not", "gon" "na", "got" "ta", "wan" "na".
//     A clitic that stands at the start of a word stays whole ("'s" in
//     "John 's"), so tokenised text tokenises the same again. A trailing
//     apostrophe is its own token ("students'" is "students" "'").
//   - Han, Hiragana and Katakana characters (and the prolonged sound mark
//     "ー") are each a token: Chinese and Japanese have no spaces, and one
//     character a token is what BERT's basic tokenizer does too; a real
//     segmenter is out of scope. Hangul, Thai and other scripts split as
//     words do.
//   - Anything else is punctuation or a symbol, one token a character, with
//     these joined: a run of one of . ! ? - = * ~ # ("...", "!!!", "--"),
//     and a character with the marks, variation selectors, skin-tone
//     modifiers, emoji tags and zero-width-joined characters that follow it
//     (an emoji sequence such as "👍🏽" or "👨‍👩‍👧" is one token), and a pair of
//     regional indicators (a flag).
//
// Tokenize calls AppendTokens with a new slice.
func Tokenize(s string, o TokenizeOptions) []string {
	return AppendTokens(make([]string, 0, len(s)/4+3), s, o)
}

// AppendTokens appends the tokens of s to dst and returns the extended
// slice; see Tokenize for the rules. The tokens are substrings of s (of
// its lowercased copy with Lower), so AppendTokens allocates only to grow
// dst, and with Lower once for a text that has capitals.
func AppendTokens(dst []string, s string, o TokenizeOptions) []string {
	if o.Lower {
		s = strings.ToLower(s)
	}
	if o.StartEnd {
		dst = append(dst, StartToken)
	}
	for i := 0; i < len(s); {
		// Skip whitespace.
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] != 0 {
				i++
				continue
			}
		} else if r, n := utf8.DecodeRuneInString(s[i:]); unicode.IsSpace(r) {
			i += n
			continue
		}
		// The chunk runs to the next whitespace.
		j := i + 1
		for j < len(s) {
			c := s[j]
			if c < utf8.RuneSelf {
				if asciiSpace[c] != 0 {
					break
				}
				j++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += n
		}
		dst = appendChunk(dst, s[i:j])
		i = j
	}
	if o.StartEnd {
		dst = append(dst, EndToken)
	}
	return dst
}

// asciiSpace, indexed by an ASCII byte, is 1 for whitespace (space, \t,
// \n, \v, \f, \r) and 0 for the others: a constant, which the hot loops
// index as they would an array.
const asciiSpace = "" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\x01\x01\x01\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// ASCII character classes of the tokenizer.
const (
	clPunct = iota // punctuation and symbols
	clWord         // letters, digits, "_"
	clDigit        // digits (also words)
)

// asciiClass, indexed by an ASCII byte, is its class: clWord for the
// letters a-z, A-Z and "_", clDigit for 0-9, clPunct for the others. A
// constant, which the hot loops index as they would an array;
// TestASCIITables checks it against that definition.
const asciiClass = "" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x00\x00\x00\x00\x00\x00" +
	"\x00\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" +
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x00\x00\x00\x01" +
	"\x00\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" +
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x00\x00\x00\x00"

// runeAt returns the rune at s[i] and its width; s[i:] is not empty.
func runeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// isWordRune reports whether r belongs to a word: a letter, mark or number, a
// connector punctuation ("_"), or a joiner; not a Han or kana character,
// which is a token of its own.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r] != clPunct
	}
	if r == '\u200c' || r == '\u200d' {
		return true
	}
	if !(unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) || unicode.Is(unicode.Pc, r)) {
		return false
	}
	return !isCJK(r)
}

func isDigitRune(r rune) bool {
	return r < utf8.RuneSelf && asciiClass[r] == clDigit || r >= utf8.RuneSelf && unicode.IsDigit(r)
}

func isLetterRune(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r] == clWord && r != '_'
	}
	return unicode.IsLetter(r) && !isCJK(r)
}

// isCJK reports whether r is a Han, Hiragana or Katakana character, or the
// prolonged sound mark.
func isCJK(r rune) bool {
	if r < 0x2e80 {
		return false
	}
	return r == 'ー' || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// wordBefore reports whether the rune ending at s[i] is a word character.
func wordBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	if c := s[i-1]; c < utf8.RuneSelf {
		return asciiClass[c] != clPunct
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return isWordRune(r)
}

// appendChunk appends the tokens of a chunk that holds no whitespace.
func appendChunk(dst []string, s string) []string {
	at := strings.IndexByte(s, '@') >= 0 // an e-mail address is possible
	for i := 0; i < len(s); {
		r, w := runeAt(s, i)
		if !wordBefore(s, i) {
			if n := specialLen(s[i:], r, at); n > 0 {
				dst = append(dst, s[i:i+n])
				i += n
				continue
			}
		}
		switch {
		case isWordRune(r):
			n := wordLen(s, i)
			dst = appendWord(dst, s[i:i+n])
			i += n
		case isCJK(r):
			n := w + extendLen(s, i+w)
			dst = append(dst, s[i:i+n])
			i += n
		default:
			n := punctLen(s, i, r, w)
			dst = append(dst, s[i:i+n])
			i += n
		}
	}
	return dst
}

// specialLen returns the length of the URL, e-mail address, Reddit
// reference, mention, signed number or standalone clitic that starts s at
// the start of a word, or 0. With at false, s holds no "@" and so no
// e-mail address.
func specialLen(s string, r rune, at bool) int {
	switch {
	case r == 'h' || r == 'H' || r == 'f' || r == 'F' || r == 'w' || r == 'W':
		if n := urlLen(s); n > 0 {
			return n
		}
	case r == '/':
		return redditRefLen(s)
	case r == '@' || r == '#':
		if len(s) > 1 {
			if r2, _ := runeAt(s, 1); isWordRune(r2) {
				return 1 + wordRunLen(s, 1)
			}
		}
		return 0
	case r == '-' || r == '+' || r == '.':
		// A sign or a leading period before a digit: "-2", "+1", ".5",
		// "-.5".
		j := 1
		if r != '.' && len(s) > 2 && s[1] == '.' {
			j = 2
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			return j + wordLen(s, j)
		}
		return 0
	case r == '\'' || r == '’':
		return cliticLen(s)
	}
	if r == 'r' || r == 'R' || r == 'u' || r == 'U' {
		if n := redditRefLen(s); n > 0 {
			return n
		}
	}
	if at && r < utf8.RuneSelf && asciiClass[r] != clPunct {
		return emailLen(s)
	}
	return 0
}

// urlLen returns the length of the URL that starts s, or 0; see Tokenize.
func urlLen(s string) int {
	var scheme int
	switch {
	case hasPrefixFold(s, "http://"):
		scheme = 7
	case hasPrefixFold(s, "https://"):
		scheme = 8
	case hasPrefixFold(s, "ftp://"):
		scheme = 6
	case hasPrefixFold(s, "www."):
		scheme = 4
	default:
		return 0
	}
	n := len(s) // the chunk holds no whitespace
	for n > scheme {
		c := s[n-1]
		switch c {
		case '.', ',', ';', ':', '!', '?', '\'', '"', '*', '>':
			n--
			continue
		case ')':
			if strings.Count(s[:n], "(") < strings.Count(s[:n], ")") {
				n--
				continue
			}
		case ']':
			if strings.Count(s[:n], "[") < strings.Count(s[:n], "]") {
				n--
				continue
			}
		}
		if c >= utf8.RuneSelf {
			if r, w := utf8.DecodeLastRuneInString(s[:n]); r == '’' || r == '”' {
				n -= w
				continue
			}
		}
		break
	}
	if n == scheme {
		return 0
	}
	return n
}

// emailLen returns the length of the e-mail address that starts s, or 0.
func emailLen(s string) int {
	i := 0
	for i < len(s) && isEmailLocal(s[i]) {
		i++
	}
	if i == 0 || i == len(s) || s[i] != '@' {
		return 0
	}
	i++
	labels, end, lastAlpha := 0, 0, false
	for {
		j, alpha := i, true
		for j < len(s) && isDomainByte(s[j]) {
			if asciiClass[s[j]] != clWord {
				alpha = false
			}
			j++
		}
		if j == i {
			break
		}
		labels++
		end, lastAlpha = j, alpha && j-i >= 2
		if j+1 < len(s) && s[j] == '.' {
			i = j + 1
			continue
		}
		break
	}
	if labels < 2 || !lastAlpha {
		return 0
	}
	return end
}

// isDomainByte reports whether c may be part of a domain name's label.
func isDomainByte(c byte) bool {
	return c < utf8.RuneSelf && (asciiClass[c] != clPunct && c != '_' || c == '-')
}

func isEmailLocal(c byte) bool {
	return c < utf8.RuneSelf && asciiClass[c] != clPunct || c == '.' || c == '%' || c == '+' || c == '-'
}

// redditRefLen returns the length of the Reddit reference that starts s,
// "/r/name", "/u/name", "r/name" or "u/name" with any further path, or 0.
func redditRefLen(s string) int {
	i := 0
	if len(s) > 0 && s[0] == '/' {
		i = 1
	}
	if len(s) < i+3 || s[i+1] != '/' {
		return 0
	}
	switch s[i] {
	case 'r', 'R', 'u', 'U':
	default:
		return 0
	}
	i += 2
	start := i
	for i < len(s) && (isRefByte(s[i]) || s[i] == '/' && i > start) {
		i++
	}
	if i == start {
		return 0
	}
	return i
}

func isRefByte(c byte) bool {
	return c < utf8.RuneSelf && asciiClass[c] != clPunct || c == '-'
}

// cliticLen returns the length of a clitic that makes up the whole word
// starting s ("'s", "'ll", "’re"), or 0.
func cliticLen(s string) int {
	n := wordLenAfterApostrophe(s)
	if n == 0 {
		return 0
	}
	if !isClitic(s[:n]) {
		return 0
	}
	if n < len(s) {
		if r, _ := runeAt(s, n); isWordRune(r) {
			return 0
		}
	}
	return n
}

// wordLenAfterApostrophe returns the length of the apostrophe and the
// ASCII letters after it at the start of s, or 0 without letters.
func wordLenAfterApostrophe(s string) int {
	_, w := runeAt(s, 0)
	i := w
	for i < len(s) && (s[i]|0x20) >= 'a' && (s[i]|0x20) <= 'z' {
		i++
	}
	if i == w {
		return 0
	}
	return i
}

// isClitic reports whether s is one of the clitics the tokenizer splits off:
// an apostrophe (' or ’) and s, m, d, re, ve or ll, in any case.
func isClitic(s string) bool {
	w := 1
	if strings.HasPrefix(s, "’") {
		w = len("’")
	} else if !strings.HasPrefix(s, "'") {
		return false
	}
	switch len(s) - w {
	case 1:
		switch s[w] | 0x20 {
		case 's', 'm', 'd':
			return true
		}
	case 2:
		a, b := s[w]|0x20, s[w+1]|0x20
		if a == 'r' && b == 'e' || a == 'v' && b == 'e' || a == 'l' && b == 'l' {
			return true
		}
	}
	return false
}

// wordRunLen returns the length of the run of word characters at s[i:].
func wordRunLen(s string, i int) int {
	j := i
	for j < len(s) {
		r, w := runeAt(s, j)
		if !isWordRune(r) {
			break
		}
		j += w
	}
	return j - i
}

// wordLen returns the length of the word that starts at s[i], with its
// inner connectors and an abbreviation's final period; see Tokenize.
func wordLen(s string, i int) int {
	start := i
	prev := rune(-1)
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf && asciiClass[c] != clPunct {
			prev = rune(c)
			i++
			continue
		}
		r, w := runeAt(s, i)
		if isWordRune(r) {
			prev = r
			i += w
			continue
		}
		if i+w >= len(s) || prev < 0 {
			break
		}
		next, _ := runeAt(s, i+w)
		if !isWordRune(next) {
			break
		}
		join := false
		switch r {
		case '-', '\u2010', '\u2011', '/', '.':
			join = true
		case '\'', '’':
			join = (isLetterRune(prev) || isDigitRune(prev)) && isLetterRune(next)
		case '&':
			join = isLetterRune(prev) && isLetterRune(next)
		case ',', ':':
			join = isDigitRune(prev) && isDigitRune(next)
		}
		if !join {
			break
		}
		prev = r
		i += w
	}
	if i < len(s) && s[i] == '.' && (i+1 == len(s) || s[i+1] != '.') && isAbbreviation(s[start:i]) {
		i++
	}
	return i - start
}

// isAbbreviation reports whether a word followed by a period keeps it:
// single letters joined by periods ("U.S", "e.g") or a listed title.
func isAbbreviation(w string) bool {
	if len(w) >= 3 && strings.IndexByte(w, '.') > 0 {
		for i := 0; i < len(w); i++ {
			isL := (w[i]|0x20) >= 'a' && (w[i]|0x20) <= 'z'
			if i%2 == 0 && !isL || i%2 == 1 && w[i] != '.' {
				return false
			}
		}
		return len(w)%2 == 1
	}
	if len(w) < 2 || len(w) > 4 {
		return false
	}
	var b [4]byte
	for i := 0; i < len(w); i++ {
		b[i] = w[i] | 0x20
	}
	switch string(b[:len(w)]) {
	case "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "inc", "ltd", "co":
		return true
	}
	return false
}

// appendWord appends a word, with its clitics split off; see Tokenize.
func appendWord(dst []string, w string) []string {
	if len(w) == 5 || len(w) == 6 {
		if a, b, ok := splitSpecial(w); ok {
			return append(dst, a, b)
		}
	}
	if !hasApostrophe(w) {
		return append(dst, w)
	}
	// Peel clitics off the end, at most three ("shouldn't've").
	var cl [3]string
	n := 0
	for n < len(cl) {
		k := lastApostrophe(w)
		if k <= 0 {
			break
		}
		if isClitic(w[k:]) {
			cl[n], w = w[k:], w[:k]
			n++
			continue
		}
		// "n't": the apostrophe is followed by "t" and preceded by "n",
		// with a letter before the "n".
		rest := w[k:]
		_, aw := runeAt(rest, 0)
		if len(rest) == aw+1 && rest[aw]|0x20 == 't' && k >= 2 && w[k-1]|0x20 == 'n' {
			cl[n], w = w[k-1:], w[:k-1]
			n++
			continue
		}
		break
	}
	dst = append(dst, w)
	for n > 0 {
		n--
		dst = append(dst, cl[n])
	}
	return dst
}

// hasApostrophe reports whether w holds ' or ’ (E2 80 99).
func hasApostrophe(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c == '\'' || c == 0xe2 && strings.HasPrefix(w[i:], "’") {
			return true
		}
	}
	return false
}

// lastApostrophe returns the offset of the last ' or ’ in w, or -1.
func lastApostrophe(w string) int {
	for i := len(w) - 1; i >= 0; i-- {
		if c := w[i]; c == '\'' || c == 0xe2 && strings.HasPrefix(w[i:], "’") {
			return i
		}
	}
	return -1
}

// splitSpecial splits the Penn Treebank's special words: cannot, gonna,
// gotta, wanna (any case).
func splitSpecial(w string) (string, string, bool) {
	var b [6]byte
	for i := 0; i < len(w); i++ {
		b[i] = w[i] | 0x20
	}
	switch string(b[:len(w)]) {
	case "cannot":
		return w[:3], w[3:], true
	case "gonna", "gotta", "wanna":
		return w[:3], w[3:], true
	}
	return "", "", false
}

// punctLen returns the length of the punctuation or symbol token that
// starts at s[i] with the rune r of width w.
func punctLen(s string, i int, r rune, w int) int {
	switch r {
	case '.', '!', '?', '-', '=', '*', '~', '#':
		j := i + 1
		for j < len(s) && rune(s[j]) == r {
			j++
		}
		return j - i
	}
	if r >= 0x1f1e6 && r <= 0x1f1ff && i+w < len(s) {
		if r2, w2 := runeAt(s, i+w); r2 >= 0x1f1e6 && r2 <= 0x1f1ff {
			return w + w2 + extendLen(s, i+w+w2) // a flag
		}
	}
	return w + extendLen(s, i+w)
}

// extendLen returns the length of what extends the character before s[i]
// into one token: marks, variation selectors, skin-tone modifiers, emoji
// tags, and a zero-width joiner with the character after it.
func extendLen(s string, i int) int {
	start := i
	for i < len(s) {
		r, w := runeAt(s, i)
		switch {
		case r < 0x300:
			return i - start
		case unicode.IsMark(r), r >= 0x1f3fb && r <= 0x1f3ff, r >= 0xe0020 && r <= 0xe007f:
			i += w
		case r == '\u200d' && i+w < len(s):
			_, w2 := runeAt(s, i+w)
			i += w + w2
		default:
			return i - start
		}
	}
	return i - start
}
