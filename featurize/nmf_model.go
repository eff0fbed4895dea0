package featurize

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// The model file is a safetensors file (https://huggingface.co/docs/safetensors):
//
//	8 bytes   little-endian uint64 N, the length of the header
//	N bytes   JSON header, padded with spaces to a multiple of 8 bytes:
//	          {"H": {"dtype": "F32", "shape": [K, Terms], "data_offsets": [0, 4·K·Terms]},
//	           "__metadata__": {"format": "parastream-nmf", "version": "1", "k": ..., "terms": ...,
//	                            "l1": ..., "iterations": ..., "objective": ..., "rel_error": ...,
//	                            "seed": ..., "sha256": hex sha256 of the tensor bytes}}
//	4·K·Terms bytes   H, little-endian float32, row-major
//
// safetensors metadata values are strings; numbers are written in Go's
// shortest round-trip form. Python reads the topics with
// safetensors.numpy.load_file(path)["H"].
const (
	nmfFormat        = "parastream-nmf"
	nmfVersion       = "1"
	nmfMaxHeader     = 1 << 20
	nmfMaxTensorSize = 1 << 34 // bytes of H: 4 Gi topic weights
)

// ErrBadModel is wrapped by every error of ReadNMF about the content of
// the file (as opposed to failures of the reader).
var ErrBadModel = errors.New("bad NMF model file")

type nmfTensor struct {
	DType       string   `json:"dtype"`
	Shape       []int64  `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

type nmfMeta struct {
	Format     string `json:"format"`
	Version    string `json:"version"`
	K          string `json:"k"`
	Terms      string `json:"terms"`
	L1         string `json:"l1"`
	Iterations string `json:"iterations"`
	Objective  string `json:"objective"`
	RelError   string `json:"rel_error"`
	Seed       string `json:"seed"`
	SHA256     string `json:"sha256"`
}

type nmfHeader struct {
	H    *nmfTensor `json:"H"`
	Meta *nmfMeta   `json:"__metadata__"`
}

// WriteTo writes the model in the safetensors layout described above and
// returns the number of bytes written. The same model always gives the
// same bytes.
func (m *NMF) WriteTo(w io.Writer) (int64, error) {
	if m.K < 1 || m.Terms < 1 || len(m.H) != m.K*m.Terms {
		return 0, fmt.Errorf("writing NMF model: H has %d values, want K×Terms = %d×%d", len(m.H), m.K, m.Terms)
	}
	data := make([]byte, 4*len(m.H))
	for i, v := range m.H {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	sum := sha256.Sum256(data)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	hdr, err := json.Marshal(nmfHeader{
		H: &nmfTensor{DType: "F32", Shape: []int64{int64(m.K), int64(m.Terms)}, DataOffsets: [2]int64{0, int64(len(data))}},
		Meta: &nmfMeta{Format: nmfFormat, Version: nmfVersion, K: strconv.Itoa(m.K), Terms: strconv.Itoa(m.Terms),
			L1: f(m.L1), Iterations: strconv.Itoa(m.Iters), Objective: f(m.Objective), RelError: f(m.RelError),
			Seed: strconv.FormatUint(m.Seed, 10), SHA256: hex.EncodeToString(sum[:])},
	})
	if err != nil {
		return 0, fmt.Errorf("writing NMF model: %w", err)
	}
	for len(hdr)%8 != 0 {
		hdr = append(hdr, ' ')
	}
	var n8 [8]byte
	binary.LittleEndian.PutUint64(n8[:], uint64(len(hdr)))
	var total int64
	for _, b := range [][]byte{n8[:], hdr, data} {
		n, err := w.Write(b)
		total += int64(n)
		if err != nil {
			return total, fmt.Errorf("writing NMF model: %w", err)
		}
	}
	return total, nil
}

// ReadNMF reads a model written by WriteTo. A truncated, corrupted or
// foreign file gives an error wrapping ErrBadModel that says what is wrong;
// the tensor bytes are checked against the header's sha256, and the
// header's size is bounded, so memory grows only with what is read.
func ReadNMF(r io.Reader) (*NMF, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadModel, fmt.Sprintf(format, args...))
	}
	var n8 [8]byte
	if _, err := io.ReadFull(r, n8[:]); err != nil {
		return nil, readErr(err, "header length", bad)
	}
	n := binary.LittleEndian.Uint64(n8[:])
	if n == 0 || n > nmfMaxHeader {
		return nil, bad("header length %d outside 1..%d (not a parastream NMF model?)", n, nmfMaxHeader)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, readErr(err, "header", bad)
	}
	var h nmfHeader
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, bad("header is not the expected JSON: %v", err)
	}
	if h.H == nil || h.Meta == nil {
		return nil, bad("header lacks the H tensor or the metadata")
	}
	meta, t := h.Meta, h.H
	if meta.Format != nmfFormat || meta.Version != nmfVersion {
		return nil, bad("format %q version %q, want %q version %q", meta.Format, meta.Version, nmfFormat, nmfVersion)
	}
	m := &NMF{}
	var err error
	ints := []struct {
		dst  *int
		name string
		s    string
	}{{&m.K, "k", meta.K}, {&m.Terms, "terms", meta.Terms}, {&m.Iters, "iterations", meta.Iterations}}
	for _, f := range ints {
		if *f.dst, err = strconv.Atoi(f.s); err != nil || *f.dst < 0 {
			return nil, bad("metadata %s = %q is not a non-negative integer", f.name, f.s)
		}
	}
	nums := []struct {
		dst  *float64
		name string
		s    string
	}{{&m.L1, "l1", meta.L1}, {&m.Objective, "objective", meta.Objective}, {&m.RelError, "rel_error", meta.RelError}}
	for _, f := range nums {
		if *f.dst, err = strconv.ParseFloat(f.s, 64); err != nil || math.IsNaN(*f.dst) {
			return nil, bad("metadata %s = %q is not a number", f.name, f.s)
		}
	}
	if m.L1 < 0 || math.IsInf(m.L1, 0) {
		return nil, bad("metadata l1 = %v, want a finite number ≥ 0", m.L1)
	}
	if m.Seed, err = strconv.ParseUint(meta.Seed, 10, 64); err != nil {
		return nil, bad("metadata seed = %q is not an unsigned integer", meta.Seed)
	}
	if t.DType != "F32" || len(t.Shape) != 2 || t.Shape[0] != int64(m.K) || t.Shape[1] != int64(m.Terms) || m.K < 1 || m.Terms < 1 {
		return nil, bad("tensor H is %s %v, want F32 [k terms] = [%d %d] with both ≥ 1", t.DType, t.Shape, m.K, m.Terms)
	}
	size := 4 * int64(m.K) * int64(m.Terms)
	if int64(m.K) > nmfMaxTensorSize/4/int64(m.Terms) || t.DataOffsets != [2]int64{0, size} {
		return nil, bad("tensor H data offsets %v, want [0 %d] within %d bytes", t.DataOffsets, size, int64(nmfMaxTensorSize))
	}
	data, err := io.ReadAll(io.LimitReader(r, size))
	if err != nil {
		return nil, readErr(err, "topics", bad)
	}
	if int64(len(data)) != size {
		return nil, bad("truncated: %d of %d bytes of topics", len(data), size)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != meta.SHA256 {
		return nil, bad("topics do not match the header's sha256 (corrupted file)")
	}
	m.H = make([]float32, m.K*m.Terms)
	for i := range m.H {
		v := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		if !(v >= 0) || math.IsInf(float64(v), 1) {
			return nil, bad("topic %d term %d holds %v; topics are finite and ≥ 0", i/m.Terms, i%m.Terms, v)
		}
		m.H[i] = v
	}
	return m, nil
}

// readErr names what a failed read was reading; a short read means a
// truncated file.
func readErr(err error, what string, bad func(string, ...any) error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return bad("truncated in the %s", what)
	}
	return fmt.Errorf("reading NMF model %s: %w", what, err)
}
