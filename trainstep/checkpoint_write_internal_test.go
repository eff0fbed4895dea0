package trainstep

import (
	"bufio"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// BenchmarkCheckpointWrite writes the large files of a checkpoint of the
// avg model at the GPU end-to-end run's size (57,860 embedding rows of
// 300: the parameters, 69 MB, and the optimiser's two moments, 139 MB)
// into a checkpoint directory as a training run does (writeDirAtomic:
// synced, hashed, renamed), alternating between two directories. MB/s is
// of the tensors' bytes.
func BenchmarkCheckpointWrite(b *testing.B) {
	const rows, dim = 57860, 300
	tensor := func(name string) compute.Tensor {
		t := compute.NewTensor(name, rows, dim)
		for i := range t.Data {
			t.Data[i] = float32(i%977) * 0.001
		}
		return t
	}
	params := []compute.Tensor{tensor("emb")}
	state := []compute.Tensor{tensor("m/emb"), tensor("v/emb")}
	root := b.TempDir()
	b.SetBytes(int64(3 * rows * dim * 4))
	i := 0
	for b.Loop() {
		files := map[string]func(*bufio.Writer) error{
			FileModel:     func(w *bufio.Writer) error { return WriteSafetensors(w, params, nil) },
			FileOptimizer: func(w *bufio.Writer) error { return WriteSafetensors(w, state, nil) },
		}
		if _, _, err := writeDirAtomic(filepath.Join(root, fmt.Sprint("ck-", i%2)), files, nil, nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
