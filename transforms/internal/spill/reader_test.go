package spill_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms/internal/spill"
)

func TestSpillTruncated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "whole.spill")
	rows := spillRedditRows(3000) // several blocks
	spillWriteFile(t, path, rows)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blockEnd := spillFirstBlockEnd(t, data)
	for _, cut := range []int{0, 3, 8, 8 + 1, 8 + 10, 8 + 21, 8 + 21 + 100, blockEnd, blockEnd + 1, len(data) - 17, len(data) - 16, len(data) - 1} {
		t.Run(strconv.Itoa(cut), func(t *testing.T) {
			p := filepath.Join(dir, fmt.Sprintf("cut-%d.spill", cut))
			if err := os.WriteFile(p, data[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			got, _, err := spillReadAll(p)
			if !errors.Is(err, spill.ErrCorrupt) || !strings.Contains(err.Error(), p) {
				t.Fatalf("read %d rows, err %v; want ErrCorrupt naming %s", len(got), err, p)
			}
			if cut > 8 && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("err %v does not wrap io.ErrUnexpectedEOF", err)
			}
			t.Log(err)
			err = spill.ReadFiles(context.Background(), []string{p}, func(*shards.Row) error { return nil })
			if !errors.Is(err, spill.ErrCorrupt) {
				t.Fatalf("ReadFiles: %v", err)
			}
		})
	}
}

// spillFirstBlockEnd returns the offset just after the first block.
func spillFirstBlockEnd(t *testing.T, data []byte) int {
	t.Helper()
	if len(data) < 8+21 || data[8] != 'S' && data[8] != 'R' {
		t.Fatal("file does not start with a block")
	}
	comp := int(data[17]) | int(data[18])<<8 | int(data[19])<<16 | int(data[20])<<24
	return 8 + 21 + comp
}

// TestSpillCorruptByte changes every byte of a file of stored blocks (a
// local file's) and of one of S2 blocks (a remote file's), in turn.
func TestSpillCorruptByte(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	var rows []shards.Row
	for i := range 40 { // two blocks of a few KiB: short enough to corrupt every byte
		rows = append(rows, spillRedditRow(rng, i))
	}
	local := filepath.Join(dir, "whole.spill")
	spillWriteFile(t, local, rows)
	stored, _ := os.ReadFile(local)
	remote := "spillplain://corrupt/whole.spill"
	spillWriteFile(t, remote, rows)
	compressed := spillPlainFS.get(remote)
	spillPlainFS.remove(remote)
	for _, c := range []struct {
		kind byte
		data []byte
	}{{'R', stored}, {'S', compressed}} {
		if c.data[8] != c.kind {
			t.Fatalf("the file's first block is %q, want %q", c.data[8], c.kind)
		}
		t.Run(string(c.kind), func(t *testing.T) { spillCorruptEachByte(t, c.data) })
	}
}

func spillCorruptEachByte(t *testing.T, data []byte) {
	p := "spillplain://corrupt/bad.spill" // in memory: the loop reads thousands of files
	for i := range data {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			bad := slices.Clone(data)
			bad[i] ^= mask
			spillPlainFS.put(p, bad)
			got, _, err := spillReadAll(p)
			if !errors.Is(err, spill.ErrCorrupt) {
				t.Fatalf("byte %d of %d ^ %#x: read %d rows, err %v; want ErrCorrupt", i, len(data), mask, len(got), err)
			}
		}
	}
	// Bytes after the trailer.
	spillPlainFS.put(p, append(slices.Clone(data), 0))
	defer spillPlainFS.remove(p)
	if _, _, err := spillReadAll(p); !errors.Is(err, spill.ErrCorrupt) {
		t.Fatalf("trailing byte: err %v, want ErrCorrupt", err)
	}
}

// FuzzOpenSpill reads arbitrary bytes as a spill file: no panic, and an
// error that wraps ErrCorrupt unless the file is valid.
func FuzzOpenSpill(f *testing.F) {
	dir := f.TempDir()
	for i, n := range []int{0, 1, 30, 400} {
		// Stored blocks (a local file) and S2 blocks (a remote one).
		p := filepath.Join(dir, fmt.Sprintf("seed-%d.spill", i))
		spillWriteFile(f, p, spillRedditRows(n))
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		remote := fmt.Sprintf("spillplain://seed/%d.spill", i)
		spillWriteFile(f, remote, spillRedditRows(n))
		for _, data := range [][]byte{data, spillPlainFS.get(remote)} {
			f.Add(data)
			f.Add(data[:len(data)/2])
		}
		spillPlainFS.remove(remote)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := "spillplain://fuzz/input.spill"
		spillPlainFS.put(p, data)
		defer spillPlainFS.remove(p)
		r, err := spill.Open(context.Background(), p)
		if err != nil {
			if !errors.Is(err, spill.ErrCorrupt) {
				t.Fatalf("Open: %v does not wrap ErrCorrupt", err)
			}
			return
		}
		defer r.Close()
		var row shards.Row
		for {
			err := r.Next(&row)
			if err == io.EOF {
				return
			}
			if err != nil {
				if !errors.Is(err, spill.ErrCorrupt) {
					t.Fatalf("Next: %v does not wrap ErrCorrupt", err)
				}
				return
			}
		}
	})
}

func TestSpillNotASpillFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.spill")
	os.WriteFile(p, []byte("hello, world\n"), 0o644)
	if _, err := spill.Open(context.Background(), p); !errors.Is(err, spill.ErrCorrupt) || !strings.Contains(err.Error(), p) {
		t.Fatalf("err %v; want ErrCorrupt naming the file", err)
	}
	_, err := spill.Open(context.Background(), filepath.Join(t.TempDir(), "missing.spill"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: err %v, want os.ErrNotExist", err)
	}
}

func TestReadSpillFiles(t *testing.T) {
	dir := t.TempDir()
	rows := spillRedditRows(300)
	var paths []string
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("b%d.spill", i))
		spillWriteFile(t, p, rows[i*100:(i+1)*100])
		paths = append(paths, p)
	}
	slices.Reverse(paths)
	var ids []string
	if err := spill.ReadFiles(context.Background(), paths, func(r *shards.Row) error {
		ids = append(ids, r.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 2; i >= 0; i-- {
		for _, r := range rows[i*100 : (i+1)*100] {
			want = append(want, r.ID)
		}
	}
	if !slices.Equal(ids, want) {
		t.Error("ReadFiles did not read the files in the order given")
	}

	stop := errors.New("stop")
	err := spill.ReadFiles(context.Background(), paths, func(*shards.Row) error { return stop })
	if !errors.Is(err, stop) || !strings.Contains(err.Error(), paths[0]) {
		t.Errorf("fn's error came back as %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := spill.ReadFiles(ctx, paths, func(*shards.Row) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
}

// spillBenchFile writes n rows to a file for the read benchmarks.
func spillBenchFile(b *testing.B, n int) (string, float64) {
	rows := spillRedditRows(4096)
	path := filepath.Join(b.TempDir(), "bench.spill")
	w, err := spill.Create(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := w.Write(&rows[i%len(rows)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path, spillEncodedSize(rows)
}

// BenchmarkSpillRead measures reading, decompressing and decoding rows from
// a local file into one reused row.
func BenchmarkSpillRead(b *testing.B) {
	path, size := spillBenchFile(b, 200_000)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	var r *spill.Reader
	var row shards.Row
	for b.Loop() {
		if r == nil {
			var err error
			if r, err = spill.Open(context.Background(), path); err != nil {
				b.Fatal(err)
			}
		}
		err := r.Next(&row)
		if err == io.EOF {
			r.Close()
			r = nil
			continue // a Loop iteration that reads no row: rare enough to ignore
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if r != nil {
		r.Close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkReadSpillFiles is BenchmarkSpillRead through the convenience
// function, which hands out a fresh row each time.
func BenchmarkReadSpillFiles(b *testing.B) {
	path, size := spillBenchFile(b, 200_000)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	stop := errors.New("stop")
	rows := 0
	for rows < b.N {
		err := spill.ReadFiles(context.Background(), []string{path}, func(*shards.Row) error {
			if rows++; rows == b.N {
				return stop
			}
			return nil
		})
		if err != nil && !errors.Is(err, stop) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
