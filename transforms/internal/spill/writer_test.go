package spill_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms/internal/spill"
)

func TestSpillRoundTripLocal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "bucket-007.spill") // OpenWrite makes sub/
	want := slices.Concat(spillRedditRows(5000), spillVariedRows(), spillRedditRows(3000))
	w := spillWriteFile(t, path, want)

	if w.Rows() != int64(len(want)) {
		t.Errorf("Rows() = %d, want %d", w.Rows(), len(want))
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if w.Bytes() != st.Size() {
		t.Errorf("Bytes() = %d, file has %d", w.Bytes(), st.Size())
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the spill file: %v", len(ents), ents)
	}

	got, n, err := spillReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(want)) {
		t.Errorf("reader Rows() = %d, want %d", n, len(want))
	}
	spillCheckRows(t, want, got)

	// ReadFiles hands out rows that may be kept.
	var kept []*shards.Row
	if err := spill.ReadFiles(context.Background(), []string{path, path}, func(r *shards.Row) error {
		kept = append(kept, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 2*len(want) {
		t.Fatalf("ReadFiles gave %d rows, want %d", len(kept), 2*len(want))
	}
	for i, r := range kept {
		if d := spillDiffRows(&want[i%len(want)], r); d != "" {
			t.Fatalf("ReadFiles row %d: %s", i, d)
		}
	}

	// CopyFiles hands out one row, whose copies may be kept.
	var copies []shards.Row
	if err := spill.CopyFiles(context.Background(), []string{path, path}, func(r *shards.Row) error {
		copies = append(copies, *r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(copies) != 2*len(want) {
		t.Fatalf("CopyFiles gave %d rows, want %d", len(copies), 2*len(want))
	}
	for i := range copies {
		if d := spillDiffRows(&want[i%len(want)], &copies[i]); d != "" {
			t.Fatalf("CopyFiles row %d: %s", i, d)
		}
	}
}

func TestSpillEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.spill")
	w := spillWriteFile(t, path, nil)
	if w.Rows() != 0 || w.Bytes() != 8+17 {
		t.Errorf("Rows() = %d, Bytes() = %d; want 0, 25", w.Rows(), w.Bytes())
	}
	got, _, err := spillReadAll(path)
	if err != nil || len(got) != 0 {
		t.Fatalf("read %d rows, %v; want 0, nil", len(got), err)
	}
}

func TestSpillDeterministicFile(t *testing.T) {
	dir := t.TempDir()
	rows := spillRedditRows(3000)
	spillWriteFile(t, filepath.Join(dir, "a.spill"), rows)
	for i := range rows { // same content, other map iteration order
		rows[i].Meta = maps.Clone(rows[i].Meta)
	}
	spillWriteFile(t, filepath.Join(dir, "b.spill"), rows)
	a, _ := os.ReadFile(filepath.Join(dir, "a.spill"))
	b, _ := os.ReadFile(filepath.Join(dir, "b.spill"))
	if !bytes.Equal(a, b) {
		t.Error("the same rows gave different files")
	}
}

func TestSpillNoFileBeforeClose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bucket.spill")
	w, err := spill.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	rows := spillRedditRows(2000)
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("final name exists before Close: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), ".bucket.spill.tmp-") {
		t.Fatalf("want one hidden temporary file, have %v", ents)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("Abort left %v", ents)
	}
	if err := w.Close(); err == nil {
		t.Error("Close after Abort succeeded")
	}
	if err := w.Write(&rows[0]); err == nil {
		t.Error("Write after Abort succeeded")
	}
}

func TestSpillBadPath(t *testing.T) {
	for _, p := range []string{"", "dir/", "memfs://", "memfs://bucket/", "nosuchscheme://x/y.spill"} {
		if w, err := spill.Create(context.Background(), p); err == nil {
			w.Abort()
			t.Errorf("Create(%q) succeeded", p)
		}
	}
}

func TestSpillMemFS(t *testing.T) {
	ctx := context.Background()
	path := "memfs://spilltest/bucket-1.spill"
	want := spillRedditRows(4000)
	spillWriteFile(t, path, want)
	fs, _ := filesystem.New(ctx, path)
	if names, _ := fs.List(ctx, "memfs://spilltest/*"); !slices.Equal(names, []string{path}) {
		t.Errorf("memfs holds %q, want only %q", names, path)
	}
	got, _, err := spillReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	spillCheckRows(t, want, got)
}

// TestSpillKeyedRows writes rows with and without keys to one file and
// reads the keys back with CopyFilesKeyed.
func TestSpillKeyedRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keyed.spill")
	w, err := spill.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	want := spillRedditRows(2000)
	for i := range want {
		if i%3 == 0 {
			err = w.Write(&want[i])
		} else {
			err = w.WriteKeyed(&want[i], spill.Key{byte(i), byte(i >> 8), 7})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []shards.Row
	err = spill.CopyFilesKeyed(context.Background(), []string{path}, func(r *shards.Row, key *spill.Key) error {
		i := len(got)
		switch {
		case i%3 == 0 && key != nil:
			return fmt.Errorf("row %d was written without a key, read with %v", i, *key)
		case i%3 != 0 && (key == nil || *key != spill.Key{byte(i), byte(i >> 8), 7}):
			return fmt.Errorf("row %d: key %v", i, key)
		}
		got = append(got, *r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	spillCheckRows(t, want, got)
}

// TestSpillBlockKinds checks that a local file's blocks are stored and a
// remote file's compressed, and that each reads back: the rows of a local
// file take their raw size (plus headers), those of a remote one less.
func TestSpillBlockKinds(t *testing.T) {
	want := spillRedditRows(3000)
	local := filepath.Join(t.TempDir(), "kinds.spill")
	remote := "spillplain://kinds/kinds.spill"
	defer spillPlainFS.remove(remote)
	sizes := map[byte]int{}
	for _, c := range []struct {
		path string
		kind byte
		data func() []byte
	}{
		{local, 'R', func() []byte { b, _ := os.ReadFile(local); return b }},
		{remote, 'S', func() []byte { return spillPlainFS.get(remote) }},
	} {
		spillWriteFile(t, c.path, want)
		data := c.data()
		blocks := 0
		for at := 8; at < len(data) && data[at] != 'E'; blocks++ {
			if data[at] != c.kind {
				t.Fatalf("%s: block %d at %d is %q, want %q", c.path, blocks, at, data[at], c.kind)
			}
			raw := int(binary.LittleEndian.Uint32(data[at+5:]))
			comp := int(binary.LittleEndian.Uint32(data[at+9:]))
			if c.kind == 'R' && comp != raw {
				t.Fatalf("%s: stored block %d holds %d bytes, header says %d raw", c.path, blocks, comp, raw)
			}
			at += 21 + comp
		}
		if blocks < 2 {
			t.Fatalf("%s: %d blocks, want several", c.path, blocks)
		}
		sizes[c.kind] = len(data)
		got, _, err := spillReadAll(c.path)
		if err != nil {
			t.Fatal(err)
		}
		spillCheckRows(t, want, got)
	}
	if sizes['S'] >= sizes['R'] {
		t.Errorf("compressed file of %d bytes, stored one of %d: want the compressed one smaller", sizes['S'], sizes['R'])
	}
}

// spillMemFS is an in-memory filesystem with the bare filesystem.Interface:
// it can neither rename nor remove. A file appears when its writer closes.
// With failAfter > 0, a file's writes fail once it would pass that size.
type spillMemFS struct {
	mu        sync.Mutex
	files     map[string][]byte
	failAfter int
}

// spillMemFSRename adds Rename and Remove.
type spillMemFSRename struct{ *spillMemFS }

var (
	spillPlainFS = &spillMemFS{files: map[string][]byte{}}
	spillFailFS  = spillMemFSRename{&spillMemFS{files: map[string][]byte{}, failAfter: 1 << 10}}
)

func init() {
	filesystem.Register("spillplain", func(context.Context) filesystem.Interface { return spillPlainFS })
	filesystem.Register("spillfail", func(context.Context) filesystem.Interface { return spillFailFS })
}

func (f *spillMemFS) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.files))
}

func (f *spillMemFS) put(name string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[name] = data
}

func (f *spillMemFS) get(name string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.files[name])
}

func (f *spillMemFS) remove(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.files, name)
}

func (f *spillMemFS) Close() error { return nil }

func (f *spillMemFS) List(_ context.Context, glob string) ([]string, error) {
	var out []string
	for _, name := range f.names() {
		if ok, _ := filesystem.Match(glob, name); ok {
			out = append(out, name)
		}
	}
	return out, nil
}

func (f *spillMemFS) OpenRead(_ context.Context, name string) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.files[name]
	if !ok {
		return nil, os.ErrNotExist
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (f *spillMemFS) OpenWrite(_ context.Context, name string) (io.WriteCloser, error) {
	return &spillMemWriter{fs: f, name: name}, nil
}

func (f *spillMemFS) Size(_ context.Context, name string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.files[name]
	if !ok {
		return -1, os.ErrNotExist
	}
	return int64(len(data)), nil
}

func (f spillMemFSRename) Remove(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.files[name]; !ok {
		return os.ErrNotExist
	}
	delete(f.files, name)
	return nil
}

func (f spillMemFSRename) Rename(_ context.Context, from, to string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.files[from]
	if !ok {
		return os.ErrNotExist
	}
	delete(f.files, from)
	f.files[to] = data
	return nil
}

type spillMemWriter struct {
	fs   *spillMemFS
	name string
	buf  bytes.Buffer
}

func (w *spillMemWriter) Write(p []byte) (int, error) {
	if w.fs.failAfter > 0 && w.buf.Len()+len(p) > w.fs.failAfter {
		return 0, errors.New("disk full")
	}
	return w.buf.Write(p)
}

func (w *spillMemWriter) Close() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	w.fs.files[w.name] = w.buf.Bytes()
	return nil
}

func TestSpillFilesystemWithoutRename(t *testing.T) {
	path := "spillplain://dir/bucket.spill"
	want := spillRedditRows(500)
	spillWriteFile(t, path, want)
	got, _, err := spillReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	spillCheckRows(t, want, got)
	if names := spillPlainFS.names(); !slices.Equal(names, []string{path}) {
		t.Errorf("filesystem holds %q, want only %q", names, path)
	}
}

func TestSpillWriteFailure(t *testing.T) {
	ctx := context.Background()
	path := "spillfail://dir/bucket.spill"
	w, err := spill.Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	for _, r := range spillRedditRows(5000) {
		if werr = w.Write(&r); werr != nil {
			break
		}
	}
	if werr == nil || !strings.Contains(werr.Error(), "disk full") || !strings.Contains(werr.Error(), path) {
		t.Fatalf("Write: %v; want the filesystem's error naming the file", werr)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close succeeded after a failed Write")
	}
	if names := spillFailFS.names(); len(names) != 0 {
		t.Errorf("failed write left %q", names)
	}
}

func TestSpillCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	path := filepath.Join(t.TempDir(), "c.spill")
	w, err := spill.Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	r := spillRedditRows(1)[0]
	w.Write(&r)
	cancel()
	if err := w.Close(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v, want context.Canceled", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("canceled write left %s", path)
	}
}

func TestSpillRowTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MB")
	}
	path := filepath.Join(t.TempDir(), "big.spill")
	w, err := spill.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	small := spillRedditRows(1)[0]
	big := shards.Row{ID: "big", A: strings.Repeat("x", 65<<20)}
	if err := w.Write(&small); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&big); err == nil {
		t.Fatal("a 65 MiB row was accepted")
	}
	if err := w.Write(&small); err != nil {
		t.Fatalf("writer unusable after a refused row: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, err := spillReadAll(path)
	if err != nil || len(got) != 2 {
		t.Fatalf("read %d rows, %v; want 2", len(got), err)
	}
}

// spillWriterHeap opens n writers in dir, writes rowsEach rows to each
// (round robin, as a scatter does) and returns the heap growth per writer
// while they are all open.
func spillWriterHeap(tb testing.TB, dir string, n, rowsEach int, rows []shards.Row) float64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	ws := make([]*spill.Writer, n)
	for i := range ws {
		w, err := spill.Create(context.Background(), filepath.Join(dir, fmt.Sprintf("%d-bucket-%03d.spill", rowsEach, i)))
		if err != nil {
			tb.Fatal(err)
		}
		ws[i] = w
	}
	for j := range rowsEach {
		for i, w := range ws {
			if err := w.Write(&rows[(i*rowsEach+j)%len(rows)]); err != nil {
				tb.Fatal(err)
			}
		}
	}
	// Twice: the first moves the shared pools (compressors, frame buffers)
	// to their victim caches, the second frees them. They are the process's,
	// not a writer's.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	per := (float64(ms.HeapAlloc) - float64(before)) / float64(n)
	for _, w := range ws {
		if err := w.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	return per
}

func TestSpillWriterMemory(t *testing.T) {
	rows := spillRedditRows(4096)
	dir := t.TempDir()
	for _, rowsEach := range []int{0, 200, 1000} {
		per := spillWriterHeap(t, dir, 256, rowsEach, rows)
		t.Logf("256 open writers, %4d rows each: %.0f KiB of heap per writer", rowsEach, per/1024)
		if per > 1<<20 {
			t.Errorf("%.0f KiB per open writer, want under 1 MiB", per/1024)
		}
	}
}

// BenchmarkSpillWrite measures encoding, compressing and writing rows to a
// local file (Close included).
func BenchmarkSpillWrite(b *testing.B) {
	rows := spillRedditRows(4096)
	size := spillEncodedSize(rows)
	b.SetBytes(int64(size))
	path := filepath.Join(b.TempDir(), "bench.spill")
	b.ReportAllocs()
	b.ResetTimer()
	w, err := spill.Create(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		if err := w.Write(&rows[i%len(rows)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(w.Bytes())/float64(b.N), "file-B/row")
	b.ReportMetric(size/(float64(w.Bytes())/float64(b.N)), "ratio")
}

// BenchmarkSpillWriterMemory reports the heap each of 256 open writers
// holds once their blocks have filled (one iteration is enough).
func BenchmarkSpillWriterMemory(b *testing.B) {
	rows := spillRedditRows(4096)
	var per float64
	for i := 0; b.Loop(); i++ {
		per = spillWriterHeap(b, b.TempDir(), 256, 1000, rows)
	}
	b.ReportMetric(per, "heap-B/writer")
}

func ExampleCreate() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "spill")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "bucket-00042.spill")

	w, err := spill.Create(ctx, path)
	if err != nil {
		panic(err)
	}
	defer w.Abort() // discards the file unless Close succeeded
	for _, text := range []string{"first comment", "second comment"} {
		r := shards.Row{ID: text[:1], A: text, TokensA: strings.Fields(text)}
		if err := w.Write(&r); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	err = spill.ReadFiles(ctx, []string{path}, func(r *shards.Row) error {
		fmt.Printf("%s %q %q\n", r.ID, r.A, r.TokensA)
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(w.Rows(), "rows")
	// Output:
	// f "first comment" ["first" "comment"]
	// s "second comment" ["second" "comment"]
	// 2 rows
}
