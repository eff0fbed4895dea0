package corpora_test

import (
	"bytes"
	"io"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func contains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }
