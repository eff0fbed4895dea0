package trainstep_test

import (
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// withTopics gives every side of pairs a topic vector of k values that
// depends on its words (so that paraphrases share topics), one in five
// missing (a text with no known word: zeros).
func withTopics(pairs []trainstep.Pair, k int) []trainstep.Pair {
	topics := func(ids []int32, i int) []float32 {
		if i%5 == 4 {
			return nil
		}
		v := make([]float32, k)
		for _, id := range ids {
			v[int(id/3)%k] += 0.25
		}
		return v
	}
	for i := range pairs {
		pairs[i].CtxA, pairs[i].CtxB = topics(pairs[i].A, i), topics(pairs[i].B, i+1)
	}
	return pairs
}

// TestCSAEContextResumeAndEmbed trains the csae with its topic context
// (recon loss, and margin with the reconstruction added, each also with
// the context zeroed) through the trainer: N steps, a save, a resume and N
// more must equal 2N straight steps bit for bit, and the model loaded from
// the checkpoint must embed as the trainer's does.
func TestCSAEContextResumeAndEmbed(t *testing.T) {
	vocab := make([]string, 60)
	for i := range vocab {
		vocab[i] = "w" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	base := trainstep.Config{Encoder: compute.EncCSAE, Dim: 6, CSAELayers: []int{5}, CSAETopK: 40, BatchSize: 8,
		Context: compute.ContextTopics, Topics: 4, WordDropout: 0.2}
	recon, margin := base, base
	recon.Loss = compute.LossRecon
	margin.Loss, margin.CSAEReconWeight = compute.LossMargin, 0.1
	zero := recon
	zero.CSAEZeroContext = true
	for name, cfg := range map[string]trainstep.Config{"recon": recon, "margin+recon": margin, "recon-zero-context": zero} {
		t.Run(name, func(t *testing.T) {
			data := withTopics(paraphrases(rand.New(rand.NewPCG(5, 6)), 48), 4)
			batches, _ := trainstep.Batches(data, 8, 64)
			const n = 3
			straight := newTrainerVocab(t, cfg, vocab)
			for i, b := range batches[:2*n] {
				if _, err := straight.Step(b); err != nil {
					t.Fatal(err)
				}
				if i == n-1 { // a checkpoint catches up the sparse rows: part of the arithmetic
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
			dir := filepath.Join(t.TempDir(), "ckpt-3")
			if err := first.Save(dir, json.RawMessage(`{}`)); err != nil {
				t.Fatal(err)
			}
			resumed, _, err := trainstep.Resume(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resumed.Close()
			for _, b := range batches[n : 2*n] {
				if _, err := resumed.Step(b); err != nil {
					t.Fatal(err)
				}
			}
			sameTensors(t, "params", straight.Model().Params(), resumed.Model().Params())
			sameTensors(t, "state", straight.Model().State(), resumed.Model().State())

			out := filepath.Join(t.TempDir(), "ckpt-6")
			if err := resumed.Save(out, json.RawMessage(`{}`)); err != nil {
				t.Fatal(err)
			}
			m, ck, err := trainstep.LoadModel(out, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if ck.Config.Encoder != compute.EncCSAE || ck.Config.CSAEZeroContext != cfg.CSAEZeroContext || ck.Config.CSAETopK != 40 {
				t.Fatalf("checkpoint config %+v lost the csae's settings", ck.Config)
			}
			var seqs [][]int32
			var ctxs [][]float32
			for _, p := range data[:10] {
				seqs, ctxs = append(seqs, p.A), append(ctxs, p.CtxA)
			}
			for i := range ctxs {
				if ctxs[i] == nil {
					ctxs[i] = make([]float32, 4)
				}
			}
			want, err := resumed.Model().(compute.ContextEmbedder).EmbedContext(seqs, ctxs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.(compute.ContextEmbedder).EmbedContext(seqs, ctxs)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if len(got[i]) != 5 {
					t.Fatalf("embedding of %d values, want h_n's 5", len(got[i]))
				}
				for u := range want[i] {
					if got[i][u] != want[i][u] {
						t.Fatalf("sentence %d unit %d: loaded model %v, trainer's %v", i, u, got[i][u], want[i][u])
					}
				}
			}
		})
	}
}
