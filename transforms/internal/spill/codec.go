package spill

// Row encoding (AppendRow). All integers are varints (encoding/binary):
// lengths and counts unsigned, int64 and int32 values zigzag-signed; floats
// are raw IEEE 754 bits, little-endian, so NaN payloads, ±Inf and -0 come
// back bit for bit.
//
//	row     = uvarint(len(body)) body
//	body    = flags                      1 byte: bit 0 set when Label != nil, bit 1 when a key follows; other bits 0
//	          [key]                      16 bytes, only when flags bit 1 is set (AppendRowKeyed)
//	          str(ID) str(Corpus) str(Dataset) str(Split) str(A) str(B)
//	          strs(Context) str(LangA) str(LangB)
//	          [float64(*Label)]          only when flags bit 0 is set
//	          str(GroupKey) str(SourceFile) varint(SourceLine) varint(SourceOffset)
//	          uvarint(n) n×float64       Scores
//	          uvarint(n) n×(key(k) str(v)) Meta, keys in strictly increasing byte order
//	          toks(TokensA, A) toks(TokensB, B)
//	          uvarint(n) n×varint        IDsA, then IDsB
//	          uvarint(n) n×float32       TopicsA, then TopicsB
//	str     = uvarint(len) bytes
//	strs    = uvarint(n) n×str
//	toks    = uvarint(n) n×tok
//	tok     = uvarint(len<<1) bytes                 a literal token
//	        | uvarint(len<<1 | 1) uvarint(skip)     text[at+skip : at+skip+len]
//	key     = uvarint(len<<1) bytes                 a literal key
//	        | uvarint(i<<1 | 1)                     well-known key i (spillMetaKey)
//
// Tokens are mostly the text they were cut from, in order, so a token found
// in its text (A for TokensA, B for TokensB) shortly after the end of the
// previous referenced token (at, starting at 0) is written as a reference
// of two bytes instead of one plus its length, and decodes without a copy.
// That takes a sixth off a typical Reddit row, which compresses and decodes
// faster for it. Other tokens (lowercased ones, the sentence tags) are
// literals.
//
// The readers' and the corpora's usual Meta keys ("author", "parent_id",
// ...) are written as one byte each: they were a third of the bytes of a
// Reddit extraction's spills.
//
// The encoding of a row is a function of its value: Meta is written in key
// order, so equal rows encode to equal bytes.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/parastream/parastream/shards"
)

// ErrCorrupt is wrapped by every error that reports a spill file or an
// encoded row that cannot be decoded: bad magic, a CRC mismatch, a
// truncated file, an impossible length. Errors from the filesystem itself
// (permission denied, network failures) do not wrap it.
var ErrCorrupt = errors.New("corrupt spill data")

// AppendRow appends the encoding of r to dst and returns the extended
// buffer. The encoding is self-delimiting (DecodeRow reports its length) and
// deterministic: equal rows give equal bytes whatever the iteration order of
// r.Meta. See the top of codec.go for the layout.
func AppendRow(dst []byte, r *shards.Row) []byte { return appendRow(dst, r, nil) }

// A Key is 16 bytes that a stage computes of a row and the next stage
// needs (the dedupe stage's hash of the normalised key): written with the
// row (AppendRowKeyed, Writer.WriteKeyed) and read back with it
// (DecodeRowKeyed, CopyFilesKeyed), it is not computed twice.
type Key [16]byte

// AppendRowKeyed is AppendRow of r with key: DecodeRowKeyed returns it.
func AppendRowKeyed(dst []byte, r *shards.Row, key Key) []byte { return appendRow(dst, r, &key) }

func appendRow(dst []byte, r *shards.Row, key *Key) []byte {
	// The body's length goes first. Reserve two bytes for it, enough for
	// bodies of 128 B to 16 KiB, the common case, and move the body when the
	// guess was wrong.
	const guess = 2
	start := len(dst)
	dst = append(dst, 0, 0)
	body := len(dst)

	var flags byte
	if r.Label != nil {
		flags |= 1
	}
	if key != nil {
		flags |= 2
	}
	dst = append(dst, flags)
	if key != nil {
		dst = append(dst, key[:]...)
	}
	dst = spillAppendString(dst, r.ID)
	dst = spillAppendString(dst, r.Corpus)
	dst = spillAppendString(dst, r.Dataset)
	dst = spillAppendString(dst, r.Split)
	dst = spillAppendString(dst, r.A)
	dst = spillAppendString(dst, r.B)
	dst = spillAppendStrings(dst, r.Context)
	dst = spillAppendString(dst, r.LangA)
	dst = spillAppendString(dst, r.LangB)
	if r.Label != nil {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(*r.Label))
	}
	dst = spillAppendString(dst, r.GroupKey)
	dst = spillAppendString(dst, r.SourceFile)
	dst = binary.AppendVarint(dst, r.SourceLine)
	dst = binary.AppendVarint(dst, r.SourceOffset)
	dst = binary.AppendUvarint(dst, uint64(len(r.Scores)))
	for _, f := range r.Scores {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
	}
	dst = spillAppendMeta(dst, r.Meta)
	dst = spillAppendTokens(dst, r.TokensA, r.A)
	dst = spillAppendTokens(dst, r.TokensB, r.B)
	dst = spillAppendInt32s(dst, r.IDsA)
	dst = spillAppendInt32s(dst, r.IDsB)
	dst = spillAppendFloat32s(dst, r.TopicsA)
	dst = spillAppendFloat32s(dst, r.TopicsB)

	n := uint64(len(dst) - body)
	if k := spillUvarintLen(n); k != guess {
		end := len(dst)
		if k > guess {
			dst = append(dst, make([]byte, k-guess)...)
		}
		copy(dst[start+k:], dst[body:end])
		dst = dst[:start+k+int(n)]
	}
	binary.PutUvarint(dst[start:], n)
	return dst
}

func spillUvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

func spillAppendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func spillAppendStrings(dst []byte, ss []string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ss)))
	for _, s := range ss {
		dst = spillAppendString(dst, s)
	}
	return dst
}

// spillTokenSearch is how far past the previous token, beyond the length
// of the token itself, AppendRow looks for a token in its text.
const spillTokenSearch = 64

func spillAppendTokens(dst []byte, toks []string, text string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(toks)))
	at := 0
	for _, tok := range toks {
		if tok != "" {
			rest := text[at:]
			i := -1
			switch {
			case strings.HasPrefix(rest, tok):
				i = 0
			case len(rest) > 0 && strings.HasPrefix(rest[1:], tok):
				i = 1
			case len(rest) >= len(tok) && strings.EqualFold(rest[:len(tok)], tok),
				len(rest) > len(tok) && strings.EqualFold(rest[1:1+len(tok)], tok):
				// The token is the text's next word lowercased (the
				// tokens of --lower): written whole, as a search of the
				// text would almost never find it further on.
			default:
				i = strings.Index(rest[:min(len(rest), len(tok)+spillTokenSearch)], tok)
			}
			if i >= 0 {
				dst = binary.AppendUvarint(dst, uint64(len(tok))<<1|1)
				dst = binary.AppendUvarint(dst, uint64(i))
				at += i + len(tok)
				continue
			}
		}
		dst = binary.AppendUvarint(dst, uint64(len(tok))<<1)
		dst = append(dst, tok...)
	}
	return dst
}

func spillAppendInt32s(dst []byte, v []int32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(v)))
	for _, x := range v {
		dst = binary.AppendVarint(dst, int64(x))
	}
	return dst
}

func spillAppendFloat32s(dst []byte, v []float32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(v)))
	for _, f := range v {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(f))
	}
	return dst
}

func spillAppendMeta(dst []byte, m map[string]string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	if len(m) == 0 {
		return dst
	}
	// The pairs are taken out of the map together and sorted by key: no
	// look-up a key after the sort, and for the few keys a row has (six
	// for a Reddit pair) an insertion sort, without slices.Sort's calls.
	var buf [16][2]string
	kv := buf[:0]
	for k, v := range m {
		kv = append(kv, [2]string{k, v})
	}
	if len(kv) <= len(buf) {
		for i := 1; i < len(kv); i++ {
			for j := i; j > 0 && kv[j][0] < kv[j-1][0]; j-- {
				kv[j], kv[j-1] = kv[j-1], kv[j]
			}
		}
	} else {
		slices.SortFunc(kv, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	}
	for _, p := range kv {
		if i := spillMetaKeyIndex(p[0]); i >= 0 {
			dst = binary.AppendUvarint(dst, uint64(i)<<1|1)
		} else {
			dst = binary.AppendUvarint(dst, uint64(len(p[0]))<<1)
			dst = append(dst, p[0]...)
		}
		dst = spillAppendString(dst, p[1])
	}
	return dst
}

// spillMetaKeyIndex is the index of a well-known Meta key, or -1: the
// inverse of spillMetaKey. The list is part of the format: keys are only
// ever added at its end.
func spillMetaKeyIndex(k string) int {
	switch k {
	case "author":
		return 0
	case "created_utc":
		return 1
	case "kind":
		return 2
	case "link_id":
		return 3
	case "parent_author":
		return 4
	case "parent_id":
		return 5
	case "reply_author":
		return 6
	case "score":
		return 7
	case "subreddit":
		return 8
	case "tier":
		return 9
	case "entailment":
		return 10
	case "align":
		return 11
	case "qid":
		return 12
	case "genre":
		return 13
	}
	return -1
}

// spillMetaKeyCount is the number of well-known Meta keys.
const spillMetaKeyCount = 14

// spillMetaKey is well-known Meta key i (i < spillMetaKeyCount).
func spillMetaKey(i int) string {
	switch i {
	case 0:
		return "author"
	case 1:
		return "created_utc"
	case 2:
		return "kind"
	case 3:
		return "link_id"
	case 4:
		return "parent_author"
	case 5:
		return "parent_id"
	case 6:
		return "reply_author"
	case 7:
		return "score"
	case 8:
		return "subreddit"
	case 9:
		return "tier"
	case 10:
		return "entailment"
	case 11:
		return "align"
	case 12:
		return "qid"
	case 13:
		return "genre"
	}
	return ""
}

// DecodeRow decodes the row at the start of b into r and returns the number
// of bytes it took. A truncated or corrupt encoding returns an error wrapping
// ErrCorrupt; DecodeRow never panics on bad input and never allocates
// more than a small multiple of len(b).
//
// Every field of r is overwritten, and every value AppendRow wrote comes back
// exactly (float bits included), with one normalisation: an empty list or
// map comes back nil, as shards.Row treats a missing list as an empty one.
//
// Memory: the decoded strings never alias b, so b may be reused at once.
// They share one allocation per row (a copy of the row's encoding), so
// keeping any one string of a row keeps that whole copy alive; strings.Clone
// what you keep of many rows. To save allocations, DecodeRow reuses the
// backing arrays of r's slices and r's map (not the Label, which is always
// a fresh pointer): a caller that keeps a decoded row, or any of its slices
// or its map, past the next DecodeRow into the same r must zero r first
// (*r = shards.Row{}). A shallow copy of the struct is not enough. On error
// r holds an unspecified mix of old and new values.
func DecodeRow(b []byte, r *shards.Row) (n int, err error) {
	n, _, _, err = DecodeRowKeyed(b, r)
	return n, err
}

// DecodeRowKeyed is DecodeRow that also returns the row's key, with ok
// false for a row written without one.
func DecodeRowKeyed(b []byte, r *shards.Row) (n int, key Key, ok bool, err error) {
	size, k := binary.Uvarint(b)
	if k <= 0 {
		if k == 0 {
			return 0, key, false, fmt.Errorf("%w: row length: truncated varint", ErrCorrupt)
		}
		return 0, key, false, fmt.Errorf("%w: row length: varint overflows 64 bits", ErrCorrupt)
	}
	if size > uint64(len(b)-k) {
		return 0, key, false, fmt.Errorf("%w: row of %d bytes, only %d left", ErrCorrupt, size, len(b)-k)
	}
	if size == 0 {
		return 0, key, false, fmt.Errorf("%w: empty row", ErrCorrupt)
	}
	body := b[k : k+int(size)]
	d := spillDecoder{b: body, s: string(body)}
	d.decode(r)
	if d.err != nil {
		return 0, key, false, d.err
	}
	if d.i != len(body) {
		return 0, key, false, fmt.Errorf("%w: %d bytes left over after the row's last field", ErrCorrupt, len(body)-d.i)
	}
	return k + int(size), d.rowKey, d.hasKey, nil
}

// spillDecoder reads one row body. b and s hold the same bytes: numbers are
// read from b and strings sliced from s, so that all of a row's strings
// share s. field names the field being read, for errors. The first error
// sticks: counts read after an error are 0, so nothing is allocated for
// them, and decode stops at the next field.
type spillDecoder struct {
	b      []byte
	s      string
	i      int
	field  string
	err    error
	rowKey Key
	hasKey bool
}

func (d *spillDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at byte %d: %s", ErrCorrupt, d.field, d.i, fmt.Sprintf(format, args...))
	}
}

func (d *spillDecoder) uvarint() uint64 {
	// Most varints of a row (string lengths, counts) are one byte: that
	// case is inlined.
	if i := d.i; i < len(d.b) {
		if c := d.b[i]; c < 0x80 {
			d.i = i + 1
			return uint64(c)
		}
	}
	return d.uvarintSlow()
}

func (d *spillDecoder) uvarintSlow() uint64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.b[d.i:])
	if k <= 0 {
		if k == 0 {
			d.fail("truncated varint")
		} else {
			d.fail("varint overflows 64 bits")
		}
		return 0
	}
	d.i += k
	return v
}

func (d *spillDecoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// count reads a list length and checks that n elements of at least minSize
// bytes each fit in what is left of the row, before anything is allocated.
func (d *spillDecoder) count(minSize int) int {
	n := d.uvarint()
	if n == 0 || d.err != nil {
		return 0
	}
	if left := len(d.b) - d.i; n > uint64(left/minSize) {
		d.fail("%d elements cannot fit in the %d bytes left", n, left)
		return 0
	}
	return int(n)
}

func (d *spillDecoder) str() string {
	// Fast path: a one-byte length that fits.
	if i := d.i; i < len(d.b) && d.b[i] < 0x80 {
		n := int(d.b[i])
		i++
		if n <= len(d.b)-i {
			d.i = i + n
			return d.s[i : i+n]
		}
	}
	return d.take(d.uvarint())
}

// take reads a string of the next n bytes.
func (d *spillDecoder) take(n uint64) string {
	if n > uint64(len(d.b)-d.i) {
		d.strFail(n)
		return ""
	}
	s := d.s[d.i : d.i+int(n)]
	d.i += int(n)
	return s
}

// key reads a Meta key: a well-known one by its index, or a literal.
func (d *spillDecoder) key() string {
	tag := d.uvarint()
	if tag&1 == 1 {
		i := tag >> 1
		if i >= spillMetaKeyCount {
			d.fail("well-known key %d of %d", i, spillMetaKeyCount)
			return ""
		}
		return spillMetaKey(int(i))
	}
	return d.take(tag >> 1)
}

func (d *spillDecoder) strFail(n uint64) {
	d.fail("string of %d bytes, only %d left", n, len(d.b)-d.i)
}

func (d *spillDecoder) fixed(size int) []byte {
	if len(d.b)-d.i < size {
		d.fail("truncated")
		return nil
	}
	p := d.b[d.i : d.i+size]
	d.i += size
	return p
}

// strs reads a list of strings: the hot loop of a row of tokens, written
// with the position in a local.
func (d *spillDecoder) strs(dst []string) []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	dst = spillReuse(dst, n)
	b, s, i := d.b, d.s, d.i
	for j := range dst {
		var l uint64
		if i < len(b) && b[i] < 0x80 {
			l = uint64(b[i])
			i++
		} else {
			d.i = i
			l = d.uvarintSlow()
			i = d.i
			if d.err != nil {
				return nil
			}
		}
		if l > uint64(len(b)-i) {
			d.i = i
			d.strFail(l)
			return nil
		}
		dst[j] = s[i : i+int(l)]
		i += int(l)
	}
	d.i = i
	return dst
}

// tokens reads a token list cut from text (see toks in the format).
func (d *spillDecoder) tokens(dst []string, text string) []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	dst = spillReuse(dst, n)
	at := 0
	for j := range dst {
		tag := d.uvarint()
		l := tag >> 1
		if tag&1 == 0 {
			if l > uint64(len(d.b)-d.i) {
				d.strFail(l)
				return nil
			}
			dst[j] = d.s[d.i : d.i+int(l)]
			d.i += int(l)
			continue
		}
		skip := d.uvarint()
		if d.err != nil {
			return nil
		}
		if left := uint64(len(text) - at); skip > left || l > left-skip {
			d.fail("token of %d bytes at %d+%d is outside its text of %d bytes", l, at, skip, len(text))
			return nil
		}
		at += int(skip)
		dst[j] = text[at : at+int(l)]
		at += int(l)
	}
	return dst
}

func (d *spillDecoder) int32s(dst []int32) []int32 {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	dst = spillReuse(dst, n)
	for j := range dst {
		v := d.varint()
		if v != int64(int32(v)) {
			d.fail("%d overflows int32", v)
			return nil
		}
		dst[j] = int32(v)
	}
	return dst
}

func (d *spillDecoder) float32s(dst []float32) []float32 {
	n := d.count(4)
	if n == 0 {
		return nil
	}
	dst = spillReuse(dst, n)
	p := d.fixed(4 * n)
	for j := range dst {
		dst[j] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*j:]))
	}
	return dst
}

func (d *spillDecoder) float64s(dst []float64) []float64 {
	n := d.count(8)
	if n == 0 {
		return nil
	}
	dst = spillReuse(dst, n)
	p := d.fixed(8 * n)
	for j := range dst {
		dst[j] = math.Float64frombits(binary.LittleEndian.Uint64(p[8*j:]))
	}
	return dst
}

func (d *spillDecoder) meta(m map[string]string) map[string]string {
	n := d.count(2)
	if n == 0 {
		return nil
	}
	if m == nil {
		m = make(map[string]string, n)
	} else {
		clear(m)
	}
	prev := ""
	for j := 0; j < n; j++ {
		k := d.key()
		v := d.str()
		if d.err != nil {
			return nil
		}
		if j > 0 && k <= prev {
			d.fail("key %q does not follow %q: keys must be strictly increasing", k, prev)
			return nil
		}
		m[k] = v
		prev = k
	}
	return m
}

// spillReuse returns a slice of length n, on s's array when it is big enough.
func spillReuse[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

func (d *spillDecoder) decode(r *shards.Row) {
	d.field = "flags"
	flags := d.fixed(1)
	if flags == nil {
		return
	}
	if flags[0]&^3 != 0 {
		d.fail("unknown flags %#x", flags[0])
		return
	}
	if d.hasKey = flags[0]&2 != 0; d.hasKey {
		d.field = "key"
		k := d.fixed(len(d.rowKey))
		if k == nil {
			return
		}
		copy(d.rowKey[:], k)
	}
	d.field = "strings"
	r.ID = d.str()
	r.Corpus = d.str()
	r.Dataset = d.str()
	r.Split = d.str()
	r.A = d.str()
	r.B = d.str()
	d.field = "context"
	r.Context = d.strs(r.Context)
	d.field = "lang"
	r.LangA = d.str()
	r.LangB = d.str()
	r.Label = nil
	if flags[0]&1 != 0 {
		d.field = "label"
		if p := d.fixed(8); p != nil {
			label := math.Float64frombits(binary.LittleEndian.Uint64(p))
			r.Label = &label
		}
	}
	d.field = "group_key/source"
	r.GroupKey = d.str()
	r.SourceFile = d.str()
	r.SourceLine = d.varint()
	r.SourceOffset = d.varint()
	if d.err != nil {
		return
	}
	d.field = "scores"
	r.Scores = d.float64s(r.Scores)
	d.field = "meta"
	r.Meta = d.meta(r.Meta)
	d.field = "tokens_a"
	r.TokensA = d.tokens(r.TokensA, r.A)
	d.field = "tokens_b"
	r.TokensB = d.tokens(r.TokensB, r.B)
	if d.err != nil {
		return
	}
	d.field = "ids_a"
	r.IDsA = d.int32s(r.IDsA)
	d.field = "ids_b"
	r.IDsB = d.int32s(r.IDsB)
	d.field = "topics_a"
	r.TopicsA = d.float32s(r.TopicsA)
	d.field = "topics_b"
	r.TopicsB = d.float32s(r.TopicsB)
}
