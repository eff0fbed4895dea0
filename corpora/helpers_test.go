package corpora_test

import (
	"errors"
	"io"
	"testing"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/internal/testenv"
)

// repoRoot, fixture and sharedData locate test files (see testenv).
func repoRoot() string { return testenv.Root() }

func fixture(rel string) string { return testenv.Fixture(rel) }

func sharedData(t testing.TB, rel string) string {
	t.Helper()
	return testenv.SharedData(t, rel)
}

// readAll opens paths in a format and drains the reader, returning examples,
// parse errors and the final error.
func readAll(t testing.TB, format string, paths []string, opts corpora.Options) ([]corpora.Example, []*corpora.ParseError, corpora.Stats, error) {
	t.Helper()
	r, err := corpora.OpenFormat(format, paths, opts)
	if err != nil {
		t.Fatalf("opening %v as %s: %v", paths, format, err)
	}
	defer r.Close()
	var exs []corpora.Example
	var rejects []*corpora.ParseError
	err = corpora.Drain(r, func(e corpora.Example) error { exs = append(exs, e); return nil },
		func(pe *corpora.ParseError) error { rejects = append(rejects, pe); return nil })
	return exs, rejects, r.Stats(), err
}

// mustReadAll is readAll that fails the test on a file-level error.
func mustReadAll(t testing.TB, format string, paths []string, opts corpora.Options) ([]corpora.Example, []*corpora.ParseError, corpora.Stats) {
	t.Helper()
	exs, rejects, st, err := readAll(t, format, paths, opts)
	if err != nil {
		t.Fatalf("reading %v as %s: %v", paths, format, err)
	}
	return exs, rejects, st
}

// fuzzReader runs a reader over data given as the only input (or as every
// input of a multi-file format) and checks the contract: no panic, every
// error is a ParseError or a FileError, and the counts add up.
func fuzzReader(t *testing.T, format string, datas ...[]byte) {
	fuzzReaderOpts(t, format, corpora.Options{}, datas...)
}

// fuzzReaderOpts is fuzzReader with options (an encoding, say).
func fuzzReaderOpts(t *testing.T, format string, opts corpora.Options, datas ...[]byte) {
	f, err := corpora.LookupFormat(format)
	if err != nil {
		t.Fatal(err)
	}
	inputs := make([]*corpora.Input, len(f.Files))
	for i := range inputs {
		d := datas[min(i, len(datas)-1)]
		in, err := corpora.NewInput(f.Files[i], bytesReader(d), corpora.Limits{MaxLineBytes: 4096, MaxDecompressedBytes: 1 << 20})
		if err != nil {
			return
		}
		inputs[i] = in
	}
	opts.Limits = corpora.Limits{MaxLineBytes: 4096, MaxDecompressedBytes: 1 << 20}
	r, err := corpora.NewReader(f, inputs, opts)
	if err != nil {
		return
	}
	defer r.Close()
	for i := 0; i < 1<<20; i++ {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		var fe *corpora.FileError
		if err != nil && !corpora.IsParseError(err) {
			if !errors.As(err, &fe) {
				t.Fatalf("error is neither a ParseError nor a FileError: %T %v", err, err)
			}
			break
		}
	}
	st := r.Stats()
	if st.Examples+st.RejectedTotal() > st.Records {
		t.Fatalf("counts do not add up: %+v", st)
	}
}
