package trainstep_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

func sameTensors(t *testing.T, what string, a, b []compute.Tensor) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d tensors vs %d", what, len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || !slices.Equal(a[i].Shape, b[i].Shape) {
			t.Fatalf("%s: %s%v vs %s%v", what, a[i].Name, a[i].Shape, b[i].Name, b[i].Shape)
		}
		for j := range a[i].Data {
			if math.Float32bits(a[i].Data[j]) != math.Float32bits(b[i].Data[j]) {
				t.Fatalf("%s: %s[%d] %v vs %v", what, a[i].Name, j, a[i].Data[j], b[i].Data[j])
			}
		}
	}
}

// TestResumeBitIdentical trains 2N steps straight, and N steps, a save, a
// resume and N more: the parameters and optimiser state must be equal bit
// for bit. The configurations draw every kind of noise.
func TestResumeBitIdentical(t *testing.T) {
	vocab := make([]string, 60)
	for i := range vocab {
		vocab[i] = "w" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	for _, cfg := range []trainstep.Config{
		{Encoder: compute.EncAvg, Dim: 8, BatchSize: 8, Negatives: compute.NegMix, Dropout: 0.2, WordDropout: 0.1, Scramble: 0.5, LambdaW: 1e-3, LambdaC: 1e-4, Decay: 0.5},
		{Encoder: compute.EncLSTMAvg, Dim: 6, Hidden: 5, BatchSize: 8, Loss: compute.LossHinge, HingeK: 2, Optimizer: compute.OptRMSProp, Scramble: 0.5},
		{Encoder: compute.EncDAN, Dim: 6, DANLayers: []int{7, 5}, BigramBuckets: 11, BatchSize: 8, Loss: compute.LossSoftmax, Optimizer: compute.OptSGD},
		{Encoder: compute.EncTransformer, Dim: 8, TFLayers: 2, TFHeads: 2, TFFilter: 12, BatchSize: 8, Loss: compute.LossSoftmax, Dropout: 0.1, WordDropout: 0.1},
		{Encoder: compute.EncCSAE, Dim: 6, CSAELayers: []int{5}, CSAETopK: 40, BatchSize: 8, Loss: compute.LossRecon, WordDropout: 0.2, Decay: 0.5},
	} {
		t.Run(cfg.Encoder, func(t *testing.T) {
			data := paraphrases(rand.New(rand.NewPCG(5, 6)), 48)
			batches, _ := trainstep.Batches(data, 8, 64)
			const n = 3
			straight := newTrainerVocab(t, cfg, vocab)
			for i, b := range batches[:2*n] {
				if _, err := straight.Step(b); err != nil {
					t.Fatal(err)
				}
				if i == n-1 {
					straight.EndEpoch()
					// The straight run writes the checkpoint too: a
					// checkpoint catches up the sparse update's rows
					// (compute.Flusher), part of the run's arithmetic.
					if err := straight.Save(filepath.Join(t.TempDir(), "straight-3"), nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			first := newTrainerVocab(t, cfg, vocab)
			for _, b := range batches[:n] {
				if _, err := first.Step(b); err != nil {
					t.Fatal(err)
				}
			}
			first.EndEpoch()
			dir := filepath.Join(t.TempDir(), "ckpt-3")
			pos := json.RawMessage(`{"topic":"p.ppdb.train","partition":0,"offset":42}`)
			if err := first.Save(dir, pos); err != nil {
				t.Fatal(err)
			}
			resumed, gotPos, err := trainstep.Resume(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resumed.Close()
			if string(gotPos) != string(pos) {
				t.Errorf("position %s, want %s", gotPos, pos)
			}
			if resumed.Steps() != n || resumed.Epoch() != 1 {
				t.Errorf("resumed at step %d epoch %d, want %d and 1", resumed.Steps(), resumed.Epoch(), n)
			}
			for _, b := range batches[n : 2*n] {
				if _, err := resumed.Step(b); err != nil {
					t.Fatal(err)
				}
			}
			sameTensors(t, "params", straight.Model().Params(), resumed.Model().Params())
			sameTensors(t, "state", straight.Model().State(), resumed.Model().State())
		})
	}
}

func newTrainerVocab(t *testing.T, cfg trainstep.Config, vocab []string) *trainstep.Trainer {
	t.Helper()
	tr, err := trainstep.New(cfg, trainstep.Options{Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func TestCheckpointRoundTrip(t *testing.T) {
	vocab := []string{"<unk>", "the", "cat", "sat", "on", "mat"}
	tr := newTrainerVocab(t, trainstep.Config{Encoder: compute.EncGRAN, Dim: 4, Hidden: 3, BatchSize: 2, LambdaW: 1e-2}, vocab)
	pairs := []trainstep.Pair{{A: []int32{1, 2, 3}, B: []int32{2, 3}}, {A: []int32{4, 5}, B: []int32{1, 5}}}
	if _, err := tr.Step(pairs); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ck")
	if err := tr.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	// Saving again over the directory replaces it whole.
	if err := tr.Save(dir, json.RawMessage(`{"offset":7}`)); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("%d entries beside the checkpoint, want only it (no temporary left)", len(entries))
	}
	ck, err := trainstep.ReadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ck.Vocab, vocab) || ck.State.Step != 1 || string(ck.State.Position) != `{"offset":7}` {
		t.Errorf("vocab %v step %d position %s", ck.Vocab, ck.State.Step, ck.State.Position)
	}
	if ck.Config.Encoder != "gran" || ck.Config.Hidden != 3 || ck.Config.Vocab != 6 || ck.Metadata["encoder"] != "gran" {
		t.Errorf("config %+v metadata %v", ck.Config, ck.Metadata)
	}
	want := tr.Model().Params()
	slices.SortFunc(want, func(a, b compute.Tensor) int { return compareNames(a.Name, b.Name) })
	sameTensors(t, "params", want, ck.Params)
	var names []string
	for _, s := range ck.Optimizer {
		names = append(names, s.Name)
	}
	if !slices.Contains(names, "adam.m/gran.wx") || !slices.Contains(names, "init/embeddings") {
		t.Errorf("optimizer state names %v", names)
	}
	m, ck2, err := trainstep.LoadModel(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	got, err := trainstep.Embed(m, []int32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	exp, _ := tr.Embed([][]int32{{1, 2, 3}})
	if len(got) != ck2.Config.EmbedDim() || !slices.Equal(got, exp[0]) {
		t.Errorf("embedding from the checkpoint %v, trainer %v", got, exp[0])
	}
}

func compareNames(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestReadsReferenceCheckpoint reads a checkpoint laid out as the parity
// harness's PyTorch reference writes it (scripts/parity.py: a compact JSON
// header with __metadata__ first, an optimizer file without tensors, a
// trainer.json with no noise generator state), so that `parastream eval`
// scores it; no Python is needed here.
func TestReadsReferenceCheckpoint(t *testing.T) {
	dir := t.TempDir()
	cfg := trainstep.Config{Encoder: compute.EncAvg, Dim: 2, Vocab: 3}.Defaults()
	// As parity.py's write_safetensors: json.dumps(separators=(",", ":")),
	// spaces to a multiple of 8, F32 little-endian data in name order.
	st := func(header string, values ...float32) []byte {
		for len(header)%8 != 0 {
			header += " "
		}
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
		b = append(b, header...)
		for _, v := range values {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
		return b
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		trainstep.FileModel: st(`{"__metadata__":{"format":"pt","producer":"parastream scripts/parity.py (pytorch-reference, mode a)","encoder":"avg","loss":"margin","step":"7"},`+
			`"embeddings":{"dtype":"F32","shape":[3,2],"data_offsets":[0,24]}}`, 0, 0, 1, 0, 0.6, 0.8),
		trainstep.FileOptimizer: st(`{"__metadata__":{"optimizer":"adam"}}`),
		trainstep.FileConfig:    cfgJSON,
		trainstep.FileVocab:     []byte("<unk>\nyes\nno\n"),
		trainstep.FileTrainer:   []byte(`{"version":1,"step":7,"epoch":1,"backend":"pytorch-reference"}` + "\n"),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, ck, err := trainstep.LoadModel(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if ck.State.Step != 7 || ck.State.Epoch != 1 || ck.State.Backend != "pytorch-reference" || len(ck.Optimizer) != 0 ||
		!slices.Equal(ck.Vocab, []string{"<unk>", "yes", "no"}) || ck.Metadata["step"] != "7" {
		t.Errorf("state %+v, %d optimizer tensors, vocab %v, metadata %v", ck.State, len(ck.Optimizer), ck.Vocab, ck.Metadata)
	}
	got, err := trainstep.Embed(m, []int32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{0.8, 0.4}; math.Abs(float64(got[0]-want[0])) > 1e-6 || math.Abs(float64(got[1]-want[1])) > 1e-6 {
		t.Errorf("avg of rows 1 and 2: %v, want %v", got, want)
	}
}

// TestCheckpointLinksUnchanged: the files that never change during a run
// (the vocabulary, the initial embeddings of λw) are hard-linked from the
// checkpoint the trainer wrote last, not written again; the parameters and
// moments are written. A layout 1 checkpoint (the initial embeddings inside
// optimizer.safetensors) still resumes to the same trainer, and a newer
// layout is refused with its version named.
func TestCheckpointLinksUnchanged(t *testing.T) {
	vocab := []string{"<unk>", "the", "cat", "sat", "on", "mat"}
	tr := newTrainerVocab(t, trainstep.Config{Encoder: compute.EncAvg, Dim: 4, BatchSize: 2, LambdaW: 1e-2}, vocab)
	pairs := []trainstep.Pair{{A: []int32{1, 2, 3}, B: []int32{2, 3}}, {A: []int32{4, 5}, B: []int32{1, 5}}}
	root := t.TempDir()
	var dirs []string
	for i := range 2 {
		if _, err := tr.Step(pairs); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, filepath.Join(root, fmt.Sprintf("step-%d", i+1)))
		if err := tr.Save(dirs[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	same := func(name string) bool {
		a, err1 := os.Stat(filepath.Join(dirs[0], name))
		b, err2 := os.Stat(filepath.Join(dirs[1], name))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", name, err1, err2)
		}
		return os.SameFile(a, b)
	}
	for _, name := range []string{trainstep.FileVocab, trainstep.FileInitial} {
		if !same(name) {
			t.Errorf("%s written again, want it linked from the previous checkpoint", name)
		}
	}
	for _, name := range []string{trainstep.FileModel, trainstep.FileOptimizer, trainstep.FileTrainer} {
		if same(name) {
			t.Errorf("%s linked, want it written", name)
		}
	}
	// Removing the older checkpoint leaves the newer one whole.
	if err := os.RemoveAll(dirs[0]); err != nil {
		t.Fatal(err)
	}
	resumed, _, err := trainstep.Resume(dirs[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	sameTensors(t, "state", tr.Model().State(), resumed.Model().State())

	// Layout 1: the initial embeddings inside optimizer.safetensors.
	old := filepath.Join(root, "layout1")
	if err := os.CopyFS(old, os.DirFS(dirs[1])); err != nil {
		t.Fatal(err)
	}
	all := tr.Model().State()
	var buf bytes.Buffer
	if err := trainstep.WriteSafetensors(&buf, all, map[string]string{"optimizer": "adam"}); err != nil {
		t.Fatal(err)
	}
	rewrite := func(name string, data []byte) {
		t.Helper()
		os.Remove(filepath.Join(old, name))
		if data != nil {
			if err := os.WriteFile(filepath.Join(old, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	rewrite(trainstep.FileOptimizer, buf.Bytes())
	rewrite(trainstep.FileInitial, nil)
	rewrite(trainstep.FileSums, nil) // layout 1 came before them
	trainer, err := os.ReadFile(filepath.Join(old, trainstep.FileTrainer))
	if err != nil {
		t.Fatal(err)
	}
	rewrite(trainstep.FileTrainer, bytes.Replace(trainer, []byte(`"version":2`), []byte(`"version":1`), 1))
	v1, _, err := trainstep.Resume(old, nil)
	if err != nil {
		t.Fatalf("a layout 1 checkpoint: %v", err)
	}
	defer v1.Close()
	sameTensors(t, "layout 1 state", all, v1.Model().State())

	// Layout 2 with λw needs its initial embeddings.
	if err := os.Remove(filepath.Join(dirs[1], trainstep.FileInitial)); err != nil {
		t.Fatal(err)
	}
	if _, err := trainstep.ReadCheckpoint(dirs[1]); err == nil || !strings.Contains(err.Error(), trainstep.FileInitial) {
		t.Errorf("without %s: %v, want an error naming it", trainstep.FileInitial, err)
	}
	rewrite(trainstep.FileTrainer, bytes.Replace(trainer, []byte(`"version":2`), []byte(`"version":9`), 1))
	if _, err := trainstep.ReadCheckpoint(old); err == nil || !strings.Contains(err.Error(), "layout version 9") {
		t.Errorf("layout 9: %v, want it refused by its version", err)
	}
}
