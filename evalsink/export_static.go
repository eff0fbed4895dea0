package evalsink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parastream/parastream/internal/atomicfile"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/transforms/text"
)

// Static export formats (StaticConfig.Format).
const (
	// FormatSentenceTransformers is a SentenceTransformer directory of one
	// StaticEmbedding module: modules.json, config_sentence_transformers.json
	// and 0_StaticEmbedding/ with model.safetensors ("embedding.weight")
	// and tokenizer.json. SentenceTransformer(dir).encode averages the
	// embeddings of the tokenizer's ids, unknown words included as <unk>.
	FormatSentenceTransformers = "sentence-transformers"
	// FormatModel2Vec is a model2vec StaticModel directory: config.json,
	// model.safetensors ("embeddings") and tokenizer.json, with a
	// modules.json that sentence-transformers also loads.
	// StaticModel.from_pretrained(dir).encode averages the ids' embeddings
	// leaving <unk> out.
	FormatModel2Vec = "model2vec"
)

// StaticFormats lists the static export formats.
func StaticFormats() []string { return []string{FormatSentenceTransformers, FormatModel2Vec} }

// StaticConfig is what ExportStatic writes.
type StaticConfig struct {
	Format string // FormatSentenceTransformers or FormatModel2Vec
	// TruncateDim keeps the embeddings' first TruncateDim dimensions (a
	// Matryoshka prefix); 0: all of them.
	TruncateDim int
	// Version is parastream's version, recorded in the configuration.
	Version string
}

// ExportStatic writes checkpoint ck (of the avg encoder) as a static
// embedding model in cfg.Format under dir, which must not exist or be an
// empty directory: the vocabulary's words and their embeddings (the
// hashed out-of-vocabulary buckets have no place in a word-level
// tokenizer: an unseen word is <unk> there), and a tokenizer.json that
// lowercases as the training data was and splits as parastream's
// tokenizer does (text.HFSplitPattern says where it cannot).
func ExportStatic(dir string, ck *trainstep.Checkpoint, cfg StaticConfig) error {
	if ck.Config.Encoder != compute.EncAvg || ck.Config.Context != "" {
		return fmt.Errorf("export --format %s: the model is %s (context %q); a static embedding model is an average of word vectors: export an avg model without a topic context",
			cfg.Format, ck.Config.Encoder, ck.Config.Context)
	}
	if ck.Vocab == nil {
		return fmt.Errorf("export --format %s: the checkpoint has no vocabulary (%s)", cfg.Format, trainstep.FileVocab)
	}
	d := ck.Config.Dim
	if cfg.TruncateDim < 0 || cfg.TruncateDim > d {
		return fmt.Errorf("export: --truncate-dim %d: give 1 to the embedding size %d", cfg.TruncateDim, d)
	}
	var table []float32
	for _, t := range ck.Params {
		if t.Name == compute.ParamEmbeddings {
			table = t.Data
		}
	}
	if len(table) < len(ck.Vocab)*d {
		return fmt.Errorf("export: the checkpoint's embeddings hold %d values, fewer than its %d words of %d", len(table), len(ck.Vocab), d)
	}
	keep := d
	if cfg.TruncateDim > 0 {
		keep = cfg.TruncateDim
	}
	rows := make([]float32, len(ck.Vocab)*keep)
	for i := range ck.Vocab {
		copy(rows[i*keep:(i+1)*keep], table[i*d:i*d+keep])
	}
	tok, err := tokenizerJSON(ck)
	if err != nil {
		return err
	}
	if err := emptyDir(dir); err != nil {
		return err
	}
	meta := map[string]string{"format": "pt", "producer": "parastream export"}
	files := map[string][]byte{}
	switch cfg.Format {
	case FormatSentenceTransformers:
		const module = "0_StaticEmbedding"
		files["modules.json"] = mustJSON([]map[string]any{{"idx": 0, "name": "0", "path": module, "type": "sentence_transformers.models.StaticEmbedding"}})
		files["config_sentence_transformers.json"] = mustJSON(map[string]any{
			"__version__":         map[string]string{"parastream": cfg.Version},
			"model_type":          "SentenceTransformer",
			"prompts":             map[string]string{},
			"default_prompt_name": nil,
			"similarity_fn_name":  "cosine",
		})
		st, err := safetensorsBytes(compute.Tensor{Name: "embedding.weight", Shape: []int{len(ck.Vocab), keep}, Data: rows}, meta)
		if err != nil {
			return err
		}
		files[filepath.Join(module, "model.safetensors")] = st
		files[filepath.Join(module, "tokenizer.json")] = tok
	case FormatModel2Vec:
		files["modules.json"] = mustJSON([]map[string]any{{"idx": 0, "name": "0", "path": ".", "type": "sentence_transformers.models.StaticEmbedding"}})
		files["config.json"] = mustJSON(map[string]any{
			"model_type":      "model2vec",
			"architectures":   []string{"StaticModel"},
			"tokenizer_name":  nil,
			"apply_pca":       nil,
			"apply_zipf":      nil,
			"hidden_dim":      keep,
			"seq_length":      1000000,
			"normalize":       false,
			"embedding_dtype": "float32",
		})
		st, err := safetensorsBytes(compute.Tensor{Name: "embeddings", Shape: []int{len(ck.Vocab), keep}, Data: rows}, meta)
		if err != nil {
			return err
		}
		files["model.safetensors"] = st
		files["tokenizer.json"] = tok
	default:
		return fmt.Errorf("export: --format %q: give one of glove, safetensors, %s, %s", cfg.Format, FormatSentenceTransformers, FormatModel2Vec)
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(path, data); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	return nil
}

// tokenizerJSON is the Hugging Face tokenizer.json of ck's vocabulary: a
// WordLevel model (id = the word's line in vocab.txt, <unk> for the rest),
// a Lowercase normalizer when the training data was lowercased, and
// parastream's split (text.HFSplitPattern) after a whitespace split.
func tokenizerJSON(ck *trainstep.Checkpoint) ([]byte, error) {
	vocab := make(map[string]int, len(ck.Vocab))
	for i, w := range ck.Vocab {
		if _, dup := vocab[w]; !dup {
			vocab[w] = i
		}
	}
	if len(vocab) != len(ck.Vocab) {
		return nil, fmt.Errorf("export: the vocabulary holds a word twice: a tokenizer maps each word to one id")
	}
	if _, ok := vocab["<unk>"]; !ok {
		return nil, errors.New("export: the vocabulary has no <unk>: the tokenizer has nothing to map unseen words to")
	}
	lower := true
	if ck.Run != nil {
		lower = ck.Run.Tokenize.Lower
	}
	var normalizer any
	if lower {
		normalizer = map[string]string{"type": "Lowercase"}
	}
	var added []map[string]any
	for _, w := range []string{"<pad>", "<unk>", text.StartToken, text.EndToken} {
		if id, ok := vocab[w]; ok {
			added = append(added, map[string]any{"id": id, "content": w, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true})
		}
	}
	return mustJSON(map[string]any{
		"version":      "1.0",
		"truncation":   nil,
		"padding":      nil,
		"added_tokens": added,
		"normalizer":   normalizer,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "WhitespaceSplit"},
			map[string]any{"type": "Split", "pattern": map[string]string{"Regex": text.HFSplitPattern()}, "behavior": "Isolated", "invert": false},
		}},
		"post_processor": nil,
		"decoder":        nil,
		"model":          map[string]any{"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"},
	}), nil
}

// emptyDir makes dir, or checks that it is an empty directory: an export
// never mixes its files with others.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return fmt.Errorf("export: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("export: %s is not empty: give a new directory", dir)
	}
	return nil
}

func safetensorsBytes(t compute.Tensor, meta map[string]string) ([]byte, error) {
	var b bytes.Buffer
	if err := trainstep.WriteSafetensors(&b, []compute.Tensor{t}, meta); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic("evalsink: " + err.Error())
	}
	return append(b, '\n')
}
