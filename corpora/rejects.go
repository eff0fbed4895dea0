package corpora

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"unicode/utf8"
)

// Reject is one line of a rejects file: JSON with the location, the reason
// and the raw record. Record holds the bytes as text when they are valid
// UTF-8; otherwise RecordBase64 holds them, so that nothing is lost.
type Reject struct {
	File         string `json:"file"`
	Line         int64  `json:"line,omitempty"`
	Offset       int64  `json:"offset"`
	Reason       Reason `json:"reason"`
	Detail       string `json:"detail,omitempty"`
	Record       string `json:"record,omitempty"`
	RecordBase64 string `json:"record_base64,omitempty"`
}

// NewReject converts a ParseError to its rejects-file form.
func NewReject(pe *ParseError) Reject {
	r := Reject{File: pe.Source.File, Line: pe.Source.Line, Offset: pe.Source.Offset, Reason: pe.Reason, Detail: pe.Detail}
	if utf8.Valid(pe.Record) {
		r.Record = string(pe.Record)
	} else {
		r.RecordBase64 = base64.StdEncoding.EncodeToString(pe.Record)
	}
	return r
}

// RawRecord returns the raw bytes of the rejected record.
func (r Reject) RawRecord() ([]byte, error) {
	if r.RecordBase64 != "" {
		return base64.StdEncoding.DecodeString(r.RecordBase64)
	}
	return []byte(r.Record), nil
}

// RejectsWriter writes rejects as JSON lines.
type RejectsWriter struct {
	w   *bufio.Writer
	enc *json.Encoder
	n   int64
}

// NewRejectsWriter writes to w. Call Flush at the end.
func NewRejectsWriter(w io.Writer) *RejectsWriter {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &RejectsWriter{w: bw, enc: enc}
}

// Write appends one reject. Its signature fits Drain's reject argument.
func (rw *RejectsWriter) Write(pe *ParseError) error {
	rw.n++
	return rw.enc.Encode(NewReject(pe))
}

// Count is the number of rejects written.
func (rw *RejectsWriter) Count() int64 { return rw.n }

// Flush writes buffered rejects to the underlying writer.
func (rw *RejectsWriter) Flush() error { return rw.w.Flush() }
