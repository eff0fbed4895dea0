package trainstep

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/parastream/parastream/trainstep/compute"
)

// The optimiser state of an embedding table is mostly zero rows: Adam's
// moments of a row stay 0 until a batch holds its token, and most of the
// out-of-vocabulary buckets (100,000 of them, say) are never hashed to.
// FileOptimizer keeps such a tensor packed: its non-zero rows, in order,
// under the tensor's name, their row numbers in the F32 tensor
// name+rowsSuffix (exact below 2^24 rows), and the full row count in the
// metadata under rowsKey+name. A reader expands it (unpackState;
// scripts/parity.py's read_safetensors does the same).
const (
	rowsSuffix = "@rows"
	rowsKey    = "rows:"
	// maxPackRows: a tensor is packed when fewer than half its rows are
	// not zero, and it has fewer rows than float32 counts exactly.
	maxPackRows = 1 << 24
)

// packState packs the tensors of ts that are mostly zero rows, adding the
// row counts to meta.
func packState(ts []compute.Tensor, meta map[string]string) []compute.Tensor {
	out := make([]compute.Tensor, 0, len(ts))
	for _, t := range ts {
		if len(t.Shape) != 2 || t.Shape[0] >= maxPackRows || t.Shape[0] < 2 {
			out = append(out, t)
			continue
		}
		rows, width := t.Shape[0], t.Shape[1]
		var keep []int
		for r := range rows {
			for _, v := range t.Data[r*width : (r+1)*width] {
				if v != 0 {
					keep = append(keep, r)
					break
				}
			}
		}
		if 2*len(keep) >= rows {
			out = append(out, t)
			continue
		}
		vals := compute.NewTensor(t.Name, len(keep), width)
		idx := compute.NewTensor(t.Name+rowsSuffix, len(keep))
		for i, r := range keep {
			copy(vals.Data[i*width:(i+1)*width], t.Data[r*width:(r+1)*width])
			idx.Data[i] = float32(r)
		}
		meta[rowsKey+t.Name] = strconv.Itoa(rows)
		out = append(out, vals, idx)
	}
	return out
}

// unpackState expands the packed tensors of ts (packState) to their full
// shape.
func unpackState(ts []compute.Tensor, meta map[string]string) ([]compute.Tensor, error) {
	idx := map[string]compute.Tensor{}
	for _, t := range ts {
		if name, ok := strings.CutSuffix(t.Name, rowsSuffix); ok {
			idx[name] = t
		}
	}
	out := make([]compute.Tensor, 0, len(ts))
	for _, t := range ts {
		if strings.HasSuffix(t.Name, rowsSuffix) {
			continue
		}
		n, packed := meta[rowsKey+t.Name]
		if !packed {
			out = append(out, t)
			continue
		}
		rows, err := strconv.Atoi(n)
		ix, ok := idx[t.Name]
		if err != nil || !ok || len(t.Shape) != 2 || len(ix.Data) != t.Shape[0] {
			return nil, fmt.Errorf("optimiser tensor %s: packed rows that do not fit (%s rows, %d row numbers)", t.Name, n, len(ix.Data))
		}
		width := t.Shape[1]
		full := compute.NewTensor(t.Name, rows, width)
		for i, r := range ix.Data {
			ri := int(r)
			if ri < 0 || ri >= rows {
				return nil, fmt.Errorf("optimiser tensor %s: row %d of %d", t.Name, ri, rows)
			}
			copy(full.Data[ri*width:(ri+1)*width], t.Data[i*width:(i+1)*width])
		}
		out = append(out, full)
	}
	return out, nil
}
