package trainstep

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// TestPackState: a state tensor of mostly zero rows is written as its
// non-zero rows and their numbers, and read back whole; a dense one, a
// vector and an empty table are written as they are.
func TestPackState(t *testing.T) {
	sparse := compute.NewTensor("m/emb", 100, 3)
	copy(sparse.Data[7*3:], []float32{1, 0, -2})
	sparse.Data[99*3+2] = 5
	dense := compute.NewTensor("m/w", 2, 2)
	copy(dense.Data, []float32{1, 2, 3, 4})
	vec := compute.NewTensor("m/b", 4)
	zero := compute.NewTensor("v/emb", 10, 3)
	in := []compute.Tensor{sparse, dense, vec, zero}
	meta := map[string]string{"optimizer": "adam"}
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, packState(in, meta), meta); err != nil {
		t.Fatal(err)
	}
	if full := 4 * (300 + 4 + 4 + 30); buf.Len() >= full {
		t.Errorf("packed file of %d bytes, want under the %d of the tensors' data", buf.Len(), full)
	}
	ts, got, err := ReadSafetensors(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	out, err := unpackState(ts, got)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]compute.Tensor{}
	for _, t := range out {
		byName[t.Name] = t
	}
	for _, want := range in {
		if g := byName[want.Name]; !reflect.DeepEqual(g.Shape, want.Shape) || !reflect.DeepEqual(g.Data, want.Data) {
			t.Errorf("%s: read back %v %v, want %v %v", want.Name, g.Shape, g.Data, want.Shape, want.Data)
		}
	}
	if len(out) != len(in) {
		t.Errorf("%d tensors read back, want %d", len(out), len(in))
	}
}
