package trainstep_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// handBuilt is a safetensors file assembled by hand from the spec: header
// length, JSON header, little-endian data.
func handBuilt(header string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

func f32s(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func TestSafetensorsHandBuilt(t *testing.T) {
	file := handBuilt(`{"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[],"data_offsets":[24,28]},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}`,
		f32s(1, 2, 3, 4, 5, 6, -0.5))
	ts, meta, err := trainstep.ReadSafetensors(file)
	if err != nil {
		t.Fatal(err)
	}
	if meta["format"] != "pt" || len(ts) != 2 || ts[0].Name != "a" || !slices.Equal(ts[0].Shape, []int{2, 3}) ||
		!slices.Equal(ts[0].Data, []float32{1, 2, 3, 4, 5, 6}) || len(ts[1].Shape) != 0 || ts[1].Data[0] != -0.5 {
		t.Fatalf("read %+v %v", ts, meta)
	}
	// Our writer's bytes, decoded by hand.
	var buf bytes.Buffer
	if err := trainstep.WriteSafetensors(&buf, ts, meta); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	n := binary.LittleEndian.Uint64(out)
	if n%8 != 0 {
		t.Errorf("header length %d not a multiple of 8", n)
	}
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(out[8:8+n], &hdr); err != nil {
		t.Fatal(err)
	}
	var a struct {
		Dtype   string
		Shape   []int
		Offsets []int `json:"data_offsets"`
	}
	json.Unmarshal(hdr["a"], &a)
	if a.Dtype != "F32" || !slices.Equal(a.Shape, []int{2, 3}) || !slices.Equal(a.Offsets, []int{0, 24}) {
		t.Errorf("header of a: %s", hdr["a"])
	}
	if !bytes.Equal(out[8+n:], f32s(1, 2, 3, 4, 5, 6, -0.5)) {
		t.Errorf("data bytes %x", out[8+n:])
	}
}

func TestSafetensorsOtherDtypes(t *testing.T) {
	var data []byte
	data = binary.LittleEndian.AppendUint64(data, math.Float64bits(2.5))
	data = binary.LittleEndian.AppendUint16(data, 0x3c00) // F16 1.0
	data = binary.LittleEndian.AppendUint16(data, 0xc000) // F16 -2.0
	data = binary.LittleEndian.AppendUint16(data, 0x3f80) // BF16 1.0
	file := handBuilt(`{"d":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"h":{"dtype":"F16","shape":[2],"data_offsets":[8,12]},"z":{"dtype":"BF16","shape":[1],"data_offsets":[12,14]}}`, data)
	ts, _, err := trainstep.ReadSafetensors(file)
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].Data[0] != 2.5 || !slices.Equal(ts[1].Data, []float32{1, -2}) || ts[2].Data[0] != 1 {
		t.Errorf("%+v", ts)
	}
}

func TestSafetensorsMalformed(t *testing.T) {
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"short", []byte{1, 2}},
		{"header past end", handBuilt(`{}`, nil)[:9]},
		{"not json", handBuilt(`{x`, nil)},
		{"dtype", handBuilt(`{"a":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}}`, []byte{1})},
		{"size", handBuilt(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, f32s(1))},
		{"past end", handBuilt(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, f32s(1))},
		{"hole", handBuilt(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, f32s(1, 2))},
		{"trailing", handBuilt(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, f32s(1, 2))},
		{"negative shape", handBuilt(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, f32s(1))},
	} {
		if _, _, err := trainstep.ReadSafetensors(tc.file); !errors.Is(err, trainstep.ErrSafetensors) {
			t.Errorf("%s: err %v, want ErrSafetensors", tc.name, err)
		}
	}
}

// TestSafetensorsPython reads our file with numpy (and the safetensors
// package when installed), when python3 has numpy.
func TestSafetensorsPython(t *testing.T) {
	python := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import numpy").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Skip("no python3 with numpy (Debian: apt-get install python3-numpy)")
	}
	ts := []compute.Tensor{
		{Name: "embeddings", Shape: []int{3, 2}, Data: []float32{1, 2, 3, 4, 5, 6.5}},
		{Name: "lstm.b", Shape: []int{4}, Data: []float32{-1, 0, 0.25, 1e-8}},
	}
	var buf bytes.Buffer
	if err := trainstep.WriteSafetensors(&buf, ts, map[string]string{"encoder": "avg"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
import json, struct, sys
import numpy as np
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
hdr = json.loads(raw[8:8+n])
body = raw[8+n:]
for name in sorted(k for k in hdr if k != "__metadata__"):
    e = hdr[name]
    b, end = e["data_offsets"]
    a = np.frombuffer(body[b:end], dtype="<f4").reshape(e["shape"])
    print(name, e["dtype"], list(a.shape), repr(float(a.sum())))
print("meta", hdr["__metadata__"]["encoder"])
try:
    from safetensors.numpy import load_file
except ImportError:
    print("safetensors-package absent")
else:
    d = load_file(sys.argv[1])
    print("safetensors-package", sorted(d), float(d["embeddings"].sum()))
`
	out, err := exec.Command(python, "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	got := string(out)
	t.Log(got)
	for _, want := range []string{"embeddings F32 [3, 2] 21.5", "lstm.b F32 [4] -0.75", "meta avg"} {
		if !strings.Contains(got, want) {
			t.Errorf("python output lacks %q", want)
		}
	}
	if strings.Contains(got, "safetensors-package [") && !strings.Contains(got, "'lstm.b'] 21.5") {
		t.Errorf("safetensors package read it differently")
	}
}
