package trainstep

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/parastream/parastream/trainstep/compute"
)

// Safetensors (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON header mapping each tensor
// name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative
// to the byte after the header) plus an optional "__metadata__" map of
// strings, then the raw little-endian data. We write F32 only, tensors in
// name order, the header padded with spaces to a multiple of 8 bytes.

// ErrSafetensors marks a malformed safetensors file.
var ErrSafetensors = errors.New("malformed safetensors")

const maxSafetensorsHeader = 100 << 20

type stEntry struct {
	Dtype   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// WriteSafetensors writes ts (F32) and metadata to w.
func WriteSafetensors(w io.Writer, ts []compute.Tensor, metadata map[string]string) error {
	sorted := append([]compute.Tensor(nil), ts...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	header := map[string]any{}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var off int64
	for i, t := range sorted {
		if err := t.Check(); err != nil {
			return err
		}
		if t.Name == "__metadata__" || t.Name == "" {
			return fmt.Errorf("writing safetensors: tensor name %q is reserved", t.Name)
		}
		if i > 0 && sorted[i-1].Name == t.Name {
			return fmt.Errorf("writing safetensors: tensor %s twice", t.Name)
		}
		n := int64(len(t.Data)) * 4
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		header[t.Name] = stEntry{Dtype: "F32", Shape: shape, Offsets: [2]int64{off, off + n}}
		off += n
	}
	hj, err := json.Marshal(header)
	if err != nil {
		return err
	}
	if pad := len(hj) % 8; pad != 0 {
		hj = append(hj, bytes.Repeat([]byte(" "), 8-pad)...)
	}
	if b, ok := w.(*bytes.Buffer); ok {
		// A file built in memory (the exports) grows once to its size,
		// not by doubling. Checkpoints stream theirs to disk.
		b.Grow(8 + len(hj) + int(off))
	}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(hj)))
	if _, err := w.Write(lenBuf[:]); err != nil {
		return err
	}
	if _, err := w.Write(hj); err != nil {
		return err
	}
	// Chunks of at most 1 MiB (a multiple of 4, as off is: a chunk fills
	// exactly).
	buf := make([]byte, 0, min(1<<20, int(off)))
	for _, t := range sorted {
		for _, v := range t.Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err = w.Write(buf)
	return err
}

// ReadSafetensors parses a whole safetensors file. F32, F64 and F16/BF16
// data are read as float32; tensors come back in name order.
func ReadSafetensors(data []byte) (ts []compute.Tensor, metadata map[string]string, err error) {
	if len(data) < 8 {
		return nil, nil, fmt.Errorf("%w: %d bytes, shorter than the header length", ErrSafetensors, len(data))
	}
	n := binary.LittleEndian.Uint64(data[:8])
	if n > maxSafetensorsHeader || n > uint64(len(data)-8) {
		return nil, nil, fmt.Errorf("%w: header of %d bytes in a file of %d", ErrSafetensors, n, len(data))
	}
	hj, body := data[8:8+n], data[8+n:]
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hj, &raw); err != nil {
		return nil, nil, fmt.Errorf("%w: header: %v", ErrSafetensors, err)
	}
	type span struct {
		name       string
		begin, end int64
	}
	var spans []span
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &metadata); err != nil {
				return nil, nil, fmt.Errorf("%w: __metadata__ must map strings to strings: %v", ErrSafetensors, err)
			}
			continue
		}
		var e stEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, nil, fmt.Errorf("%w: tensor %s: %v", ErrSafetensors, name, err)
		}
		size := map[string]int64{"F32": 4, "F64": 8, "F16": 2, "BF16": 2}[e.Dtype]
		if size == 0 {
			return nil, nil, fmt.Errorf("%w: tensor %s: dtype %q not supported (F32, F64, F16, BF16)", ErrSafetensors, name, e.Dtype)
		}
		count := int64(1)
		for _, s := range e.Shape {
			if s < 0 || (s > 0 && count > math.MaxInt32/int64(s)) {
				return nil, nil, fmt.Errorf("%w: tensor %s: shape %v", ErrSafetensors, name, e.Shape)
			}
			count *= int64(s)
		}
		b, end := e.Offsets[0], e.Offsets[1]
		if b < 0 || end < b || end > int64(len(body)) || end-b != count*size {
			return nil, nil, fmt.Errorf("%w: tensor %s: offsets %v for %d %s values in %d data bytes", ErrSafetensors, name, e.Offsets, count, e.Dtype, len(body))
		}
		t := compute.Tensor{Name: name, Shape: append([]int{}, e.Shape...), Data: make([]float32, count)}
		src := body[b:end]
		for i := range t.Data {
			switch e.Dtype {
			case "F32":
				t.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
			case "F64":
				t.Data[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:])))
			case "BF16":
				t.Data[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[2*i:])) << 16)
			case "F16":
				t.Data[i] = half(binary.LittleEndian.Uint16(src[2*i:]))
			}
		}
		ts = append(ts, t)
		spans = append(spans, span{name, b, end})
	}
	// The spec requires the tensors to cover the data without holes or
	// overlaps.
	sort.Slice(spans, func(i, j int) bool {
		return spans[i].begin < spans[j].begin || (spans[i].begin == spans[j].begin && spans[i].end < spans[j].end)
	})
	var at int64
	for _, s := range spans {
		if s.begin != at {
			return nil, nil, fmt.Errorf("%w: tensor %s starts at %d, expected %d (hole or overlap)", ErrSafetensors, s.name, s.begin, at)
		}
		at = s.end
	}
	if at != int64(len(body)) {
		return nil, nil, fmt.Errorf("%w: %d trailing data bytes", ErrSafetensors, int64(len(body))-at)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	return ts, metadata, nil
}

// half converts an IEEE 754 binary16 value.
func half(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0:
		v := float32(frac) / 1024 / 16384
		if sign != 0 {
			v = -v
		}
		return v
	case exp == 31:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | frac<<13)
}
