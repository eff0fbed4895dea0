package corpora

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

const utf8BOM = "\xef\xbb\xbf"

// lineReader yields the lines of an Input without their terminators (\n or
// \r\n), with the 1-based number and byte offset of each. A line longer than
// the limit is skipped to its end without being held in memory, and reported
// as a *ParseError. A final line without a newline is a line.
type lineReader struct {
	in   *Input
	br   *bufio.Reader
	max  int
	keep int
	line int64
	off  int64
	buf  []byte
	done bool
	err  error // a read error, returned again on every later call
}

func newLineReader(in *Input, lim Limits) *lineReader {
	lim = lim.withDefaults()
	return &lineReader{in: in, br: bufio.NewReaderSize(in, 64<<10), max: lim.MaxLineBytes, keep: lim.MaxRejectBytes}
}

// next returns the next line. The slice is valid until the next call.
func (l *lineReader) next() ([]byte, Source, error) {
	if l.err != nil {
		return nil, Source{}, l.err
	}
	if l.done {
		return nil, Source{}, io.EOF
	}
	l.line++
	src := Source{File: l.in.Name, Line: l.line, Offset: l.off}
	l.buf = l.buf[:0]
	tooLong := false
	var total int64
	for {
		chunk, err := l.br.ReadSlice('\n')
		total += int64(len(chunk))
		if !tooLong {
			if len(l.buf)+len(chunk) > l.max+2 { // +2: the terminator is not part of the line
				tooLong = true
				room := l.keep - len(l.buf)
				if room > 0 {
					l.buf = append(l.buf, chunk[:min(room, len(chunk))]...)
				}
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		l.off += total
		if err != nil {
			if err != io.EOF {
				l.err = err
				return nil, src, err
			}
			l.done = true
			if total == 0 {
				l.line--
				return nil, src, io.EOF
			}
		}
		break
	}
	if tooLong {
		return nil, src, &ParseError{Source: src, Reason: ReasonLineTooLong,
			Detail: fmt.Sprintf("%d bytes, limit %d", total, l.max), Record: bytes.Clone(l.buf[:min(len(l.buf), l.keep)])}
	}
	line := l.buf
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if l.line == 1 {
		line = bytes.TrimPrefix(line, []byte(utf8BOM))
	}
	if len(line) > l.max {
		return nil, src, &ParseError{Source: src, Reason: ReasonLineTooLong,
			Detail: fmt.Sprintf("%d bytes, limit %d", len(line), l.max), Record: bytes.Clone(line[:min(len(line), l.keep)])}
	}
	return line, src, nil
}

// alignedLines reads two files line by line in lockstep (Europarl, SimpWiki,
// TurkCorpus, STS input and gold). A difference in length is a *FileError
// wrapping ErrLengthMismatch that names both files.
type alignedLines struct {
	a, b *lineReader
	err  error // a file-level error, returned again on every later call
}

func newAlignedLines(a, b *Input, lim Limits) *alignedLines {
	return &alignedLines{a: newLineReader(a, lim), b: newLineReader(b, lim)}
}

// next returns the next line of each file. A *ParseError from either side
// (a line too long) consumes the line on both sides, so they stay aligned.
func (p *alignedLines) next() (la, lb []byte, sa, sb Source, err error) {
	if p.err != nil {
		return nil, nil, sa, sb, p.err
	}
	la, sa, lb, sb, err = p.step()
	if err != nil && err != io.EOF && !IsParseError(err) {
		p.err = err
	}
	return la, lb, sa, sb, err
}

func (p *alignedLines) step() (la []byte, sa Source, lb []byte, sb Source, err error) {
	la, sa, errA := p.a.next()
	lb, sb, errB := p.b.next()
	switch {
	case errA == io.EOF && errB == io.EOF:
		return nil, sa, nil, sb, io.EOF
	case errA == io.EOF && errB != nil && !IsParseError(errB):
		return nil, sa, nil, sb, errB
	case errB == io.EOF && errA != nil && !IsParseError(errA):
		return nil, sa, nil, sb, errA
	case errA == io.EOF || errB == io.EOF:
		return nil, sa, nil, sb, p.mismatch(errA == io.EOF)
	}
	for _, err := range []error{errA, errB} {
		if err != nil && !IsParseError(err) {
			return nil, sa, nil, sb, err
		}
	}
	if errA != nil {
		return nil, sa, nil, sb, errA
	}
	if errB != nil {
		return nil, sa, nil, sb, errB
	}
	return la, sa, lb, sb, nil
}

// mismatch drains the longer file to report both lengths.
func (p *alignedLines) mismatch(aEnded bool) error {
	longer, shorter := p.b, p.a
	if !aEnded {
		longer, shorter = p.a, p.b
	}
	for {
		_, _, err := longer.next()
		if err == io.EOF {
			break
		}
		if err != nil && !IsParseError(err) {
			return err
		}
	}
	return &FileError{File: p.a.in.Name, Err: fmt.Errorf("%w: %s has %d lines but %s has %d",
		ErrLengthMismatch, longer.in.Name, longer.line, shorter.in.Name, shorter.line)}
}

// errorsAsParse returns err as a *ParseError, or nil.
func errorsAsParse(err error) *ParseError {
	if err == nil {
		return nil
	}
	if pe, ok := err.(*ParseError); ok {
		return pe
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}
