package shards_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/parastream/parastream/shards"
)

func TestWriterReadBack(t *testing.T) {
	root := t.TempDir()
	rows := testRows(1, 2500)
	infos := writeSplit(t, root, "sts", "train", shards.WriterOptions{RowGroupRows: 1000}, rows)
	if len(infos) != 1 {
		t.Fatalf("got %d shards, want 1", len(infos))
	}
	info := infos[0]
	want := shards.ShardInfo{Path: "sts/train/part-00000-of-00001.parquet", Corpus: "sts", Split: "train", Rows: 2500}
	if info.Path != want.Path || info.Corpus != want.Corpus || info.Split != want.Split || info.Rows != want.Rows {
		t.Errorf("ShardInfo = %+v, want %+v", info, want)
	}
	name := filepath.Join(root, filepath.FromSlash(info.Path))
	data := readBytes(t, name)
	sum := sha256.Sum256(data)
	if info.Bytes != int64(len(data)) || info.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("ShardInfo says %d bytes sha256 %s; the file has %d bytes sha256 %x", info.Bytes, info.SHA256, len(data), sum)
	}

	r, err := shards.OpenFile(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.NumRows() != 2500 || r.NumRowGroups() != 3 {
		t.Errorf("NumRows = %d, NumRowGroups = %d; want 2500 and 3", r.NumRows(), r.NumRowGroups())
	}
	got := drain(t, r.Read)
	if !reflect.DeepEqual(normalize(got), normalize(rows)) {
		t.Error("rows read back differ from the rows written")
	}
}

// TestShardFooter checks the compression and key/value metadata of a shard.
func TestShardFooter(t *testing.T) {
	root := t.TempDir()
	infos := writeSplit(t, root, "sts", "dev", shards.WriterOptions{}, testRows(2, 10))
	f, err := os.Open(filepath.Join(root, infos[0].Path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		shards.MetadataSchemaVersion: fmt.Sprint(shards.SchemaVersion),
		shards.MetadataCorpus:        "sts",
		shards.MetadataSplit:         "dev",
	} {
		if got, _ := pf.Lookup(key); got != want {
			t.Errorf("metadata %s = %q, want %q", key, got, want)
		}
	}
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if c.MetaData.Codec != format.Zstd {
				t.Errorf("column %v is compressed with %v, want ZSTD", c.MetaData.PathInSchema, c.MetaData.Codec)
			}
		}
	}
	if !parquet.EqualNodes(pf.Schema(), parquet.SchemaOf(shards.Row{})) {
		t.Errorf("file schema differs from Row's:\n%v", pf.Schema())
	}
}

func TestWriterMaxRows(t *testing.T) {
	root := t.TempDir()
	rows := testRows(3, 25)
	infos := writeSplit(t, root, "sts", "train", shards.WriterOptions{MaxRows: 10, RowGroupRows: 4}, rows)
	var names []string
	var counts []int64
	var all []shards.Row
	for _, info := range infos {
		names = append(names, filepath.Base(info.Path))
		counts = append(counts, info.Rows)
		all = append(all, readFile(t, filepath.Join(root, info.Path))...)
	}
	wantNames := []string{"part-00000-of-00003.parquet", "part-00001-of-00003.parquet", "part-00002-of-00003.parquet"}
	if !slices.Equal(names, wantNames) || !slices.Equal(counts, []int64{10, 10, 5}) {
		t.Errorf("shards %v with rows %v; want %v with 10, 10, 5", names, counts, wantNames)
	}
	if got := glob(t, filepath.Join(root, "sts", "train"), "*"); !slices.Equal(got, wantNames) {
		t.Errorf("directory holds %v, want only %v", got, wantNames)
	}
	if !reflect.DeepEqual(normalize(all), normalize(rows)) {
		t.Error("rows read back across shards differ from the rows written")
	}
}

func TestWriterMaxBytes(t *testing.T) {
	const maxBytes = 64 << 10
	root := t.TempDir()
	rows := testRows(4, 600)
	infos := writeSplit(t, root, "sts", "train", shards.WriterOptions{MaxBytes: maxBytes, RowGroupRows: 50}, rows)
	if len(infos) < 3 {
		t.Fatalf("got %d shards for %d rows under %d bytes each; want several", len(infos), len(rows), maxBytes)
	}
	var total int64
	var all []shards.Row
	for _, info := range infos {
		// The bound is approximate: it leaves out the footer.
		if info.Bytes > maxBytes+16<<10 {
			t.Errorf("%s has %d bytes, over MaxBytes %d plus a footer", info.Path, info.Bytes, maxBytes)
		}
		total += info.Rows
		all = append(all, readFile(t, filepath.Join(root, info.Path))...)
	}
	if total != int64(len(rows)) || !reflect.DeepEqual(normalize(all), normalize(rows)) {
		t.Errorf("read back %d rows, want the %d written", total, len(rows))
	}
}

func TestWriterOversizedRow(t *testing.T) {
	root := t.TempDir()
	rows := testRows(5, 3)
	rows[1].A = strings.Repeat("long text ", 10_000) // 100 KB, over MaxBytes
	infos := writeSplit(t, root, "sts", "train", shards.WriterOptions{MaxBytes: 32 << 10}, rows)
	var counts []int64
	for _, info := range infos {
		counts = append(counts, info.Rows)
	}
	if !slices.Equal(counts, []int64{1, 1, 1}) {
		t.Errorf("rows per shard %v, want the oversized row alone in its shard: [1 1 1]", counts)
	}
}

func TestWriterRowGroupBytes(t *testing.T) {
	root := t.TempDir()
	rows := testRows(6, 200)
	infos := writeSplit(t, root, "sts", "train", shards.WriterOptions{RowGroupBytes: 16 << 10}, rows)
	r, err := shards.OpenFile(filepath.Join(root, infos[0].Path))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.NumRowGroups() < 5 {
		t.Errorf("NumRowGroups = %d for 200 rows of about 1.5 KB with RowGroupBytes 16 KiB; want more", r.NumRowGroups())
	}
}

func TestWriterTemporaryNames(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sts", "train")
	w, err := shards.NewWriter(root, "sts", "train", shards.WriterOptions{MaxRows: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(testRows(7, 25)...); err != nil {
		t.Fatal(err)
	}
	if got := glob(t, dir, "*.parquet"); len(got) != 0 {
		t.Errorf("before Close the directory holds %v; want no file with a final name", got)
	}
	wantTmp := []string{".part-00000.parquet.tmp", ".part-00001.parquet.tmp", ".part-00002.parquet.tmp"}
	if got := glob(t, dir, ".*.tmp"); !slices.Equal(got, wantTmp) {
		t.Errorf("before Close the temporaries are %v, want %v", got, wantTmp)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := glob(t, dir, ".*"); len(got) != 0 {
		t.Errorf("after Close temporaries remain: %v", got)
	}
}

func TestWriterAbort(t *testing.T) {
	root := t.TempDir()
	w, err := shards.NewWriter(root, "sts", "train", shards.WriterOptions{MaxRows: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(testRows(8, 25)...); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if got := glob(t, filepath.Join(root, "sts", "train"), "*"); len(got) != 0 {
		t.Errorf("after Abort the directory holds %v", got)
	}
	if got := glob(t, filepath.Join(root, "sts", "train"), ".*"); len(got) != 0 {
		t.Errorf("after Abort temporaries remain: %v", got)
	}
	if err := w.Write(testRows(8, 1)...); !errors.Is(err, shards.ErrClosed) {
		t.Errorf("Write after Abort = %v, want ErrClosed", err)
	}
	if _, err := w.Close(); !errors.Is(err, shards.ErrClosed) {
		t.Errorf("Close after Abort = %v, want ErrClosed", err)
	}
}

func TestWriterEmptySplit(t *testing.T) {
	root := t.TempDir()
	infos := writeSplit(t, root, "sts", "test", shards.WriterOptions{}, nil)
	if len(infos) != 0 {
		t.Errorf("Close returned %v for an empty split, want no shard", infos)
	}
	if _, err := os.Stat(filepath.Join(root, "sts")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an empty split created its directory (stat: %v)", err)
	}
}

func TestWriterClosed(t *testing.T) {
	w, err := shards.NewWriter(t.TempDir(), "sts", "train", shards.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(testRows(9, 1)...); !errors.Is(err, shards.ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if _, err := w.Close(); !errors.Is(err, shards.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	w.Abort() // no-op, must not panic
}

func TestWriterExistingShards(t *testing.T) {
	root := t.TempDir()
	writeSplit(t, root, "sts", "train", shards.WriterOptions{MaxRows: 10}, testRows(10, 25))
	_, err := shards.NewWriter(root, "sts", "train", shards.WriterOptions{})
	if !errors.Is(err, shards.ErrExists) {
		t.Fatalf("NewWriter over earlier shards = %v, want ErrExists", err)
	}
	if !strings.Contains(err.Error(), filepath.Join(root, "sts", "train")) {
		t.Errorf("error %q does not name the directory", err)
	}

	// With Overwrite, the new run's shards replace all the old ones, and a
	// crashed run's temporary goes too.
	stale := filepath.Join(root, "sts", "train", ".part-00007.parquet.tmp")
	if err := os.WriteFile(stale, []byte("half a shard"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := testRows(11, 15)
	infos := writeSplit(t, root, "sts", "train", shards.WriterOptions{MaxRows: 10, Overwrite: true}, rows)
	want := []string{"part-00000-of-00002.parquet", "part-00001-of-00002.parquet"}
	if got := glob(t, filepath.Join(root, "sts", "train"), "*"); !slices.Equal(got, want) {
		t.Errorf("after an overwrite the directory holds %v, want %v", got, want)
	}
	if got := glob(t, filepath.Join(root, "sts", "train"), ".*"); len(got) != 0 {
		t.Errorf("after an overwrite temporaries remain: %v", got)
	}
	var all []shards.Row
	for _, info := range infos {
		all = append(all, readFile(t, filepath.Join(root, info.Path))...)
	}
	if !reflect.DeepEqual(normalize(all), normalize(rows)) {
		t.Error("rows after an overwrite differ from the new rows")
	}

	// An empty split written with Overwrite removes the old shards.
	writeSplit(t, root, "sts", "train", shards.WriterOptions{Overwrite: true}, nil)
	if got := glob(t, filepath.Join(root, "sts", "train"), "*"); len(got) != 0 {
		t.Errorf("after overwriting with an empty split the directory holds %v", got)
	}
}

func TestWriterOptionsValidate(t *testing.T) {
	tests := []struct {
		opts shards.WriterOptions
		want string // in the error; "" for none
	}{
		{shards.WriterOptions{}, ""},
		{shards.WriterOptions{MaxRows: 5, MaxBytes: 1 << 20, RowGroupRows: 2, RowGroupBytes: 1 << 10}, ""},
		{shards.WriterOptions{MaxRows: -1}, "MaxRows is -1"},
		{shards.WriterOptions{MaxBytes: -1}, "MaxBytes is -1"},
		{shards.WriterOptions{RowGroupRows: -5}, "or 0 for the default 10000"},
		{shards.WriterOptions{RowGroupBytes: -1}, "RowGroupBytes"},
	}
	for _, tt := range tests {
		err := tt.opts.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: Validate = %v, want nil", tt.opts, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: Validate = %v, want an error saying %q", tt.opts, err, tt.want)
		}
		if tt.want != "" {
			if _, err := shards.NewWriter(t.TempDir(), "c", "s", tt.opts); err == nil {
				t.Errorf("%+v: NewWriter accepted invalid options", tt.opts)
			}
		}
	}
}

func TestNewWriterNames(t *testing.T) {
	for _, name := range []string{"", ".", "..", "a/b", `a\b`} {
		if _, err := shards.NewWriter(t.TempDir(), name, "train", shards.WriterOptions{}); err == nil {
			t.Errorf("NewWriter accepted corpus %q", name)
		}
		if _, err := shards.NewWriter(t.TempDir(), "sts", name, shards.WriterOptions{}); err == nil {
			t.Errorf("NewWriter accepted split %q", name)
		}
	}
}

// TestWriterDeterministic writes the same rows twice, batched differently
// into Write calls, and wants byte-identical shards.
func TestWriterDeterministic(t *testing.T) {
	rows := testRows(12, 3000)
	opts := shards.WriterOptions{MaxRows: 1300, RowGroupRows: 500, MaxBytes: 1 << 20}
	batchings := []int{len(rows), 1, 37, 500}
	var first [][]byte
	for _, batch := range batchings {
		root := t.TempDir()
		w, err := shards.NewWriter(root, "sts", "train", opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(rows); i += batch {
			if err := w.Write(rows[i:min(i+batch, len(rows))]...); err != nil {
				t.Fatal(err)
			}
		}
		infos, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		var files [][]byte
		for _, info := range infos {
			files = append(files, readBytes(t, filepath.Join(root, info.Path)))
		}
		if first == nil {
			first = files
			continue
		}
		if len(files) != len(first) {
			t.Fatalf("batches of %d rows gave %d shards, batches of %d gave %d", batch, len(files), batchings[0], len(first))
		}
		for i := range files {
			if !bytes.Equal(files[i], first[i]) {
				t.Errorf("batches of %d rows: shard %d differs from the one written in batches of %d", batch, i, batchings[0])
			}
		}
	}
}

// TestWriterDeterministicAcrossProcesses writes the same rows in a child
// process and wants the same bytes: nothing in a shard may depend on the
// process (hash seeds, map order, time).
func TestWriterDeterministicAcrossProcesses(t *testing.T) {
	if dir := os.Getenv("SHARDS_TEST_CHILD_ROOT"); dir != "" {
		writeSplit(t, dir, "sts", "train", shards.WriterOptions{RowGroupRows: 300}, testRows(13, 1000))
		return
	}
	here := t.TempDir()
	infos := writeSplit(t, here, "sts", "train", shards.WriterOptions{RowGroupRows: 300}, testRows(13, 1000))
	there := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriterDeterministicAcrossProcesses$")
	cmd.Env = append(os.Environ(), "SHARDS_TEST_CHILD_ROOT="+there)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	for _, info := range infos {
		if !bytes.Equal(readBytes(t, filepath.Join(here, info.Path)), readBytes(t, filepath.Join(there, info.Path))) {
			t.Errorf("%s differs between two processes", info.Path)
		}
	}
}

// rawBytes is the size of the rows' strings and numbers, before encoding.
func rawBytes(rows []shards.Row) int64 {
	var n int
	for _, r := range rows {
		n += len(r.ID) + len(r.Corpus) + len(r.Dataset) + len(r.Split) + len(r.A) + len(r.B) +
			len(r.LangA) + len(r.LangB) + len(r.GroupKey) + len(r.SourceFile) + 8*3
		n += 8 * len(r.Scores)
		for k, v := range r.Meta {
			n += len(k) + len(v)
		}
		for _, s := range r.TokensA {
			n += len(s)
		}
		for _, s := range r.TokensB {
			n += len(s)
		}
		n += 4 * (len(r.IDsA) + len(r.IDsB) + len(r.TopicsA) + len(r.TopicsB))
	}
	return int64(n)
}

// BenchmarkWriter writes 10,000 realistic rows (two 5-30 word texts with
// tokens, ids and 50-topic vectors) per iteration into one shard. MB/s is
// the rows' raw size; file-MB/s what reaches the disk.
func BenchmarkWriter(b *testing.B) {
	rows := testRows(42, 10_000)
	b.SetBytes(rawBytes(rows))
	b.ReportAllocs()
	var fileBytes, n int64
	for b.Loop() {
		root := b.TempDir()
		w, err := shards.NewWriter(root, "sts", "train", shards.WriterOptions{RowGroupRows: 5000})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Write(rows...); err != nil {
			b.Fatal(err)
		}
		infos, err := w.Close()
		if err != nil {
			b.Fatal(err)
		}
		for _, info := range infos {
			fileBytes += info.Bytes
		}
		n += int64(len(rows))
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(n)/secs, "rows/s")
	b.ReportMetric(float64(fileBytes)/1e6/secs, "file-MB/s")
}

// BenchmarkReader reads back a shard of 10,000 realistic rows per iteration.
func BenchmarkReader(b *testing.B) {
	rows := testRows(42, 10_000)
	root := b.TempDir()
	infos := writeSplit(b, root, "sts", "train", shards.WriterOptions{RowGroupRows: 5000}, rows)
	name := filepath.Join(root, infos[0].Path)
	b.SetBytes(rawBytes(rows))
	b.ReportAllocs()
	buf := make([]shards.Row, 256)
	var n int64
	for b.Loop() {
		r, err := shards.OpenFile(name)
		if err != nil {
			b.Fatal(err)
		}
		for {
			k, err := r.Read(buf)
			n += int64(k)
			if err != nil {
				break
			}
		}
		r.Close()
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "rows/s")
}

func TestWriterRejectsInvalidUTF8(t *testing.T) {
	root := t.TempDir()
	rows := testRows(14, 3)
	rows[1].TokensB = append(rows[1].TokensB, "caf\xe9") // Latin-1, not UTF-8
	w, err := shards.NewWriter(root, "sts", "train", shards.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Write(rows...)
	var rowErr *shards.RowError
	if !errors.As(err, &rowErr) || !errors.Is(err, shards.ErrInvalidUTF8) || rowErr.Index != 1 || rowErr.Column != "tokens_b" || rowErr.ID != rows[1].ID {
		t.Fatalf("Write with an invalid row = %v; want a RowError for row 1, column tokens_b, wrapping ErrInvalidUTF8", err)
	}
	// Nothing of that call was written, and the writer goes on.
	if err := w.Write(rows[0], rows[2]); err != nil {
		t.Fatalf("Write after a RowError: %v", err)
	}
	infos, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	got := readFile(t, filepath.Join(root, infos[0].Path))
	if !reflect.DeepEqual(normalize(got), normalize([]shards.Row{rows[0], rows[2]})) {
		t.Errorf("read back %d rows, want rows 0 and 2", len(got))
	}
}

func TestRowValidate(t *testing.T) {
	for _, tt := range []struct {
		column string
		change func(r *shards.Row)
	}{
		{"id", func(r *shards.Row) { r.ID = "\xff" }},
		{"a", func(r *shards.Row) { r.A = "ok \xc3" }},
		{"source_file", func(r *shards.Row) { r.SourceFile = "\x80.txt" }},
		{"meta", func(r *shards.Row) { r.Meta = map[string]string{"k\xfe": "v"} }},
		{"meta", func(r *shards.Row) { r.Meta = map[string]string{"k": "\xfe"} }},
		{"tokens_a", func(r *shards.Row) { r.TokensA = []string{"\xed\xa0\x80"} }}, // a surrogate
	} {
		r := testRows(15, 1)[0]
		if err := r.Validate(); err != nil {
			t.Fatalf("Validate of a good row: %v", err)
		}
		tt.change(&r)
		var rowErr *shards.RowError
		if err := r.Validate(); !errors.As(err, &rowErr) || rowErr.Column != tt.column {
			t.Errorf("Validate = %v, want a RowError for column %s", err, tt.column)
		}
	}
}
