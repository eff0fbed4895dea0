package featurize

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// CSR is a sparse matrix in compressed sparse row form, the layout of
// scipy.sparse.csr_matrix: row i holds the column indices
// Indices[Indptr[i]:Indptr[i+1]], strictly increasing, and their values
// Data[Indptr[i]:Indptr[i+1]].
//
// For NMF the rows are documents and the columns terms, as in scikit-learn.
// The zero value is an empty 0×0 matrix; NewCSR starts one with a number of
// columns and AppendRow adds rows.
type CSR struct {
	Rows, Cols int
	// Indptr has Rows+1 entries, Indptr[0] == 0 and Indptr[Rows] == NNZ.
	Indptr  []int
	Indices []int32
	Data    []float32
}

// NewCSR returns an empty matrix of cols columns and no rows, ready for
// AppendRow.
func NewCSR(cols int) *CSR {
	return &CSR{Cols: cols, Indptr: []int{0}}
}

// NNZ is the number of stored entries.
func (m *CSR) NNZ() int { return len(m.Data) }

// Row returns the column indices and values of row i, aliasing m.
func (m *CSR) Row(i int) ([]int32, []float32) {
	lo, hi := m.Indptr[i], m.Indptr[i+1]
	return m.Indices[lo:hi], m.Data[lo:hi]
}

// AppendRow adds a row. indices must be strictly increasing and below
// m.Cols, and values as long as indices; the slices are copied.
func (m *CSR) AppendRow(indices []int32, values []float32) error {
	if len(indices) != len(values) {
		return fmt.Errorf("appending row %d: %d indices but %d values", m.Rows, len(indices), len(values))
	}
	if len(m.Indptr) == 0 {
		m.Indptr = append(m.Indptr, 0)
	}
	for j, c := range indices {
		if c < 0 || int(c) >= m.Cols {
			return fmt.Errorf("appending row %d: column %d out of range [0,%d)", m.Rows, c, m.Cols)
		}
		if j > 0 && c <= indices[j-1] {
			return fmt.Errorf("appending row %d: columns not strictly increasing (%d after %d)", m.Rows, c, indices[j-1])
		}
	}
	m.Indices = append(m.Indices, indices...)
	m.Data = append(m.Data, values...)
	m.Indptr = append(m.Indptr, len(m.Data))
	m.Rows++
	return nil
}

// CSRFromTriplets builds a rows×cols matrix from coordinate entries
// (r[n], c[n], v[n]) in any order; entries at the same position are summed
// and explicit zeros are kept.
func CSRFromTriplets(rows, cols int, r, c []int32, v []float32) (*CSR, error) {
	if len(r) != len(c) || len(r) != len(v) {
		return nil, fmt.Errorf("building CSR: %d row, %d column and %d value entries", len(r), len(c), len(v))
	}
	if rows < 0 || cols < 0 || rows > math.MaxInt32 || cols > math.MaxInt32 {
		return nil, fmt.Errorf("building CSR: shape %d×%d out of range", rows, cols)
	}
	count := make([]int, rows+1)
	for n := range r {
		if r[n] < 0 || int(r[n]) >= rows || c[n] < 0 || int(c[n]) >= cols {
			return nil, fmt.Errorf("building CSR: entry %d at (%d,%d) outside %d×%d", n, r[n], c[n], rows, cols)
		}
		count[r[n]+1]++
	}
	for i := range rows {
		count[i+1] += count[i]
	}
	idx := make([]int32, len(r))
	val := make([]float32, len(r))
	next := slices.Clone(count[:rows])
	for n := range r {
		p := next[r[n]]
		idx[p], val[p] = c[n], v[n]
		next[r[n]]++
	}
	// Sort each row's segment by column (stable, so repeated positions
	// are summed in input order), then compact in place, summing repeats.
	m := &CSR{Rows: rows, Cols: cols, Indptr: make([]int, 1, rows+1)}
	out := 0
	for i := range rows {
		lo, hi := count[i], count[i+1]
		sort.Stable(entries{idx[lo:hi], val[lo:hi]})
		for p := lo; p < hi; p++ {
			if p > lo && idx[p] == idx[out-1] {
				val[out-1] += val[p]
				continue
			}
			idx[out], val[out] = idx[p], val[p]
			out++
		}
		m.Indptr = append(m.Indptr, out)
	}
	m.Indices, m.Data = idx[:out:out], val[:out:out]
	return m, nil
}

// entries sorts one row's columns and values together by column.
type entries struct {
	idx []int32
	val []float32
}

func (e entries) Len() int           { return len(e.idx) }
func (e entries) Less(a, b int) bool { return e.idx[a] < e.idx[b] }
func (e entries) Swap(a, b int) {
	e.idx[a], e.idx[b] = e.idx[b], e.idx[a]
	e.val[a], e.val[b] = e.val[b], e.val[a]
}

// Validate checks the structure: shape, Indptr monotone from 0 to NNZ,
// column indices in range and strictly increasing within each row, and
// finite values.
func (m *CSR) Validate() error {
	if m.Rows < 0 || m.Cols < 0 {
		return fmt.Errorf("sparse matrix: negative shape %d×%d", m.Rows, m.Cols)
	}
	if len(m.Indptr) != m.Rows+1 {
		return fmt.Errorf("sparse matrix: Indptr has %d entries, want Rows+1 = %d", len(m.Indptr), m.Rows+1)
	}
	if len(m.Indices) != len(m.Data) {
		return fmt.Errorf("sparse matrix: %d indices but %d values", len(m.Indices), len(m.Data))
	}
	if m.Indptr[0] != 0 || m.Indptr[m.Rows] != len(m.Data) {
		return fmt.Errorf("sparse matrix: Indptr runs from %d to %d, want 0 to %d", m.Indptr[0], m.Indptr[m.Rows], len(m.Data))
	}
	for i := range m.Rows {
		lo, hi := m.Indptr[i], m.Indptr[i+1]
		if hi < lo || hi > len(m.Data) {
			return fmt.Errorf("sparse matrix: Indptr decreases at row %d", i)
		}
		for p := lo; p < hi; p++ {
			c := m.Indices[p]
			if c < 0 || int(c) >= m.Cols {
				return fmt.Errorf("sparse matrix: row %d has column %d outside [0,%d)", i, c, m.Cols)
			}
			if p > lo && c <= m.Indices[p-1] {
				return fmt.Errorf("sparse matrix: row %d columns not strictly increasing (%d after %d)", i, c, m.Indices[p-1])
			}
			if v := float64(m.Data[p]); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("sparse matrix: row %d column %d holds %v", i, c, v)
			}
		}
	}
	return nil
}

// checkNonNegative reports the first negative entry, for NMF inputs.
func (m *CSR) checkNonNegative() error {
	for i := range m.Rows {
		idx, val := m.Row(i)
		for p, v := range val {
			if v < 0 {
				return fmt.Errorf("sparse matrix: row %d column %d is negative (%v); NMF needs a non-negative matrix", i, idx[p], v)
			}
		}
	}
	return nil
}

// Transpose returns mᵀ as a new CSR matrix (equivalently, m in compressed
// sparse column form). Rows of the result keep increasing column order.
func (m *CSR) Transpose() *CSR {
	t := &CSR{Rows: m.Cols, Cols: m.Rows, Indptr: make([]int, m.Cols+1)}
	t.Indices = make([]int32, len(m.Indices))
	t.Data = make([]float32, len(m.Data))
	for _, c := range m.Indices {
		t.Indptr[c+1]++
	}
	for j := range m.Cols {
		t.Indptr[j+1] += t.Indptr[j]
	}
	next := slices.Clone(t.Indptr[:m.Cols])
	for i := range m.Rows {
		idx, val := m.Row(i)
		for p, c := range idx {
			q := next[c]
			t.Indices[q], t.Data[q] = int32(i), val[p]
			next[c]++
		}
	}
	return t
}

// FrobeniusNorm2 is the sum of the squared entries, accumulated in float64.
func (m *CSR) FrobeniusNorm2() float64 {
	var s float64
	for _, v := range m.Data {
		s += float64(v) * float64(v)
	}
	return s
}

// Sum is the sum of the entries, accumulated in float64.
func (m *CSR) Sum() float64 {
	var s float64
	for _, v := range m.Data {
		s += float64(v)
	}
	return s
}

// MatrixMarket limits protect ReadMatrixMarket against hostile headers: a
// size line may claim more entries than the file holds, so storage grows
// with what is read, up to these bounds.
const (
	mtxMaxDim     = math.MaxInt32
	mtxMaxNNZ     = 1 << 31
	mtxMaxLineLen = 1 << 16
)

// ErrMatrixMarket is wrapped by every error of ReadMatrixMarket about the
// content of the file.
var ErrMatrixMarket = errors.New("bad MatrixMarket file")

// ReadMatrixMarket reads a sparse matrix in MatrixMarket exchange format,
// the coordinate layout with real or integer entries and general symmetry
// ("%%MatrixMarket matrix coordinate real general"), as scipy.io.mmwrite
// writes it: 1-based row and column indices; repeated positions are
// summed. Comment lines ('%') and blank lines are skipped.
func ReadMatrixMarket(r io.Reader) (*CSR, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), mtxMaxLineLen)
	line := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: line %d: %s", ErrMatrixMarket, line, fmt.Sprintf(format, args...))
	}
	next := func() (string, bool) {
		for sc.Scan() {
			line++
			s := strings.TrimSpace(sc.Text())
			if s == "" || s[0] == '%' {
				continue
			}
			return s, true
		}
		return "", false
	}
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("reading MatrixMarket: %w", err)
		}
		return nil, fmt.Errorf("%w: empty input", ErrMatrixMarket)
	}
	line = 1
	banner := strings.Fields(strings.ToLower(sc.Text()))
	if len(banner) != 5 || banner[0] != "%%matrixmarket" || banner[1] != "matrix" {
		return nil, bad("banner %q is not %q", sc.Text(), "%%MatrixMarket matrix coordinate real general")
	}
	if banner[2] != "coordinate" || (banner[3] != "real" && banner[3] != "integer") || banner[4] != "general" {
		return nil, bad("only coordinate real/integer general matrices are supported, not %s %s %s", banner[2], banner[3], banner[4])
	}
	size, ok := next()
	if !ok {
		return nil, fmt.Errorf("%w: no size line", ErrMatrixMarket)
	}
	f := strings.Fields(size)
	if len(f) != 3 {
		return nil, bad("size line %q: want rows cols entries", size)
	}
	var dims [3]int
	for n, s := range f {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return nil, bad("size line %q: %q is not a non-negative integer", size, s)
		}
		dims[n] = v
	}
	rows, cols, nnz := dims[0], dims[1], dims[2]
	if rows > mtxMaxDim || cols > mtxMaxDim || nnz > mtxMaxNNZ {
		return nil, bad("size %d×%d with %d entries exceeds the limits", rows, cols, nnz)
	}
	capHint := min(nnz, 1<<16)
	ri := make([]int32, 0, capHint)
	ci := make([]int32, 0, capHint)
	vs := make([]float32, 0, capHint)
	for len(vs) < nnz {
		s, ok := next()
		if !ok {
			if err := sc.Err(); err != nil {
				return nil, fmt.Errorf("reading MatrixMarket: line %d: %w", line, err)
			}
			return nil, fmt.Errorf("%w: truncated: %d of %d entries", ErrMatrixMarket, len(vs), nnz)
		}
		f := strings.Fields(s)
		if len(f) != 3 {
			return nil, bad("entry %q: want row col value", s)
		}
		i, err1 := strconv.Atoi(f[0])
		j, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil || i < 1 || i > rows || j < 1 || j > cols {
			return nil, bad("entry %q: position outside 1..%d × 1..%d", s, rows, cols)
		}
		v, err := strconv.ParseFloat(f[2], 32)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, bad("entry %q: value is not a finite number", s)
		}
		ri = append(ri, int32(i-1))
		ci = append(ci, int32(j-1))
		vs = append(vs, float32(v))
	}
	if s, ok := next(); ok {
		return nil, bad("%q after the %d entries the size line announced", s, nnz)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading MatrixMarket: line %d: %w", line, err)
	}
	m, err := CSRFromTriplets(rows, cols, ri, ci, vs)
	if err == nil {
		err = m.Validate() // repeated positions may sum past float32
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMatrixMarket, err)
	}
	return m, nil
}

// WriteMatrixMarket writes m in the coordinate real general MatrixMarket
// format, row by row, values in the shortest form that reads back to the
// same float32.
func WriteMatrixMarket(w io.Writer, m *CSR) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", m.Rows, m.Cols, m.NNZ())
	buf := make([]byte, 0, 64)
	for i := range m.Rows {
		idx, val := m.Row(i)
		for p, c := range idx {
			buf = strconv.AppendInt(buf[:0], int64(i+1), 10)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(c)+1, 10)
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, float64(val[p]), 'g', -1, 32)
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return fmt.Errorf("writing MatrixMarket: %w", err)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing MatrixMarket: %w", err)
	}
	return nil
}
