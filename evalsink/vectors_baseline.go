package evalsink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// VectorsModel is the model name of an evaluation of external word
// vectors (VectorsCheckpoint).
const VectorsModel = "avg-vectors"

// VectorsCheckpoint makes external word vectors (GloVe or word2vec text,
// .gz read) a checkpoint of the avg encoder under dir, so that eval
// scores the plain average of their vectors as it scores a trained
// model: the vocabulary is the vectors' words with no <unk> and no
// buckets, so a word without a vector is left out of the average (as the
// research's GloVe baselines do), and a text with none embeds as zeros.
// A checkpoint already there (made from the same file) is reused. It
// returns the checkpoint's directory.
func VectorsCheckpoint(path, dir string) (string, error) {
	ck := filepath.Join(dir, "step-00000000")
	if _, err := os.Stat(filepath.Join(ck, trainstep.FileTrainer)); err == nil {
		return ck, nil
	}
	vecs, err := trainstep.LoadVectors(path)
	if err != nil {
		return "", fmt.Errorf("reading vectors %s: %w", path, err)
	}
	vocab := []string{"<pad>"}
	for _, w := range vecs.Words {
		if w != "<pad>" && w != "<unk>" {
			vocab = append(vocab, w)
		}
	}
	if len(vocab) < 2 {
		return "", errors.New("reading vectors " + path + ": no word vectors in it")
	}
	tr, err := trainstep.New(trainstep.Config{Encoder: compute.EncAvg, Dim: vecs.Dim, BatchSize: 2}, trainstep.Options{Vocab: vocab, Vectors: vecs})
	if err != nil {
		return "", err
	}
	defer tr.Close()
	if err := tr.Save(ck, nil); err != nil {
		return "", err
	}
	return ck, nil
}
