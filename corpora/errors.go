package corpora

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrTruncated reports a compressed file that ends in the middle of a
	// stream: its content is incomplete and the job must not treat it as
	// read.
	ErrTruncated = errors.New("truncated archive")
	// ErrTooLarge reports a file whose decompressed size passed
	// Limits.MaxDecompressedBytes.
	ErrTooLarge = errors.New("decompressed size over the limit")
	// ErrLengthMismatch reports two line-aligned files (Europarl, SimpWiki,
	// STS input and gold) with different numbers of lines.
	ErrLengthMismatch = errors.New("parallel files differ in length")
	// ErrFormat reports a file that is not in the format its reader expects
	// (a missing header, for one).
	ErrFormat = errors.New("wrong file format")
)

// Reason classifies a malformed record. Counters and rejects files use it.
type Reason string

// The reasons a record is rejected.
const (
	ReasonLineTooLong      Reason = "line_too_long"
	ReasonBadUTF8          Reason = "bad_utf8"
	ReasonBadJSON          Reason = "bad_json"
	ReasonMissingField     Reason = "missing_field"
	ReasonFieldCount       Reason = "field_count"
	ReasonBadNumber        Reason = "bad_number"
	ReasonBadScore         Reason = "score_out_of_range"
	ReasonEmptyText        Reason = "empty_text"
	ReasonUnterminatedQuot Reason = "unterminated_quote"
	ReasonBadQuote         Reason = "bad_quote"
	ReasonBadFeature       Reason = "bad_feature"
	ReasonBadAlignment     Reason = "bad_alignment"
	ReasonRecordTooLarge   Reason = "record_too_large"
	// ReasonBadLabel: a label that is not one of the format's (an SNLI
	// gold_label, a SemEval relevance), or one that disagrees with the gold
	// file beside the input.
	ReasonBadLabel Reason = "bad_label"
)

// ParseError is a malformed record. The reader that returned it has skipped
// the record and can go on.
type ParseError struct {
	Source Source
	Reason Reason
	// Detail says what was wrong in words.
	Detail string
	// Record holds the raw bytes of the record, cut to
	// Limits.MaxRejectBytes, for the rejects file.
	Record []byte
}

func (e *ParseError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("%s: %s", e.Source, e.Reason)
	}
	return fmt.Sprintf("%s: %s: %s", e.Source, e.Reason, e.Detail)
}

// FileError is a problem with a whole file: reading it cannot go on.
type FileError struct {
	File string
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("%s: %v", e.File, e.Err) }

// Unwrap returns the cause, so errors.Is finds ErrTruncated and friends.
func (e *FileError) Unwrap() error { return e.Err }

// IsParseError reports whether err is a *ParseError: a bad record, not a bad
// file.
func IsParseError(err error) bool {
	var pe *ParseError
	return errors.As(err, &pe)
}
