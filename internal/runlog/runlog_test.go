package runlog

import (
	"errors"
	"testing"
)

// TestShortCause: the line of a pipeline error that says what went wrong,
// without Beam's wrappers, with the hint for a truncated file.
func TestShortCause(t *testing.T) {
	for _, tc := range []struct{ err, want string }{
		{"plan...\ncaused by:\nDoFn[UID:3] failed:\n  reading x.zst: unexpected EOF", "reading x.zst: unexpected EOF"},
		{"reading y.gz: file truncated\nmore", "reading y.gz: file truncated; --skip-bad-files counts such a file as a reject and goes on"},
		{"one line", "one line"},
	} {
		if got := shortCause(errors.New(tc.err)); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.err, got, tc.want)
		}
	}
}
