package corpora_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/corpora"
)

var compressedCopies = map[string]corpora.Compression{
	"lines.txt":        corpora.None,
	"lines.txt.gz":     corpora.Gzip,
	"lines.multi.gz":   corpora.Gzip,
	"lines.txt.bz2":    corpora.Bzip2,
	"lines.txt.xz":     corpora.Xz,
	"lines.txt.zst":    corpora.Zstd,
	"lines.long31.zst": corpora.Zstd, // a 2 GiB window, as pushshift's --long=31 dumps declare
}

func TestOpenDetectsCompressionFromBytes(t *testing.T) {
	want, err := os.ReadFile(fixture("compression/lines.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for name, comp := range compressedCopies {
		t.Run(name, func(t *testing.T) {
			// Copy under a misleading name: detection must not trust it.
			path := filepath.Join(t.TempDir(), "data.txt")
			b, _ := os.ReadFile(fixture("compression/" + name))
			os.WriteFile(path, b, 0o644)
			in, err := corpora.Open(path, corpora.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if in.Compression != comp {
				t.Errorf("compression = %v, want %v", in.Compression, comp)
			}
			got, err := io.ReadAll(in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("decompressed %d bytes differ from the original %d", len(got), len(want))
			}
			if in.BytesRead() != int64(len(want)) {
				t.Errorf("BytesRead = %d, want %d", in.BytesRead(), len(want))
			}
		})
	}
}

func TestTruncatedArchiveIsAnError(t *testing.T) {
	for name, comp := range compressedCopies {
		if comp == corpora.None {
			continue
		}
		b, _ := os.ReadFile(fixture("compression/" + name))
		for _, frac := range []float64{0.1, 0.5, 0.99} {
			cut := int(float64(len(b)) * frac)
			path := filepath.Join(t.TempDir(), name)
			os.WriteFile(path, b[:cut], 0o644)
			in, err := corpora.Open(path, corpora.Limits{})
			if err == nil {
				_, err = io.ReadAll(in)
				in.Close()
			}
			if err == nil {
				t.Errorf("%s cut at %d of %d bytes: read without error", name, cut, len(b))
				continue
			}
			if !errors.Is(err, corpora.ErrTruncated) {
				t.Errorf("%s cut at %d: err = %v, want ErrTruncated", name, cut, err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
		}
	}
}

func TestCorruptArchiveIsAnError(t *testing.T) {
	for name, comp := range compressedCopies {
		if comp == corpora.None {
			continue
		}
		b, _ := os.ReadFile(fixture("compression/" + name))
		b = bytes.Clone(b)
		for i := len(b) / 3; i < len(b)/3+64; i++ {
			b[i] ^= 0x5a
		}
		path := filepath.Join(t.TempDir(), name)
		os.WriteFile(path, b, 0o644)
		in, err := corpora.Open(path, corpora.Limits{})
		if err == nil {
			_, err = io.ReadAll(in)
			in.Close()
		}
		var fe *corpora.FileError
		if !errors.As(err, &fe) || fe.File != path {
			t.Errorf("%s corrupted: err = %v, want a FileError naming the file", name, err)
		}
	}
}

func TestDecompressedSizeLimit(t *testing.T) {
	in, err := corpora.Open(fixture("compression/lines.txt.zst"), corpora.Limits{MaxDecompressedBytes: 10000})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	_, err = io.ReadAll(in)
	if !errors.Is(err, corpora.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestLineTooLongIsRejectedAndSkipped(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "x.en"), filepath.Join(dir, "x.fr")
	long := strings.Repeat("x", 5000)
	os.WriteFile(a, []byte("one\n"+long+"\nthree\n"), 0o644)
	os.WriteFile(b, []byte("un\ndeux\ntrois\n"), 0o644)
	exs, rejects, st, err := readAll(t, "europarl", []string{a, b}, corpora.Options{Limits: corpora.Limits{MaxLineBytes: 1000, MaxRejectBytes: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != 2 || exs[1].A != "three" || exs[1].Source.Line != 3 {
		t.Fatalf("examples = %v", exs)
	}
	if len(rejects) != 1 || rejects[0].Reason != corpora.ReasonLineTooLong || rejects[0].Source.Line != 2 || len(rejects[0].Record) != 100 {
		t.Fatalf("rejects = %v", rejects)
	}
	if st.Rejected[corpora.ReasonLineTooLong] != 1 || st.Records != 3 {
		t.Fatalf("stats = %+v", st)
	}
}

// TestLineTooLongKeepsMaxRejectBytes: with the default limits a line over
// MaxLineBytes (1 MiB, read in many buffer fills) keeps only its first
// MaxRejectBytes (64 KiB) in the reject, as the limit's doc says.
func TestLineTooLongKeepsMaxRejectBytes(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "x.en"), filepath.Join(dir, "x.fr")
	os.WriteFile(a, []byte("one\n"+strings.Repeat("x", 2<<20)+"\nthree\n"), 0o644)
	os.WriteFile(b, []byte("un\ndeux\ntrois\n"), 0o644)
	_, rejects, _, err := readAll(t, "europarl", []string{a, b}, corpora.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rejects) != 1 {
		t.Fatalf("%d rejects, want 1", len(rejects))
	}
	if r := rejects[0]; r.Reason != corpora.ReasonLineTooLong || len(r.Record) != corpora.DefaultMaxRejectBytes {
		t.Fatalf("reject %s keeping %d bytes, want line_too_long keeping %d", r.Reason, len(r.Record), corpora.DefaultMaxRejectBytes)
	}
}

func TestRejectsFileKeepsEveryByte(t *testing.T) {
	var buf bytes.Buffer
	w := corpora.NewRejectsWriter(&buf)
	raw := []byte("bad \xff\xfe bytes\t\"q\"")
	pe := &corpora.ParseError{Source: corpora.Source{File: "f.jsonl", Line: 7, Offset: 99}, Reason: corpora.ReasonBadUTF8, Record: raw}
	if err := w.Write(pe); err != nil {
		t.Fatal(err)
	}
	w.Write(&corpora.ParseError{Source: corpora.Source{File: "f.jsonl", Line: 8}, Reason: corpora.ReasonBadJSON, Record: []byte(`{"a":`)})
	w.Flush()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || w.Count() != 2 {
		t.Fatalf("rejects file = %q", buf.String())
	}
	if !strings.Contains(lines[0], `"file":"f.jsonl","line":7,"offset":99,"reason":"bad_utf8"`) {
		t.Errorf("first reject = %s", lines[0])
	}
	if !strings.Contains(lines[1], `"record":"{\"a\":"`) {
		t.Errorf("second reject = %s", lines[1])
	}
	got, _ := corpora.NewReject(pe).RawRecord()
	if !bytes.Equal(got, raw) {
		t.Errorf("raw record round trip = %q", got)
	}
}

func TestLatin1Encoding(t *testing.T) {
	latin1 := []byte("caf\xe9 \xfcber\nna\xefve\n")
	want := "café über\nnaïve\n"
	for _, chunk := range []int{1, 2, 3, 7, 4096} {
		in, err := corpora.NewInput("x.txt", bytes.NewReader(latin1), corpora.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if err := in.SetEncoding("latin1"); err != nil {
			t.Fatal(err)
		}
		var got []byte
		buf := make([]byte, chunk)
		for {
			n, err := in.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if string(got) != want {
			t.Errorf("reads of %d bytes gave %q, want %q", chunk, got, want)
		}
	}
	in, _ := corpora.NewInput("x.txt", bytes.NewReader(nil), corpora.Limits{})
	if err := in.SetEncoding("ebcdic"); err == nil {
		t.Error("unknown encoding accepted")
	}
}
