package synth

import (
	"strconv"
	"unicode/utf8"
)

// JSON is written by hand, the way pushshift's Python writer does it
// (json.dumps with ensure_ascii): every character outside ASCII becomes a
// \uXXXX escape (a surrogate pair beyond the BMP), control characters are
// escaped, "/" is not. strconv.Quote is not a JSON quoter (it writes \x..
// and \U........ escapes), so this file has its own.

const hexDigits = "0123456789abcdef"

// jsonSafe reports whether the byte c is written as it is inside a
// string: printable ASCII but the quote (0x22) and the backslash (0x5c).
// (The reddit reader's jsonPlain table answers the reverse question, for
// any byte; a generator writes ASCII only.)
func jsonSafe(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }

// appendJSONString appends s as a quoted JSON string, ASCII only.
func appendJSONString[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	b = appendJSONInner(b, s)
	return append(b, '"')
}

// appendJSONInner appends the inside of a quoted JSON string.
func appendJSONInner[S ~string | ~[]byte](b []byte, s S) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if jsonSafe(c) {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch {
		case c == '"':
			b = append(b, '\\', '"')
			i++
		case c == '\\':
			b = append(b, '\\', '\\')
			i++
		case c == '\n':
			b = append(b, '\\', 'n')
			i++
		case c == '\t':
			b = append(b, '\\', 't')
			i++
		case c == '\r':
			b = append(b, '\\', 'r')
			i++
		case c < 0x20:
			b = appendU4(b, rune(c))
			i++
		default:
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			if r >= 0x10000 {
				r -= 0x10000
				b = appendU4(b, 0xd800+(r>>10)&0x3ff)
				b = appendU4(b, 0xdc00+r&0x3ff)
			} else {
				b = appendU4(b, r)
			}
			i += size
		}
		start = i
	}
	return append(b, s[start:]...)
}

func appendU4(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// jsonObject appends the members of one JSON object in the layout Python
// writes (", " between members, ": " after keys).
type jsonObject struct {
	b     []byte
	first bool
}

func (o *jsonObject) open() {
	o.b = append(o.b, '{')
	o.first = true
}

func (o *jsonObject) close() { o.b = append(o.b, '}') }

// key writes a key, which must need no escaping.
func (o *jsonObject) key(k string) {
	if o.first {
		o.first = false
		o.b = append(o.b, '"')
	} else {
		o.b = append(o.b, ',', ' ', '"')
	}
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':', ' ')
}

func (o *jsonObject) str(k, v string) {
	o.key(k)
	o.b = appendJSONString(o.b, v)
}

func (o *jsonObject) strBytes(k string, v []byte) {
	o.key(k)
	o.b = appendJSONString(o.b, v)
}

// raw writes a value that is already JSON (null, true, [], {}).
func (o *jsonObject) raw(k, v string) {
	o.key(k)
	o.b = append(o.b, v...)
}

func (o *jsonObject) null(k string) { o.raw(k, "null") }

func (o *jsonObject) boolean(k string, v bool) {
	if v {
		o.raw(k, "true")
	} else {
		o.raw(k, "false")
	}
}

func (o *jsonObject) int(k string, v int64) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
}

// float writes v as Python writes a float: with ".0" when whole.
func (o *jsonObject) float(k string, v float64) {
	o.key(k)
	o.b = appendPyFloat(o.b, v)
}

func appendPyFloat(b []byte, v float64) []byte {
	if v == float64(int64(v)) && v < 1e16 && v > -1e16 {
		b = strconv.AppendInt(b, int64(v), 10)
		return append(b, '.', '0')
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// base36 appends n in base 36, as Reddit writes ids.
func appendBase36(b []byte, n uint64) []byte { return strconv.AppendUint(b, n, 36) }
