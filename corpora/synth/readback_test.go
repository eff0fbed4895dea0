package synth_test

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/corpora/synth"
)

// generator is one corpus generator writing to one or two outputs.
type generator struct {
	name   string
	format string   // the corpora format that reads it
	files  []string // file names, which some readers read (Europarl's languages)
	gen    func(ws []io.Writer, cfg synth.Config) (synth.Stats, error)
	// skipped is what the reader skips by design, per file.
	skipped map[string]int64
}

var generators = []generator{
	{"reddit", "reddit-comments", []string{"RC_2024-02"}, func(ws []io.Writer, c synth.Config) (synth.Stats, error) {
		return synth.Reddit(ws[0], c)
	}, nil},
	{"reddit-submissions", "reddit-submissions", []string{"RS_2024-02"}, func(ws []io.Writer, c synth.Config) (synth.Stats, error) {
		return synth.RedditSubmissions(ws[0], c)
	}, nil},
	{"europarl", "europarl", []string{"europarl-v7.fr-en.en", "europarl-v7.fr-en.fr"}, func(ws []io.Writer, c synth.Config) (synth.Stats, error) {
		return synth.Europarl(ws[0], ws[1], c)
	}, nil},
	{"ppdb-2.0", "ppdb", []string{"ppdb-2.0-s-all"}, func(ws []io.Writer, c synth.Config) (synth.Stats, error) {
		return synth.PPDB(ws[0], c)
	}, nil},
	{"ppdb-1.0", "ppdb", []string{"ppdb-1.0-s-lexical"}, func(ws []io.Writer, c synth.Config) (synth.Stats, error) {
		c.PPDBVersion = 1
		return synth.PPDB(ws[0], c)
	}, nil},
	{"quora", "quora", []string{"quora_duplicate_questions.tsv"}, func(ws []io.Writer, c synth.Config) (synth.Stats, error) {
		return synth.Quora(ws[0], c)
	}, map[string]int64{"header": 1}},
	{"simpwiki", "simpwiki", []string{"normal.aligned", "simple.aligned"}, func(ws []io.Writer, c synth.Config) (synth.Stats, error) {
		return synth.SimpWiki(ws[0], ws[1], c)
	}, nil},
}

// generate runs g into memory.
func generate(t testing.TB, g generator, cfg synth.Config) ([][]byte, synth.Stats) {
	t.Helper()
	bufs := make([]*bytes.Buffer, len(g.files))
	ws := make([]io.Writer, len(g.files))
	for i := range bufs {
		bufs[i] = new(bytes.Buffer)
		ws[i] = bufs[i]
	}
	st, err := g.gen(ws, cfg)
	if err != nil {
		t.Fatalf("%s: %v", g.name, err)
	}
	out := make([][]byte, len(bufs))
	for i, b := range bufs {
		out[i] = b.Bytes()
	}
	return out, st
}

// readBack reads generated files with the corpus's reader.
func readBack(t testing.TB, g generator, data [][]byte) ([]corpora.Example, corpora.Stats) {
	t.Helper()
	inputs := make([]*corpora.Input, len(data))
	for i, d := range data {
		in, err := corpora.NewInput(g.files[i], bytes.NewReader(d), corpora.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		inputs[i] = in
	}
	f, err := corpora.LookupFormat(g.format)
	if err != nil {
		t.Fatal(err)
	}
	r, err := corpora.NewReader(f, inputs, corpora.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var exs []corpora.Example
	if err := corpora.Drain(r, func(e corpora.Example) error {
		exs = append(exs, e)
		return nil
	}, nil); err != nil {
		t.Fatalf("%s: %v", g.name, err)
	}
	return exs, r.Stats()
}

// TestReadBack: every generator's output reads back with its corpus's
// reader, with exactly the rows less the malformed ones as examples and
// the malformed ones rejected for the reasons the generator says.
func TestReadBack(t *testing.T) {
	t.Parallel()
	for _, g := range generators {
		t.Run(g.name, func(t *testing.T) {
			rows := int64(4000)
			data, st := generate(t, g, synth.Config{Rows: rows, Seed: 7, MalformedRate: 0.02})
			if g.format == "reddit-submissions" {
				rows = st.Rows // the submissions of the threads of 4000 comments
			}
			if st.Rows != rows {
				t.Errorf("Stats.Rows = %d, want %d", st.Rows, rows)
			}
			if st.Malformed < rows/100 || st.Malformed > rows/30 {
				t.Errorf("%d malformed rows at rate 0.02 of %d", st.Malformed, rows)
			}
			var size int64
			for _, d := range data {
				size += int64(len(d))
			}
			if st.Bytes != size {
				t.Errorf("Stats.Bytes = %d, wrote %d", st.Bytes, size)
			}
			exs, rs := readBack(t, g, data)
			if int64(len(exs)) != rows-st.Malformed || rs.Examples != rows-st.Malformed {
				t.Errorf("read %d examples, want %d - %d = %d", len(exs), rows, st.Malformed, rows-st.Malformed)
			}
			if !maps.Equal(rs.Rejected, st.MalformedByReason) {
				t.Errorf("rejected %v, generator says %v", rs.Rejected, st.MalformedByReason)
			}
			skipped := g.skipped
			if skipped == nil {
				skipped = map[string]int64{}
			}
			if !maps.Equal(rs.Skipped, skipped) {
				t.Errorf("skipped %v, want %v", rs.Skipped, skipped)
			}
			if rs.Bytes != size {
				t.Errorf("reader read %d bytes of %d", rs.Bytes, size)
			}
		})
	}
}

// TestNoMalformed: NoMalformed writes only good rows.
func TestNoMalformed(t *testing.T) {
	for _, g := range generators {
		data, st := generate(t, g, synth.Config{Rows: 500, Seed: 1, MalformedRate: synth.NoMalformed})
		exs, rs := readBack(t, g, data)
		if st.Malformed != 0 || int64(len(exs)) != st.Rows || rs.RejectedTotal() != 0 {
			t.Errorf("%s: %d malformed, %d examples, %d rejected", g.name, st.Malformed, len(exs), rs.RejectedTotal())
		}
	}
}

// TestDeterminism: the same seed gives the same bytes, another seed other
// bytes, and a run of more rows starts with the bytes of one of fewer.
func TestDeterminism(t *testing.T) {
	for _, g := range generators {
		a, _ := generate(t, g, synth.Config{Rows: 2000, Seed: 42})
		b, _ := generate(t, g, synth.Config{Rows: 2000, Seed: 42})
		c, _ := generate(t, g, synth.Config{Rows: 2000, Seed: 43})
		short, _ := generate(t, g, synth.Config{Rows: 500, Seed: 42})
		for i := range a {
			if !bytes.HasPrefix(a[i], short[i]) {
				t.Errorf("%s: file %d of 500 rows is not a prefix of the file of 2000", g.name, i)
			}
			if !bytes.Equal(a[i], b[i]) {
				t.Errorf("%s: file %d differs between two runs with one seed", g.name, i)
			}
			if bytes.Equal(a[i], c[i]) {
				t.Errorf("%s: file %d is the same with seeds 42 and 43", g.name, i)
			}
		}
	}
}

// TestRedditSubmissionsDoNotChangeComments: writing submissions beside
// the comments leaves the comments' bytes as they are.
func TestRedditSubmissionsDoNotChangeComments(t *testing.T) {
	var alone, with, subs bytes.Buffer
	cfg := synth.Config{Rows: 3000, Seed: 9}
	if _, err := synth.Reddit(&alone, cfg); err != nil {
		t.Fatal(err)
	}
	cs, ss, err := synth.RedditThreads(&with, &subs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(alone.Bytes(), with.Bytes()) {
		t.Error("comments differ when submissions are written too")
	}
	if cs.Threads != ss.Rows || ss.Rows == 0 {
		t.Errorf("%d threads opened, %d submissions written", cs.Threads, ss.Rows)
	}
}

// TestCompressed: zstd, gzip and bzip2 outputs read back through
// corpora.Open to the same records as the plain file.
func TestCompressed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := generators[0]
	cfg := synth.Config{Rows: 800, Seed: 3}
	plain, st := generate(t, g, cfg)
	want, _ := readBack(t, g, plain)
	for _, c := range []synth.Codec{synth.CodecZstd, synth.CodecGzip, synth.CodecBzip2} {
		path := filepath.Join(dir, "RC_2024-02.jsonl"+c.Ext())
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		zw, err := synth.NewCompressor(f, c)
		if err != nil {
			t.Fatal(err)
		}
		cst, err := synth.Reddit(zw, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if cst.Bytes != st.Bytes {
			t.Errorf("%s: %d bytes before compression, %d plain", c, cst.Bytes, st.Bytes)
		}
		r, err := corpora.OpenFormat("reddit-comments", []string{path}, corpora.Options{})
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		err = corpora.Drain(r, func(e corpora.Example) error {
			if i >= len(want) || e.ID != want[i].ID || e.A != want[i].A || !maps.Equal(e.Meta, want[i].Meta) {
				return fmt.Errorf("example %d differs from the plain file's", i)
			}
			i++
			return nil
		}, nil)
		if err == nil && i != len(want) {
			err = fmt.Errorf("%d examples, plain %d", i, len(want))
		}
		if err != nil {
			t.Errorf("%s: %v", c, err)
		}
		if in := r.(interface{ Stats() corpora.Stats }).Stats(); in.Bytes != st.Bytes {
			t.Errorf("%s: decompressed %d bytes, want %d", c, in.Bytes, st.Bytes)
		}
		r.Close()
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []synth.Config{
		{Rows: -1}, {MalformedRate: 1}, {Era: "1999"}, {CommentRate: -2}, {MaxActiveThreads: -1}, {PPDBVersion: 3},
	} {
		if c.Validate() == nil {
			t.Errorf("%+v: no error", c)
		}
		if _, err := synth.Reddit(io.Discard, c); err == nil {
			t.Errorf("%+v: Reddit ran", c)
		}
	}
	if err := (synth.Config{Rows: 10}).Validate(); err != nil {
		t.Error(err)
	}
}
