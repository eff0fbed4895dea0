package evalsink

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/parastream/parastream/trainstep"
)

// RunRequest is what `parastream eval run` evaluates: a checkpoint, or
// the plain average of external word vectors, at the whole of its
// embeddings and at Matryoshka prefixes, optionally writing MTEB's
// result files beside the results.
type RunRequest struct {
	// Checkpoint is a checkpoint directory, or a run's checkpoint
	// directory for its newest good checkpoint.
	Checkpoint string
	// Vectors, instead of Checkpoint, is a GloVe or word2vec text file
	// whose plain averages are scored (VectorsCheckpoint), named after
	// the file, model VectorsModel.
	Vectors string
	// TruncateDims are the prefixes evaluated, each an evaluation of its
	// own (Target.TruncateDim; 0 or the model's size: the whole). Nil:
	// the whole, and every prefix the model was trained with
	// (--matryoshka).
	TruncateDims []int
	// MTEB also writes each evaluation's STS scores in the layout of
	// MTEB's results repository under <Out>/mteb (WriteMTEB).
	MTEB bool
	// Version is parastream's, for MTEB's model_meta.json.
	Version string
}

// Validate says how to fix a request that cannot run.
func (r RunRequest) Validate() error {
	if (r.Checkpoint == "") == (r.Vectors == "") {
		return errors.New("give one of --checkpoint and --vectors")
	}
	for _, d := range r.TruncateDims {
		if d < 0 {
			return fmt.Errorf("--truncate-dim %d: give a positive size, or 0 for the whole", d)
		}
	}
	return nil
}

// RunResult is one evaluation of a Run: its summary, its MTEB scores,
// and the MTEB files written (RunRequest.MTEB).
type RunResult struct {
	Summary   *Summary
	MTEB      []MTEBScore
	MTEBFiles []string
}

// Run evaluates what req names, once a prefix, handing each evaluation
// to each as it ends.
func (ev *Evaluator) Run(ctx context.Context, req RunRequest, each func(RunResult) error) error {
	if err := req.Validate(); err != nil {
		return err
	}
	target := Target{Dir: req.Checkpoint}
	if req.Vectors != "" {
		h := sha256.Sum256([]byte(req.Vectors))
		dir, err := VectorsCheckpoint(req.Vectors, filepath.Join(ev.cfg.Out, "vectors", hex.EncodeToString(h[:6])))
		if err != nil {
			return err
		}
		target = Target{Dir: dir, Run: strings.TrimSuffix(filepath.Base(req.Vectors), ".gz"), Model: VectorsModel}
	}
	ckDir, err := trainstep.LatestCheckpoint(target.Dir)
	if err != nil {
		return err
	}
	// The configuration and the run's settings alone: Evaluate loads the
	// model, once a prefix.
	var model trainstep.Config
	if err := readJSON(filepath.Join(ckDir, trainstep.FileConfig), &model); err != nil {
		return fmt.Errorf("reading checkpoint %s: %w", ckDir, err)
	}
	run, err := trainstep.ReadRunConfig(ckDir)
	if err != nil {
		return err
	}
	dims := req.TruncateDims
	if dims == nil {
		dims = append([]int{0}, model.Matryoshka[min(1, len(model.Matryoshka)):]...)
	}
	for _, d := range dims {
		if d == model.EmbedDim() {
			d = 0
		}
		target.TruncateDim = d
		sum, err := ev.Evaluate(ctx, target)
		if err != nil {
			return err
		}
		res := RunResult{Summary: sum, MTEB: MTEBScores(sum.Rows)}
		if req.MTEB {
			name := cmp.Or(target.Model, ev.cfg.Model, model.Encoder)
			if d > 0 {
				name = fmt.Sprintf("%s@%d", name, d)
			}
			first := sum.Rows[0]
			meta := MTEBMeta{Name: "parastream/" + first.Run + "-" + name, Revision: first.CheckpointID[:min(16, len(first.CheckpointID))],
				EmbedDim: cmp.Or(d, model.EmbedDim()), Version: req.Version}
			if run != nil {
				meta.Datasets = run.Datasets
				if len(meta.Datasets) == 0 && run.Dataset != "" {
					meta.Datasets = []string{run.Dataset}
				}
			}
			if res.MTEBFiles, err = WriteMTEB(filepath.Join(ev.cfg.Out, "mteb"), res.MTEB, meta); err != nil {
				return err
			}
		}
		if err := each(res); err != nil {
			return err
		}
	}
	return nil
}
