package lexicon

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrBadVocabulary is wrapped by every error of ReadVocabFile about the
// content of the file.
var ErrBadVocabulary = errors.New("bad vocabulary file")

// MaxVocabularyLine bounds a line of a vocabulary file.
const MaxVocabularyLine = 64 << 10

// ReadVocabFile reads a vocabulary file, the vocab.tsv featurize writes
// (featurize.Vocabulary.WriteTo): an optional first line "#texts\tN",
// then one entry a line, "token\tcount\tdocs", the id of an entry being
// its place among the entries. It calls entry for each, with that id, and
// returns N (0 without the line). A malformed line gives an error wrapping
// ErrBadVocabulary that names the line and what is wrong; so does an
// error of entry (the caller's own check of the entry), which stops the
// reading. It lives here, below
// featurize, so that a trainer reads the words of a published vocabulary
// without the featurize pipeline (and Beam).
func ReadVocabFile(r io.Reader, entry func(id int, tok string, count, docs int64) error) (texts int64, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), MaxVocabularyLine)
	line, id := 0, 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: line %d: %s", ErrBadVocabulary, line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 && bytes.HasPrefix(b, []byte("#texts\t")) {
			n, err := strconv.ParseInt(string(b[len("#texts\t"):]), 10, 64)
			if err != nil || n < 0 {
				return 0, bad("the number of texts %q is not a count", b[len("#texts\t"):])
			}
			texts = n
			continue
		}
		fields := bytes.Split(b, []byte{'\t'})
		if len(fields) != 3 {
			return 0, bad("%d tab-separated fields, want 3 (token, count, docs)", len(fields))
		}
		tok := string(fields[0])
		if tok == "" || !utf8.ValidString(tok) || strings.ContainsFunc(tok, unicode.IsSpace) {
			return 0, bad("token %q is empty, not UTF-8 or holds whitespace", tok)
		}
		count, err1 := strconv.ParseInt(string(fields[1]), 10, 64)
		docs, err2 := strconv.ParseInt(string(fields[2]), 10, 64)
		if err1 != nil || err2 != nil || count < 0 || docs < 0 {
			return 0, bad("counts %q and %q are not non-negative integers", fields[1], fields[2])
		}
		if id >= 1<<31-1 {
			return 0, bad("too many entries")
		}
		if err := entry(id, tok, count, docs); err != nil {
			return 0, bad("%v", err)
		}
		id++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return 0, fmt.Errorf("%w: line %d is longer than %d bytes", ErrBadVocabulary, line+1, MaxVocabularyLine)
		}
		return 0, fmt.Errorf("reading vocabulary: %w", err)
	}
	return texts, nil
}
