package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/parastream/parastream/featurize/lexicon"
	"github.com/parastream/parastream/shards"
)

// ErrNotFeaturized reports a published dataset without the featurize
// model's files (vocabulary, featurize record, topic model) that a
// trainer needs: the shards were published before featurize ran.
var ErrNotFeaturized = errors.New("dataset not featurized")

// DatasetVocab is what a new run takes from the dataset's featurize
// model: the words of the ids (id = index) and the out-of-vocabulary
// buckets after them.
type DatasetVocab struct {
	Words []string
	// Counts are the words' occurrences in the featurized texts (the
	// vocabulary file's counts; 0 for a special token the texts do not
	// hold, such as <s> when they have no start tags).
	Counts     []int64
	OOVBuckets int
	OOVHash    string
	// Topics is the size of the topic vectors (featurize.json's topics; 0
	// when it is not published).
	Topics int
	// Files are the featurize model's files by name (vocab.tsv,
	// featurize.json, topics.safetensors), when asked for.
	Files map[string][]byte
}

// FetchVocabulary reads the dataset's vocabulary and the buckets of its
// featurize.json from the artifacts topic: a trainer needs only the
// brokers. A manifest that lists no featurize.json (shards featurized
// before it was published) means no buckets. withFiles also reads the
// topic model and keeps the three files (a model with the topic context
// keeps them in its checkpoints).
func FetchVocabulary(ctx context.Context, cc ClientConfig, prefix, dataset string, withFiles bool) (DatasetVocab, error) {
	m, err := ReadManifest(ctx, cc, prefix, dataset)
	if err != nil {
		return DatasetVocab{}, err
	}
	return ManifestVocabulary(ctx, cc, prefix, dataset, m, withFiles)
}

// ManifestVocabulary is FetchVocabulary with the dataset's manifest m as
// the caller read it (ReadManifest).
func ManifestVocabulary(ctx context.Context, cc ClientConfig, prefix, dataset string, m *shards.Manifest, withFiles bool) (DatasetVocab, error) {
	if m.Vocabulary == nil {
		return DatasetVocab{}, fmt.Errorf("%w: the manifest of %s names no vocabulary: run `parastream featurize --in SHARDS --out FEATURIZED`, then publish FEATURIZED",
			ErrNotFeaturized, dataset)
	}
	data, err := ManifestArtifact(ctx, cc, prefix, dataset, m, m.Vocabulary.Path)
	if err != nil {
		return DatasetVocab{}, err
	}
	var out DatasetVocab
	if _, err := lexicon.ReadVocabFile(bytes.NewReader(data), func(_ int, tok string, count, _ int64) error {
		out.Words = append(out.Words, tok)
		out.Counts = append(out.Counts, count)
		return nil
	}); err != nil {
		return DatasetVocab{}, fmt.Errorf("reading the vocabulary of %s: %w", dataset, err)
	}
	if withFiles {
		if m.Featurize == nil || m.Topics == nil {
			return DatasetVocab{}, fmt.Errorf("%w: the manifest of %s lists no topic model (featurize.json and topics.safetensors): featurize it with this version and publish it again", ErrNotFeaturized, dataset)
		}
		out.Files = map[string][]byte{filepath.Base(m.Vocabulary.Path): data}
		topics, err := ManifestArtifact(ctx, cc, prefix, dataset, m, m.Topics.Path)
		if err != nil {
			return DatasetVocab{}, err
		}
		out.Files[filepath.Base(m.Topics.Path)] = topics
	}
	if m.Featurize == nil {
		return out, nil
	}
	if data, err = ManifestArtifact(ctx, cc, prefix, dataset, m, m.Featurize.Path); err != nil {
		return DatasetVocab{}, err
	}
	// The fields of featurize.json (featurize.Info) a trainer needs.
	var info struct {
		Buckets int    `json:"oov_buckets"`
		Hash    string `json:"oov_hash"`
		Topics  int    `json:"topics"`
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return DatasetVocab{}, fmt.Errorf("reading %s of %s: %w", m.Featurize.Path, dataset, err)
	}
	if err := lexicon.CheckHash(info.Hash, info.Buckets); err != nil {
		return DatasetVocab{}, fmt.Errorf("reading %s of %s: %w", m.Featurize.Path, dataset, err)
	}
	out.OOVBuckets, out.OOVHash, out.Topics = info.Buckets, info.Hash, info.Topics
	if withFiles {
		out.Files[filepath.Base(m.Featurize.Path)] = data
	}
	return out, nil
}
