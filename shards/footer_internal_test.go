package shards

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestFooterRows compares footerRowsAt with parquet-go's own count, and
// checks that a file with no footer is refused.
func TestFooterRows(t *testing.T) {
	root := t.TempDir()
	w, err := NewWriter(root, "c", "s", WriterOptions{RowGroupRows: 7})
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]Row, 30)
	for i := range rows {
		rows[i] = Row{ID: string(rune('a' + i%26)), Corpus: "c", Split: "s", A: "x"}
	}
	if err := w.Write(rows...); err != nil {
		t.Fatal(err)
	}
	infos, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(root, filepath.FromSlash(infos[0].Path))
	got, err := fileFooterRows(name)
	if err != nil || got != 30 {
		t.Fatalf("footerRowsAt = %d, %v; want 30", got, err)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{data[:len(data)-1], data[:8], append(data[:len(data)-4:len(data)-4], 'P', 'A', 'R', '2')} {
		p := filepath.Join(root, "bad.parquet")
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if n, err := fileFooterRows(p); err == nil {
			t.Errorf("a file of %d bytes cut or changed at its end: footerRowsAt = %d, nil; want an error", len(bad), n)
		}
	}
}

// fileFooterRows is footerRowsAt of the file name.
func fileFooterRows(name string) (int64, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return 0, err
	}
	return footerRowsAt(bytes.NewReader(data), int64(len(data)))
}

// FuzzParseFooterRows decodes arbitrary bytes as a footer: no panic, and
// for a footer parquet-go reads, the same row count.
func FuzzParseFooterRows(f *testing.F) {
	dir := f.TempDir()
	w, err := NewWriter(dir, "c", "s", WriterOptions{RowGroupRows: 3})
	if err != nil {
		f.Fatal(err)
	}
	if err := w.Write(Row{ID: "a"}, Row{ID: "b"}, Row{ID: "c"}, Row{ID: "d"}); err != nil {
		f.Fatal(err)
	}
	infos, err := w.Close()
	if err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(infos[0].Path)))
	if err != nil {
		f.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	footer := data[len(data)-8-n : len(data)-8]
	f.Add(footer)
	f.Add(footer[:n/2])
	f.Add([]byte{0x15, 0x02, 0x16, 0x08, 0x00})
	f.Fuzz(func(t *testing.T, footer []byte) {
		rows, err := parseFooterRows(footer)
		if err != nil {
			return
		}
		if rows < 0 {
			t.Fatalf("parseFooterRows = %d, nil", rows)
		}
		// A footer parquet-go accepts in a file must give its count.
		var buf []byte
		buf = append(buf, "PAR1"...)
		buf = append(buf, footer...)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(footer)))
		buf = append(buf, "PAR1"...)
		pf, err := openFooterOnly(buf)
		if err == nil && pf.NumRows() != rows {
			t.Fatalf("parseFooterRows = %d, parquet-go reads %d", rows, pf.NumRows())
		}
	})
}

// openFooterOnly opens a Parquet file held in memory with parquet-go,
// recovering from its panics.
func openFooterOnly(b []byte) (pf *parquet.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			pf, err = nil, os.ErrInvalid
		}
	}()
	return parquet.OpenFile(bytes.NewReader(b), int64(len(b)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
}
