package evalsink

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/parastream/parastream/internal/atomicfile"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// An STS adaptation (trained by package evalsink/adapt) is a linear map W
// of a checkpoint's frozen sentence embeddings, stored beside its model:
// an Evaluator with Config.Adapt and an Embedder with SetAdaptation apply
// it to every embedding.

// AdaptationLinear names the STS linear adaptation in Result.Adaptation.
const AdaptationLinear = "sts-linear"

// Files of the adaptation, beside the checkpoint's model.
const (
	// AdaptFile holds W (tensor "w", shape [D, D], F32) and, in its
	// metadata, the adaptation's name and the model hash it was trained
	// for.
	AdaptFile = "adapt-sts.safetensors"
	// AdaptInfoFile is what it was trained on and how (AdaptInfo).
	AdaptInfoFile = "adapt-sts.json"
)

// ErrNoAdaptation is returned for a checkpoint without an adaptation.
var ErrNoAdaptation = errors.New("evalsink: no STS adaptation")

// AdaptHyper is one setting of the search.
type AdaptHyper struct {
	LearningRate float64 `json:"learning_rate"`
	Lambda       float64 `json:"lambda"`
	// Epochs is the epoch whose W is kept (0: the identity).
	Epochs int `json:"epochs"`
	Batch  int `json:"batch"`
}

// AdaptTrial is one setting's best dev Pearson (angular, ×100) and the
// epoch it was reached at.
type AdaptTrial struct {
	AdaptHyper
	DevPearson float64 `json:"dev_pearson"`
}

// AdaptFigures are the STS Benchmark dev Pearson ×100 on the angular scale
// (Yang et al.'s, the one the search maximises) and on the cosine.
type AdaptFigures struct {
	Angular float64 `json:"pearson_angular"`
	Cosine  float64 `json:"pearson_cosine"`
}

// AdaptInfo is adapt-sts.json: what the adaptation was trained on and how.
type AdaptInfo struct {
	Adaptation string `json:"adaptation"`
	Objective  string `json:"objective"`
	Checkpoint string `json:"checkpoint"`
	ModelHash  string `json:"model_hash"`
	// DataHash is the evaluation shards' (Sets.DataHash).
	DataHash   string `json:"data_hash"`
	Train      string `json:"train"`
	Dev        string `json:"dev"`
	TrainPairs int    `json:"train_pairs"`
	DevPairs   int    `json:"dev_pairs"`
	Dim        int    `json:"dim"`
	Seed       uint64 `json:"seed"`
	// DevBefore is the dev figure out of the box, DevAfter adapted (W as
	// stored, in float32).
	DevBefore AdaptFigures `json:"dev_before"`
	DevAfter  AdaptFigures `json:"dev_after"`
	Chosen    AdaptHyper   `json:"chosen"`
	Trials    []AdaptTrial `json:"trials"`
	TrainedAt time.Time    `json:"trained_at"`
}

// Adaptation is a linear map of sentence embeddings: u* = W u.
type Adaptation struct {
	// Name is AdaptationLinear.
	Name string
	Dim  int
	// W is D×D, row-major.
	W []float32
	// ModelHash is the sha256 of the model.safetensors it was trained on;
	// Hash the sha256 of its AdaptFile (what an evaluation's EvalID
	// covers).
	ModelHash, Hash string
	// Info is adapt-sts.json where it was read.
	Info AdaptInfo
}

// Apply returns W v (a new slice).
func (a *Adaptation) Apply(v []float32) []float32 {
	d := a.Dim
	out := make([]float32, d)
	for k := range d {
		row := a.W[k*d : (k+1)*d]
		var s float64
		for j, x := range v {
			s += float64(row[j]) * float64(x)
		}
		out[k] = float32(s)
	}
	return out
}

// name is the Result.Adaptation of evaluations with a (nil: none).
func (a *Adaptation) name() string {
	if a == nil {
		return ""
	}
	return a.Name
}

// displayRun is the name of a row's run in the report's columns and the
// learning curves: an adapted evaluation is shown apart from, and beside,
// the run's out-of-the-box one, as "<run> adapted (<adaptation>)".
func displayRun(r Result) string {
	run := r.Run
	if i := strings.LastIndexByte(r.Model, '@'); i >= 0 {
		if _, err := strconv.Atoi(r.Model[i+1:]); err == nil {
			run += " " + r.Model[i:] // a Matryoshka prefix (Target.TruncateDim): a column of its own
		}
	}
	if r.Adaptation == "" {
		return run
	}
	return run + " adapted (" + r.Adaptation + ")"
}

// SetAdaptation makes the embedder return W u for every embedding u
// (nil: the model's own). It empties the embedder's cache.
func (e *Embedder) SetAdaptation(a *Adaptation) error {
	if a != nil && a.Dim != e.dim {
		return fmt.Errorf("evalsink: the adaptation maps %d components, the model gives %d", a.Dim, e.dim)
	}
	e.adapt = a
	clear(e.cache)
	return nil
}

// UseAdaptation loads the adaptation stored in the checkpoint directory
// dir (LoadAdaptation) and sets it (SetAdaptation).
func (e *Embedder) UseAdaptation(dir string) error {
	a, err := LoadAdaptation(dir)
	if err != nil {
		return err
	}
	return e.SetAdaptation(a)
}

// LoadAdaptation reads the adaptation stored in the checkpoint directory
// dir, refusing one trained for another model than the checkpoint's.
func LoadAdaptation(dir string) (*Adaptation, error) {
	h, err := hashFiles(filepath.Join(dir, trainstep.FileModel))
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint %s: %w", dir, err)
	}
	return loadAdaptation(dir, h)
}

func loadAdaptation(dir, modelHash string) (*Adaptation, error) {
	path := filepath.Join(dir, AdaptFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: checkpoint %s has no %s: train one with `parastream adapt --checkpoint %s --eval SHARDS` (SHARDS: evaluation shards with stsb/train and stsb/dev)", ErrNoAdaptation, dir, AdaptFile, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the STS adaptation: %w", err)
	}
	ts, meta, err := trainstep.ReadSafetensors(data)
	if err != nil {
		return nil, fmt.Errorf("reading the STS adaptation %s: %w", path, err)
	}
	if len(ts) != 1 || ts[0].Name != "w" || len(ts[0].Shape) != 2 || ts[0].Shape[0] != ts[0].Shape[1] {
		return nil, fmt.Errorf("reading the STS adaptation %s: want one square tensor \"w\"", path)
	}
	if meta["adaptation"] != AdaptationLinear {
		return nil, fmt.Errorf("reading the STS adaptation %s: adaptation %q, want %q", path, meta["adaptation"], AdaptationLinear)
	}
	if meta["model_hash"] != modelHash {
		return nil, fmt.Errorf("the STS adaptation %s was trained for another model (model hash %.12s; the checkpoint's is %.12s): the checkpoint was rewritten since; run `parastream adapt --checkpoint %s --eval SHARDS` again", path, meta["model_hash"], modelHash, dir)
	}
	sum := sha256.Sum256(data)
	a := &Adaptation{Name: AdaptationLinear, Dim: ts[0].Shape[0], W: ts[0].Data, ModelHash: modelHash, Hash: hex.EncodeToString(sum[:])}
	if info, err := os.ReadFile(filepath.Join(dir, AdaptInfoFile)); err == nil {
		if err := json.Unmarshal(info, &a.Info); err != nil {
			return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, AdaptInfoFile), err)
		}
	}
	return a, nil
}

// SaveAdaptation writes a's AdaptFile and AdaptInfoFile into dir,
// atomically each, and sets a.Hash.
func SaveAdaptation(dir string, a *Adaptation) error {
	var buf bytes.Buffer
	t := compute.Tensor{Name: "w", Shape: []int{a.Dim, a.Dim}, Data: a.W}
	if err := trainstep.WriteSafetensors(&buf, []compute.Tensor{t}, map[string]string{
		"adaptation": a.Name, "model_hash": a.ModelHash, "map": "u* = W u"}); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, AdaptFile), buf.Bytes()); err != nil {
		return fmt.Errorf("writing the STS adaptation: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	a.Hash = hex.EncodeToString(sum[:])
	info, err := json.MarshalIndent(a.Info, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, AdaptInfoFile), append(info, '\n')); err != nil {
		return fmt.Errorf("writing the STS adaptation: %w", err)
	}
	return nil
}

// IdentityAdaptation is the adaptation that changes nothing.
func IdentityAdaptation(dim int) *Adaptation {
	w := make([]float32, dim*dim)
	for k := range dim {
		w[k*dim+k] = 1
	}
	return &Adaptation{Name: AdaptationLinear, Dim: dim, W: w}
}
