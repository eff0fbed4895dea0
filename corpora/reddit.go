package corpora

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Pushshift Reddit dumps: one JSON object a line, comments in RC_YYYY-MM
// files and submissions in RS_YYYY-MM files (usually zstd with a 2 GiB
// window). A record has some 20 to 110 keys depending on the year; the
// reader decodes only the few it maps and checks that the whole line is
// valid JSON. Keys match exactly (encoding/json would also match "ID" to
// "id"); where a key appears twice the last one wins.
//
// Mapping of "reddit-comments" records to Example:
//   - A: body, verbatim ("[deleted]" and "[removed]" bodies are kept; the
//     filters come later). B: empty; comments are paired with their parent
//     later, by a Beam transform.
//   - ID: the comment's fullname, "t1_" + id (an id that already carries
//     the prefix keeps one). The "name" key of later dumps holds the same
//     fullname and is not read.
//   - Group: link_id, the thread ("t3_1afjd7n"; the "t3_" prefix is added
//     where a dump lacks it), so that a thread stays on one side of a
//     split. A comment without link_id is its own group (its ID).
//   - Dataset: subreddit, or Options.Dataset. Label: none.
//   - LangA, LangB: unknown (empty) unless Options set them.
//   - Meta: "author", "parent_id" ("t3_..." for a top-level comment,
//     "t1_..." for a reply), "link_id", "subreddit", "created_utc" and
//     "score", each where the record has it (not null). created_utc is
//     normalised to whole seconds written as an integer: depending on the
//     year a dump holds it as a JSON integer (1134365188 in 2005, and again
//     in 2019-2020), a string ("1251763200", 2009-2014) or a float
//     (1706745600.0 in 2024). score is normalised the same way.
//
// Mapping of "reddit-submissions" records:
//   - A: title. B: selftext, empty for a link post.
//   - ID and Group: "t3_" + id; the thread a submission opens is its own.
//   - Dataset, LangA, LangB, Label: as for comments.
//   - Meta: "author", "subreddit", "created_utc", "score".
//
// Rejected records: a line that is not valid UTF-8 (ReasonBadUTF8); not a
// JSON object (ReasonBadJSON, which also covers a known key holding the
// wrong type, such as a numeric body); without id, or without body (title
// for a submission), or with either null (ReasonMissingField);
// created_utc or score that is not a number, or a string holding one
// (ReasonBadNumber). Blank lines are skipped as "blank_line".
type RedditReader struct {
	base
	lines       *lineReader
	submissions bool
	dataset     string
	langA       string
	langB       string
	scan        jsonScan
	val         [numRedditKeys][]byte
	str         []byte
}

// The top-level keys the reader decodes, as indexes into RedditReader.val.
const (
	rkID = iota
	rkBody
	rkTitle
	rkSelftext
	rkAuthor
	rkParentID
	rkLinkID
	rkSubreddit
	rkCreatedUTC
	rkScore
	numRedditKeys
)

// redditKeyName returns the name of key k, the inverse of redditKey.
func redditKeyName(k int) string {
	switch k {
	case rkID:
		return "id"
	case rkBody:
		return "body"
	case rkTitle:
		return "title"
	case rkSelftext:
		return "selftext"
	case rkAuthor:
		return "author"
	case rkParentID:
		return "parent_id"
	case rkLinkID:
		return "link_id"
	case rkSubreddit:
		return "subreddit"
	case rkCreatedUTC:
		return "created_utc"
	case rkScore:
		return "score"
	}
	return ""
}

// redditKey maps a top-level key to its index in RedditReader.val, or -1.
func redditKey(k []byte) int {
	switch string(k) {
	case "id":
		return rkID
	case "body":
		return rkBody
	case "title":
		return rkTitle
	case "selftext":
		return rkSelftext
	case "author":
		return rkAuthor
	case "parent_id":
		return rkParentID
	case "link_id":
		return rkLinkID
	case "subreddit":
		return rkSubreddit
	case "created_utc":
		return rkCreatedUTC
	case "score":
		return rkScore
	}
	return -1
}

// NewRedditCommentsReader reads a pushshift comments dump (RC_*).
func NewRedditCommentsReader(in *Input, opts Options) *RedditReader {
	return newRedditReader(in, opts, false)
}

// NewRedditSubmissionsReader reads a pushshift submissions dump (RS_*).
func NewRedditSubmissionsReader(in *Input, opts Options) *RedditReader {
	return newRedditReader(in, opts, true)
}

func newRedditReader(in *Input, opts Options, submissions bool) *RedditReader {
	return &RedditReader{base: newBase(opts.Limits, in), lines: newLineReader(in, opts.Limits),
		submissions: submissions, dataset: opts.Dataset, langA: opts.LangA, langB: opts.LangB}
}

// Next returns the next comment or submission.
func (r *RedditReader) Next() (Example, error) {
	for {
		line, src, err := r.lines.next()
		if err != nil {
			return r.rejected(err)
		}
		r.record()
		if skipJSONSpace(line, 0) == len(line) {
			r.skip("blank_line")
			continue
		}
		if !checkUTF8(line) {
			return r.reject(src, ReasonBadUTF8, "", line)
		}
		if !r.scan.object(line, r.val[:], redditKey) {
			if detail := r.decodeSlow(line); detail != "" {
				return r.reject(src, ReasonBadJSON, detail, line)
			}
		}
		e, reason, detail := r.example(src)
		if reason != "" {
			return r.reject(src, reason, detail, line)
		}
		return r.emit(e)
	}
}

// decodeSlow decodes line with encoding/json when the fast scanner refused
// it: the scanner is exact on valid JSON, so this only words the rejection
// (the empty string means the line was valid after all and r.val holds it).
func (r *RedditReader) decodeSlow(line []byte) string {
	var raw json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Sprintf("%v (byte %d)", err, se.Offset)
		}
		return err.Error()
	}
	if raw = bytes.TrimLeft(raw, " \t\r\n"); len(raw) == 0 || raw[0] != '{' {
		return "not a JSON object"
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return err.Error()
	}
	for k := range r.val {
		r.val[k] = m[redditKeyName(k)]
	}
	return ""
}

// example maps the decoded keys in r.val to an Example, or says why not.
func (r *RedditReader) example(src Source) (Example, Reason, string) {
	prefix := "t1_"
	textKey := rkBody
	if r.submissions {
		prefix, textKey = "t3_", rkTitle
	}
	id, ok, err := r.text(rkID)
	if err != "" {
		return Example{}, ReasonBadJSON, err
	}
	if !ok || id == "" {
		return Example{}, ReasonMissingField, "no id"
	}
	text, ok, err := r.text(textKey)
	if err != "" {
		return Example{}, ReasonBadJSON, err
	}
	if !ok {
		return Example{}, ReasonMissingField, "no " + redditKeyName(textKey)
	}
	e := Example{
		ID: prefix + strings.TrimPrefix(id, prefix), Corpus: "reddit", A: text,
		LangA: r.langA, LangB: r.langB, Source: src, Meta: make(map[string]string, 6),
	}
	if r.submissions {
		if e.B, _, err = r.text(rkSelftext); err != "" {
			return Example{}, ReasonBadJSON, err
		}
		e.Group = e.ID
	}
	metaKeys := [...]int{rkAuthor, rkSubreddit, rkParentID, rkLinkID}
	n := len(metaKeys)
	if r.submissions {
		n = 2 // parent_id and link_id belong to comments
	}
	for _, k := range metaKeys[:n] {
		v, ok, err := r.text(k)
		if err != "" {
			return Example{}, ReasonBadJSON, err
		}
		if ok {
			e.Meta[redditKeyName(k)] = v
		}
	}
	for _, k := range [...]int{rkCreatedUTC, rkScore} {
		v, ok, err := r.integer(k)
		if err != "" {
			return Example{}, ReasonBadNumber, err
		}
		if ok {
			e.Meta[redditKeyName(k)] = v
		}
	}
	e.Dataset = e.Meta["subreddit"]
	if r.dataset != "" {
		e.Dataset = r.dataset
	}
	if !r.submissions {
		e.Group = e.ID
		if link, ok := e.Meta["link_id"]; ok && link != "" {
			e.Group = "t3_" + strings.TrimPrefix(link, "t3_")
		}
	}
	return e, "", ""
}

// text decodes key k as a string. It reports ok false where the key is
// absent or null, and a non-empty err where it holds another type.
func (r *RedditReader) text(k int) (s string, ok bool, err string) {
	v := r.val[k]
	switch {
	case v == nil || string(v) == "null":
		return "", false, ""
	case v[0] != '"':
		return "", false, fmt.Sprintf("%s is %s, want a string", redditKeyName(k), jsonKind(v))
	}
	body := v[1 : len(v)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), true, ""
	}
	r.str = appendJSONString(r.str[:0], body)
	return string(r.str), true, ""
}

// integer decodes key k as whole seconds (or points): a JSON number, or a
// string holding one, normalised to an integer.
func (r *RedditReader) integer(k int) (s string, ok bool, err string) {
	v := r.val[k]
	if v == nil || string(v) == "null" {
		return "", false, ""
	}
	num := v
	if v[0] == '"' {
		num = v[1 : len(v)-1]
		if bytes.IndexByte(num, '\\') >= 0 {
			r.str = appendJSONString(r.str[:0], num)
			num = r.str
		}
		if end, ok := scanJSONNumber(num, 0); !ok || end != len(num) {
			return "", false, fmt.Sprintf("%s %s is not a number", redditKeyName(k), v)
		}
	} else if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return "", false, fmt.Sprintf("%s is %s, want a number", redditKeyName(k), jsonKind(v))
	}
	n, plain := plainInteger(num)
	if !plain {
		var perr error
		n, perr = strconv.ParseInt(string(num), 10, 64)
		if perr != nil {
			f, ferr := strconv.ParseFloat(string(num), 64)
			if ferr != nil || math.Abs(f) >= 1<<63 {
				return "", false, fmt.Sprintf("%s %s is out of range", redditKeyName(k), v)
			}
			n = int64(math.Floor(f))
		}
	}
	return strconv.FormatInt(n, 10), true, ""
}

// plainInteger parses the common forms of a dump's integers: at most 18
// digits, or at most 15 followed by a fraction of zeros (some dumps write
// created_utc as 1706745655.0), with an optional minus sign. It gives what
// strconv.ParseInt, or math.Floor of strconv.ParseFloat, gives for them
// (15 digits are exact in a float64), without the error value a failed
// ParseInt allocates each time; ok is false for anything else, which
// integer parses with strconv.
func plainInteger(num []byte) (n int64, ok bool) {
	i := 0
	neg := len(num) > 0 && num[0] == '-'
	if neg {
		i = 1
	}
	start := i
	for i < len(num) && num[i] >= '0' && num[i] <= '9' {
		n = n*10 + int64(num[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 18 {
		return 0, false
	}
	if i < len(num) {
		if num[i] != '.' || digits > 15 || i+1 == len(num) {
			return 0, false
		}
		for _, c := range num[i+1:] {
			if c != '0' {
				return 0, false
			}
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// jsonKind names the type of a raw JSON value for messages.
func jsonKind(v []byte) string {
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// jsonScan walks one line of JSON, checking all of it as strictly as
// encoding/json does, and keeps the raw values of chosen top-level keys. It
// runs several times faster than decoding a 70-key record with
// encoding/json, and allocates nothing once warm.
type jsonScan struct {
	stack []byte // containers open while skipping a value
	key   []byte // a key with escapes, decoded
}

// jsonMaxDepth is encoding/json's nesting limit, the top-level value
// included.
const jsonMaxDepth = 10000

// jsonPlain marks with 1 the bytes that need no attention inside a string:
// all but the quote (0x22), the backslash (0x5c) and control characters.
// Indexed by a byte, a constant string of 256 needs no bounds check.
const jsonPlain = "" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" + // 0x00
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" + // 0x10
	"\x01\x01\x00\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0x20
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0x30
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0x40
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x01\x01\x01" + // 0x50
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0x60
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0x70
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0x80
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0x90
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0xa0
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0xb0
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0xc0
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0xd0
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" + // 0xe0
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" //  0xf0

// object checks that data is one JSON object and sets vals[lookup(key)] to
// the raw value of each key that lookup knows (nil where absent). It
// reports false for anything that is not a valid JSON object.
func (s *jsonScan) object(data []byte, vals [][]byte, lookup func([]byte) int) bool {
	clear(vals)
	i := skipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipJSONSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipJSONSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		end, esc, ok := scanJSONString(data, i)
		if !ok {
			return false
		}
		key := data[i+1 : end-1]
		if esc {
			s.key = appendJSONString(s.key[:0], key)
			key = s.key
		}
		i = skipJSONSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		start := skipJSONSpace(data, i+1)
		if i, ok = s.skipValue(data, start); !ok {
			return false
		}
		if k := lookup(key); k >= 0 {
			vals[k] = data[start:i]
		}
		i = skipJSONSpace(data, i)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipJSONSpace(data, i+1)
		case '}':
			return skipJSONSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// skipValue checks the value starting at data[i], a member of the
// top-level object, and returns the index just past it.
func (s *jsonScan) skipValue(data []byte, i int) (int, bool) {
	s.stack = s.stack[:0]
	var ok bool
value: // i is at the start of a value
	for {
		if i >= len(data) {
			return 0, false
		}
		switch c := data[i]; c {
		case '"':
			if i, _, ok = scanJSONString(data, i); !ok {
				return 0, false
			}
		case '{', '[':
			if 1+len(s.stack)+1 > jsonMaxDepth {
				return 0, false
			}
			s.stack = append(s.stack, c)
			i = skipJSONSpace(data, i+1)
			if i < len(data) && data[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				s.stack = s.stack[:len(s.stack)-1]
				i++
				break
			}
			if c == '{' {
				if i, ok = memberKey(data, i); !ok {
					return 0, false
				}
			}
			continue value
		case 't':
			if !bytes.HasPrefix(data[i:], []byte("true")) {
				return 0, false
			}
			i += 4
		case 'f':
			if !bytes.HasPrefix(data[i:], []byte("false")) {
				return 0, false
			}
			i += 5
		case 'n':
			if !bytes.HasPrefix(data[i:], []byte("null")) {
				return 0, false
			}
			i += 4
		default:
			if i, ok = scanJSONNumber(data, i); !ok {
				return 0, false
			}
		}
		// i is just past a value: close containers until one goes on.
		for {
			if len(s.stack) == 0 {
				return i, true
			}
			i = skipJSONSpace(data, i)
			if i >= len(data) {
				return 0, false
			}
			top := s.stack[len(s.stack)-1]
			switch data[i] {
			case ',':
				i = skipJSONSpace(data, i+1)
				if top == '{' {
					if i, ok = memberKey(data, i); !ok {
						return 0, false
					}
				}
				continue value
			case top + 2:
				s.stack = s.stack[:len(s.stack)-1]
				i++
			default:
				return 0, false
			}
		}
	}
}

// memberKey checks `"key" :` at data[i] and returns the start of the value.
func memberKey(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return 0, false
	}
	end, _, ok := scanJSONString(data, i)
	if !ok {
		return 0, false
	}
	i = skipJSONSpace(data, end)
	if i >= len(data) || data[i] != ':' {
		return 0, false
	}
	return skipJSONSpace(data, i+1), true
}

func skipJSONSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanJSONString checks the string whose opening quote is data[i] and
// returns the index past its closing quote, and whether it holds escapes.
func scanJSONString(data []byte, i int) (end int, esc, ok bool) {
	i++
	for {
		for i < len(data) && jsonPlain[data[i]] != 0 {
			i++
		}
		if i >= len(data) {
			return 0, false, false
		}
		switch data[i] {
		case '"':
			return i + 1, esc, true
		case '\\':
			esc = true
			if i+1 >= len(data) {
				return 0, false, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) || hex4(data[i+2:i+6]) < 0 {
					return 0, false, false
				}
				i += 6
			default:
				return 0, false, false
			}
		default: // a control character
			return 0, false, false
		}
	}
}

// scanJSONNumber checks the number starting at data[i] and returns the
// index past it.
func scanJSONNumber(data []byte, i int) (int, bool) {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return 0, false
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		i = skipDigits(data, i+1)
	default:
		return 0, false
	}
	if i < len(data) && data[i] == '.' {
		j := skipDigits(data, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := skipDigits(data, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func skipDigits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

// hex4 decodes four hex digits, or returns -1.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// appendJSONString appends the decoded form of s, the inside of a JSON
// string that scanJSONString accepted. Like encoding/json it decodes a
// surrogate pair to one rune and a lone surrogate to U+FFFD.
func appendJSONString(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		j := bytes.IndexByte(s[i:], '\\')
		if j < 0 {
			return append(dst, s[i:]...)
		}
		dst = append(dst, s[i:i+j]...)
		i += j
		c := s[i+1]
		i += 2
		switch c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(s[i:])
			i += 4
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2 = hex4(s[i+2:])
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, c)
		}
	}
	return dst
}

// redditFormats returns the formats this file reads; formatList lists it.
func redditFormats() (fs []Format) {
	fs = append(fs, Format{
		Name: "reddit-comments", Corpus: "reddit", Files: []string{"comments"},
		Summary: "pushshift Reddit comments: one JSON object a line (RC_*)",
		Mapping: `A: body; B: empty (paired later); ID: "t1_"+id; Group: link_id (the thread); Dataset: subreddit; no Label; Meta: author, parent_id, link_id, subreddit, created_utc (integer seconds), score`,
		New: func(in []*Input, o Options) (Reader, error) {
			return NewRedditCommentsReader(in[0], o), nil
		},
		Eval: Eval{Task: TaskRetrieval, Order: 1},
	})
	fs = append(fs, Format{
		Name: "reddit-submissions", Corpus: "reddit", Files: []string{"submissions"},
		Summary: "pushshift Reddit submissions: one JSON object a line (RS_*)",
		Mapping: `A: title; B: selftext (empty for a link post); ID and Group: "t3_"+id; Dataset: subreddit; no Label; Meta: author, subreddit, created_utc (integer seconds), score`,
		New: func(in []*Input, o Options) (Reader, error) {
			return NewRedditSubmissionsReader(in[0], o), nil
		},
	})
	return fs
}
