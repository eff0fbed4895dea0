package corpora

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"strings"
	"unicode/utf8"
)

// Reader streams the Examples of one input (one file, or two aligned
// files).
type Reader interface {
	// Next returns the next Example; io.EOF at the end; a *ParseError for a
	// malformed record, after which Next can be called again; or any other
	// error when the input cannot be read further.
	Next() (Example, error)
	// Stats reports what has been read so far.
	Stats() Stats
	// Close releases the inputs.
	Close() error
}

// Stats counts what a reader has seen.
type Stats struct {
	// Records is every record read: examples, rejects and skips.
	Records int64
	// Examples is the records returned as Examples.
	Examples int64
	// Rejected counts malformed records by reason.
	Rejected map[Reason]int64
	// Skipped counts records left out by design, by kind (an STS pair with
	// no gold score, a header line).
	Skipped map[string]int64
	// Bytes is the decompressed bytes read.
	Bytes int64
}

// RejectedTotal sums Rejected.
func (s Stats) RejectedTotal() int64 {
	var n int64
	for _, v := range s.Rejected {
		n += v
	}
	return n
}

// Add adds o's counts to s.
func (s *Stats) Add(o Stats) {
	s.Records += o.Records
	s.Examples += o.Examples
	s.Bytes += o.Bytes
	for k, v := range o.Rejected {
		if s.Rejected == nil {
			s.Rejected = make(map[Reason]int64)
		}
		s.Rejected[k] += v
	}
	for k, v := range o.Skipped {
		if s.Skipped == nil {
			s.Skipped = make(map[string]int64)
		}
		s.Skipped[k] += v
	}
}

// base holds what every reader shares: its inputs, its limits and its
// counters.
type base struct {
	inputs []*Input
	lim    Limits
	stats  Stats
}

func newBase(lim Limits, inputs ...*Input) base {
	return base{inputs: inputs, lim: lim.withDefaults(),
		stats: Stats{Rejected: make(map[Reason]int64), Skipped: make(map[string]int64)}}
}

func (b *base) Stats() Stats {
	s := b.stats
	s.Rejected = maps.Clone(b.stats.Rejected)
	s.Skipped = maps.Clone(b.stats.Skipped)
	s.Bytes = 0
	for _, in := range b.inputs {
		s.Bytes += in.BytesRead()
	}
	return s
}

func (b *base) Close() error {
	var errs []error
	for _, in := range b.inputs {
		errs = append(errs, in.Close())
	}
	return errors.Join(errs...)
}

// record counts one record read.
func (b *base) record() { b.stats.Records++ }

// emit counts an Example returned.
func (b *base) emit(e Example) (Example, error) {
	b.stats.Examples++
	return e, nil
}

// skip counts a record left out by design.
func (b *base) skip(kind string) { b.stats.Skipped[kind]++ }

// reject counts a malformed record and builds its error, keeping a copy of
// the raw bytes cut to the limit.
func (b *base) reject(src Source, reason Reason, detail string, raw []byte) (Example, error) {
	b.stats.Rejected[reason]++
	if len(raw) > b.lim.MaxRejectBytes {
		raw = raw[:b.lim.MaxRejectBytes]
	}
	return Example{}, &ParseError{Source: src, Reason: reason, Detail: detail, Record: bytes.Clone(raw)}
}

// rejected counts a *ParseError made elsewhere (by the line reader).
func (b *base) rejected(err error) (Example, error) {
	if pe := errorsAsParse(err); pe != nil {
		b.stats.Records++
		b.stats.Rejected[pe.Reason]++
	}
	return Example{}, err
}

// textLine reads the next line that is not blank, counting it as a record
// and skipping blank ones as "blank_line", and rejects a line that is not
// UTF-8 with ReasonBadUTF8 and badUTF8 as the detail. err is the line
// reader's error (counted when it is a *ParseError) or that reject.
func (b *base) textLine(l *lineReader, badUTF8 string) (line []byte, src Source, err error) {
	for {
		line, src, err = l.next()
		if err != nil {
			_, err = b.rejected(err)
			return nil, src, err
		}
		b.record()
		if len(bytes.TrimSpace(line)) == 0 {
			b.skip("blank_line")
			continue
		}
		if !utf8.Valid(line) {
			_, err = b.reject(src, ReasonBadUTF8, badUTF8, line)
			return nil, src, err
		}
		return line, src, nil
	}
}

// textPair reads the next line of each of two aligned files, counting it as
// a record, rejects a pair with a side that is not UTF-8, and returns both
// sides trimmed of white space, with the first file's location. raw is the
// two lines joined by a tab, for a reject the caller makes.
func (b *base) textPair(l *alignedLines) (a, bb string, raw []byte, src Source, err error) {
	la, lb, sa, _, err := l.next()
	if err != nil {
		_, err = b.rejected(err)
		return "", "", nil, sa, err
	}
	b.record()
	if !checkUTF8(la) || !checkUTF8(lb) {
		_, err = b.reject(sa, ReasonBadUTF8, "", joinTab(la, lb))
		return "", "", nil, sa, err
	}
	return strings.TrimSpace(string(la)), strings.TrimSpace(string(lb)), joinTab(la, lb), sa, nil
}

// checkUTF8 rejects text that is not valid UTF-8.
func checkUTF8(line []byte) bool { return utf8.Valid(line) }

// Drain reads r to its end, passing each Example to emit and each malformed
// record to reject (either may be nil). It stops at the first error that is
// not a *ParseError, or the first error emit or reject returns.
func Drain(r Reader, emit func(Example) error, reject func(*ParseError) error) error {
	for {
		e, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if pe := errorsAsParse(err); pe != nil {
			if reject != nil {
				if err := reject(pe); err != nil {
					return err
				}
			}
			continue
		}
		if err != nil {
			return err
		}
		if emit != nil {
			if err := emit(e); err != nil {
				return err
			}
		}
	}
}
