package shards_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parastream/parastream/shards"
)

func TestFileReaderEOF(t *testing.T) {
	root := t.TempDir()
	infos := writeSplit(t, root, "sts", "train", shards.WriterOptions{}, testRows(20, 5))
	r, err := shards.OpenFile(filepath.Join(root, infos[0].Path))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]shards.Row, 5)
	if n, err := r.Read(buf); n != 5 || err != nil {
		t.Errorf("Read of all rows = %d, %v; want 5, nil", n, err)
	}
	for range 2 {
		if n, err := r.Read(buf); n != 0 || err != io.EOF {
			t.Errorf("Read at the end = %d, %v; want 0, io.EOF", n, err)
		}
	}
	if n, err := r.Read(nil); n != 0 || err != nil {
		t.Errorf("Read(nil) = %d, %v; want 0, nil", n, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if _, err := r.Read(buf); !errors.Is(err, shards.ErrClosed) {
		t.Errorf("Read after Close = %v, want ErrClosed", err)
	}
}

// TestFileReaderRowsAreNotReused checks that rows returned by one Read are
// not overwritten by the next.
func TestFileReaderRowsAreNotReused(t *testing.T) {
	root := t.TempDir()
	rows := testRows(21, 40)
	infos := writeSplit(t, root, "sts", "train", shards.WriterOptions{RowGroupRows: 8}, rows)
	r, err := shards.OpenFile(filepath.Join(root, infos[0].Path))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]shards.Row, 3)
	var kept []shards.Row
	for {
		n, err := r.Read(buf)
		kept = append(kept, buf[:n]...) // shallow copies, sharing lists
		if err != nil {
			break
		}
	}
	if !reflect.DeepEqual(normalize(kept), normalize(rows)) {
		t.Error("rows kept from earlier Reads were changed by later ones")
	}
}

func TestFileReaderAll(t *testing.T) {
	root := t.TempDir()
	rows := testRows(22, 600)
	infos := writeSplit(t, root, "sts", "train", shards.WriterOptions{}, rows)
	r, err := shards.OpenFile(filepath.Join(root, infos[0].Path))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []shards.Row
	for row, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, row)
	}
	if !reflect.DeepEqual(normalize(got), normalize(rows)) {
		t.Error("All yields other rows than were written")
	}
}

func TestOpenFileErrors(t *testing.T) {
	dir := t.TempDir()
	root := t.TempDir()
	infos := writeSplit(t, root, "sts", "train", shards.WriterOptions{}, testRows(23, 50))
	good := readBytes(t, filepath.Join(root, infos[0].Path))

	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A Parquet file of another schema.
	type other struct {
		Name string `parquet:"name"`
	}
	otherPath := filepath.Join(dir, "other.parquet")
	if err := parquet.WriteFile(otherPath, []other{{"x"}}); err != nil {
		t.Fatal(err)
	}
	// A shard that claims a newer schema version.
	newerPath := filepath.Join(dir, "newer.parquet")
	f, err := os.Create(newerPath)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[shards.Row](f, parquet.KeyValueMetadata(shards.MetadataSchemaVersion, "99"))
	if _, err := w.Write(testRows(24, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// A shard compressed with LZ4, which the reader refuses.
	lz4Path := filepath.Join(dir, "lz4.parquet")
	f, err = os.Create(lz4Path)
	if err != nil {
		t.Fatal(err)
	}
	w = parquet.NewGenericWriter[shards.Row](f, parquet.Compression(&parquet.Lz4Raw))
	if _, err := w.Write(testRows(24, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	tests := []struct {
		name string
		path string
		is   error // nil: any error
	}{
		{"lz4", lz4Path, shards.ErrCodec},
		{"missing", filepath.Join(dir, "missing.parquet"), fs.ErrNotExist},
		{"empty", write("empty.parquet", nil), nil},
		{"not parquet", write("text.parquet", []byte("id,a,b\n1,x,y\n")), nil},
		{"truncated", write("truncated.parquet", good[:len(good)/2]), nil},
		{"footer only", write("tail.parquet", good[len(good)-100:]), nil},
		{"other schema", otherPath, shards.ErrSchema},
		{"newer schema version", newerPath, shards.ErrSchemaVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := shards.OpenFile(tt.path)
			if err == nil {
				r.Close()
				t.Fatal("OpenFile succeeded")
			}
			if !strings.Contains(err.Error(), "reading shard "+tt.path) {
				t.Errorf("error %q does not name the file", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
		})
	}
}

// TestFileReaderCorruptData flips bytes in the middle of a shard: reading it
// must fail with an error naming the file, never panic or hang.
func TestFileReaderCorruptData(t *testing.T) {
	root := t.TempDir()
	infos := writeSplit(t, root, "sts", "train", shards.WriterOptions{RowGroupRows: 100}, testRows(25, 400))
	name := filepath.Join(root, infos[0].Path)
	data := readBytes(t, name)
	for i := len(data) / 4; i < len(data)/2; i += 7 {
		data[i] ^= 0x5a
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := shards.OpenFile(name)
	if err != nil {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name the file", err)
		}
		t.Log(err)
		return
	}
	defer r.Close()
	for _, err := range r.All() {
		if err != nil {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name the file", err)
			}
			t.Log(err)
			return
		}
	}
	t.Error("reading a corrupted shard gave no error")
}

func TestSplitReader(t *testing.T) {
	root := t.TempDir()
	rows := testRows(26, 95)
	m := shards.NewManifest([]string{"test"})
	m.AddSplit("sts", "train", writeSplit(t, root, "sts", "train", shards.WriterOptions{MaxRows: 20, RowGroupRows: 6}, rows)...)
	m.AddSplit("sts", "test", writeSplit(t, root, "sts", "test", shards.WriterOptions{}, nil)...)
	if err := shards.WriteManifest(root, m); err != nil {
		t.Fatal(err)
	}

	r, err := shards.OpenSplit(root, "sts", "train")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Shards()) != 5 || r.NumRows() != 95 {
		t.Errorf("Shards = %d, NumRows = %d; want 5 and 95", len(r.Shards()), r.NumRows())
	}
	if got := drain(t, r.Read); !reflect.DeepEqual(normalize(got), normalize(rows)) {
		t.Error("the split reads back other rows than were written")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	// The empty split reads as empty, an unknown one fails.
	r, err = shards.OpenSplit(root, "sts", "test")
	if err != nil {
		t.Fatal(err)
	}
	if got := drain(t, r.Read); len(got) != 0 {
		t.Errorf("the empty split read %d rows", len(got))
	}
	r.Close()
	if _, err := shards.OpenSplit(root, "sts", "dev"); !errors.Is(err, shards.ErrManifest) || !strings.Contains(err.Error(), "sts/train") {
		t.Errorf("OpenSplit of a split not in the manifest = %v; want ErrManifest listing the splits", err)
	}
}

func TestSplitReaderAll(t *testing.T) {
	root := t.TempDir()
	rows := testRows(27, 50)
	infos := writeSplit(t, root, "sts", "train", shards.WriterOptions{MaxRows: 16}, rows)
	r := shards.NewSplitReader(root, infos)
	defer r.Close()
	var got []shards.Row
	for row, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, row)
		if len(got) == 30 {
			break // stopping early must be fine
		}
	}
	if !reflect.DeepEqual(normalize(got), normalize(rows[:30])) {
		t.Error("All yields other rows than were written")
	}
}

// TestSplitReaderChecksManifest replaces a shard by another with a different
// row count: the reader must notice when it reaches it.
func TestSplitReaderChecksManifest(t *testing.T) {
	root := t.TempDir()
	infos := writeSplit(t, root, "sts", "train", shards.WriterOptions{MaxRows: 10}, testRows(28, 20))

	other := t.TempDir()
	replacement := writeSplit(t, other, "sts", "train", shards.WriterOptions{MaxRows: 10}, testRows(29, 19))
	data := readBytes(t, filepath.Join(other, replacement[1].Path))
	if err := os.WriteFile(filepath.Join(root, infos[1].Path), data, 0o644); err != nil {
		t.Fatal(err)
	}

	wrongSize := slices.Clone(infos)
	wrongSize[1].Bytes = int64(len(data))
	for _, tt := range []struct {
		name  string
		infos []shards.ShardInfo
		is    error
	}{
		{"size", infos, shards.ErrChecksum},
		{"rows", wrongSize, shards.ErrRowCount},
	} {
		r := shards.NewSplitReader(root, tt.infos)
		var err error
		for _, err = range r.All() {
			if err != nil {
				break
			}
		}
		r.Close()
		if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), "part-00001-of-00002.parquet") {
			t.Errorf("%s: reading a shard that differs from the manifest = %v; want %v naming the file", tt.name, err, tt.is)
		}
	}
}

// FuzzOpenFile feeds damaged shards to the reader: it may fail, with an error
// naming the file, but never panic.
func FuzzOpenFile(f *testing.F) {
	root := f.TempDir()
	infos := writeSplit(f, root, "sts", "train", shards.WriterOptions{RowGroupRows: 2}, testRows(40, 5))
	good, err := os.ReadFile(filepath.Join(root, infos[0].Path))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-10])
	f.Add(good[len(good)-200:])
	f.Add([]byte("PAR1PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		name := filepath.Join(t.TempDir(), "fuzz.parquet")
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := shards.OpenFile(name)
		if err != nil {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		defer r.Close()
		n := 0
		for _, err := range r.All() {
			if err != nil {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if n++; n > 1_000_000 {
				t.Fatal("more than a million rows from a small file")
			}
		}
	})
}
