package featurize_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/parastream/parastream/featurize"
)

func TestCSRFromTriplets(t *testing.T) {
	// Unsorted, with a repeated position (1,2) that is summed.
	m, err := featurize.CSRFromTriplets(3, 4,
		[]int32{1, 0, 1, 2, 1},
		[]int32{2, 3, 0, 1, 2},
		[]float32{1, 2, 3, 4, 5})
	if err != nil {
		t.Fatal(err)
	}
	want := &featurize.CSR{Rows: 3, Cols: 4, Indptr: []int{0, 1, 3, 4},
		Indices: []int32{3, 0, 2, 1}, Data: []float32{2, 3, 6, 4}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("got %+v\nwant %+v", m, want)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := featurize.CSRFromTriplets(2, 2, []int32{2}, []int32{0}, []float32{1}); err == nil {
		t.Fatal("an entry outside the shape was accepted")
	}
}

func TestCSRAppendRowAndTranspose(t *testing.T) {
	m := featurize.NewCSR(5)
	rows := [][]int32{{0, 4}, {}, {1, 2, 3}}
	vals := [][]float32{{1, 2}, {}, {3, 4, 5}}
	for i := range rows {
		if err := m.AppendRow(rows[i], vals[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.AppendRow([]int32{3, 1}, []float32{1, 1}); err == nil {
		t.Fatal("unsorted columns accepted")
	}
	if err := m.AppendRow([]int32{5}, []float32{1}); err == nil {
		t.Fatal("column out of range accepted")
	}
	if m.Rows != 3 || m.NNZ() != 5 {
		t.Fatalf("rows %d nnz %d, want 3 and 5", m.Rows, m.NNZ())
	}
	tr := m.Transpose()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	if tr.Rows != 5 || tr.Cols != 3 {
		t.Fatalf("transpose is %d×%d", tr.Rows, tr.Cols)
	}
	idx, val := tr.Row(4)
	if !reflect.DeepEqual(idx, []int32{0}) || !reflect.DeepEqual(val, []float32{2}) {
		t.Fatalf("row 4 of the transpose: %v %v", idx, val)
	}
	if back := tr.Transpose(); !reflect.DeepEqual(back, m) {
		t.Fatalf("transpose twice: %+v, want %+v", back, m)
	}
}

func TestCSRValidate(t *testing.T) {
	good := func() *featurize.CSR {
		return &featurize.CSR{Rows: 2, Cols: 3, Indptr: []int{0, 2, 3}, Indices: []int32{0, 2, 1}, Data: []float32{1, 2, 3}}
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, breakIt := range map[string]func(m *featurize.CSR){
		"short indptr":   func(m *featurize.CSR) { m.Indptr = m.Indptr[:2] },
		"column range":   func(m *featurize.CSR) { m.Indices[1] = 3 },
		"unsorted":       func(m *featurize.CSR) { m.Indices[0], m.Indices[1] = 2, 0 },
		"indptr decline": func(m *featurize.CSR) { m.Indptr[1] = 4 },
		"lengths":        func(m *featurize.CSR) { m.Data = m.Data[:2] },
		"nan":            func(m *featurize.CSR) { m.Data[0] = float32(nan()) },
	} {
		m := good()
		breakIt(m)
		if err := m.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, m)
		}
	}
}

func TestMatrixMarketRoundTrip(t *testing.T) {
	m := randomSparse(40, 30, 0.2, 7)
	var buf bytes.Buffer
	if err := featurize.WriteMatrixMarket(&buf, m); err != nil {
		t.Fatal(err)
	}
	back, err := featurize.ReadMatrixMarket(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatal("MatrixMarket round trip changed the matrix")
	}
}

func TestReadMatrixMarketScipyStyle(t *testing.T) {
	// As scipy.io.mmwrite writes it: a comment line, integer field, and
	// entries in column order.
	in := "%%MatrixMarket matrix coordinate integer general\n%\n% written by scipy\n2 3 3\n2 1 5\n1 3 7\n\n2 3 1\n"
	m, err := featurize.ReadMatrixMarket(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := &featurize.CSR{Rows: 2, Cols: 3, Indptr: []int{0, 1, 3}, Indices: []int32{2, 0, 2}, Data: []float32{7, 5, 1}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("got %+v, want %+v", m, want)
	}
}

func TestReadMatrixMarketErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "empty"},
		{"banner", "%%MatrixMarket matrix array real general\n2 2\n", "only coordinate"},
		{"symmetric", "%%MatrixMarket matrix coordinate real symmetric\n1 1 0\n", "only coordinate"},
		{"size", "%%MatrixMarket matrix coordinate real general\n2 x 1\n", "size line"},
		{"truncated", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n", "truncated: 1 of 2"},
		{"range", "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", "outside"},
		{"zero based", "%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1\n", "outside"},
		{"value", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 nan\n", "finite"},
		{"extra", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n", "after the 1 entries"},
		{"huge", "%%MatrixMarket matrix coordinate real general\n2 2 99999999999\n", "limits"},
	} {
		_, err := featurize.ReadMatrixMarket(strings.NewReader(tc.in))
		if err == nil || !errors.Is(err, featurize.ErrMatrixMarket) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want ErrMatrixMarket mentioning %q", tc.name, err, tc.want)
		}
	}
}

func FuzzReadMatrixMarket(f *testing.F) {
	var buf bytes.Buffer
	if err := featurize.WriteMatrixMarket(&buf, randomSparse(5, 4, 0.4, 1)); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("%%MatrixMarket matrix coordinate integer general\n% c\n2 3 3\n2 1 5\n1 3 7\n2 1 1\n"))
	f.Add([]byte("%%MatrixMarket matrix coordinate real general\n0 0 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := featurize.ReadMatrixMarket(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("ReadMatrixMarket returned an invalid matrix: %v", err)
		}
		var out bytes.Buffer
		if err := featurize.WriteMatrixMarket(&out, m); err != nil {
			t.Fatal(err)
		}
		back, err := featurize.ReadMatrixMarket(&out)
		if err != nil {
			t.Fatalf("reading back what was written: %v", err)
		}
		if !reflect.DeepEqual(back, m) {
			t.Fatal("round trip changed the matrix")
		}
	})
}
