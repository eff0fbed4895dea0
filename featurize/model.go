package featurize

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parastream/parastream/featurize/lexicon"
	"github.com/parastream/parastream/internal/atomicfile"
	"github.com/parastream/parastream/shards"
)

// The files of a saved model, in its directory (featurize/ beside the
// manifest of featurized shards).
const (
	VocabularyFile = "vocab.tsv"
	TopicsFile     = "topics.safetensors"
	InfoFile       = "featurize.json"
	CurveFile      = "k_curve.tsv"
)

// Info is what featurize.json records: how the model was made, so that it
// can be judged and made again.
type Info struct {
	Format    string    `json:"format"` // "parastream-featurize"
	Version   int       `json:"version"`
	Weighting Weighting `json:"weighting"`
	// Vocabulary is the bound the vocabulary was built under; Corpora the
	// corpora whose training splits were counted.
	Vocabulary VocabConfig `json:"vocabulary"`
	Corpora    []string    `json:"corpora"`
	// OOVBuckets is N, the number of out-of-vocabulary buckets: a token
	// outside the V entries of the vocabulary gets the id
	// V + lexicon.Bucket(token, N), hashed by OOVHash (lexicon.Hash). 0
	// maps every such token to UnkID; a featurize.json written before the
	// buckets existed has no field and reads as 0.
	OOVBuckets int    `json:"oov_buckets"`
	OOVHash    string `json:"oov_hash,omitempty"`
	// Topics is k; L1 is λ. FitTexts is the number of training texts the
	// model was fitted on (a seeded sample of Sample texts where there were
	// more); Seed seeds both the sample and the fit.
	Topics   int     `json:"topics"`
	L1       float64 `json:"l1"`
	Sample   int     `json:"sample"`
	FitTexts int     `json:"fit_texts"`
	Seed     uint64  `json:"seed"`
	MaxIter  int     `json:"max_iter"`
	Tol      float64 `json:"tol"`
	// RelError is the fit's relative reconstruction error ||X−WH||/||X||
	// on the fitted texts; Iters the iterations it took.
	RelError float64 `json:"rel_error"`
	Iters    int     `json:"iters"`
	// Curve is the error against k of --topics auto, empty otherwise.
	Curve []KError `json:"curve,omitempty"`
}

const infoFormat = "parastream-featurize"

// Model is what featurize fits and applies: the vocabulary, the
// out-of-vocabulary buckets, the bag-of-words weighting and the NMF topics.
type Model struct {
	Vocab *Vocabulary
	// Lex maps tokens to ids: the vocabulary's, then Info.OOVBuckets
	// buckets.
	Lex  *lexicon.Lexicon
	BoW  *BoW
	NMF  *NMF
	Info Info
}

// NewModel assembles a model and checks that its parts agree. With
// info.OOVBuckets > 0, info.OOVHash must be lexicon.Hash.
func NewModel(v *Vocabulary, nmf *NMF, info Info) (*Model, error) {
	info.Format, info.Version = infoFormat, 1
	if nmf.Terms != v.Len() {
		return nil, fmt.Errorf("featurize: the topic model has %d terms and the vocabulary %d entries", nmf.Terms, v.Len())
	}
	if err := lexicon.CheckHash(info.OOVHash, info.OOVBuckets); err != nil {
		return nil, fmt.Errorf("featurize: %w", err)
	}
	lex, err := v.Lexicon(info.OOVBuckets)
	if err != nil {
		return nil, fmt.Errorf("featurize: %w", err)
	}
	bow, err := NewBoW(v, info.Weighting)
	if err != nil {
		return nil, err
	}
	info.Topics = nmf.K
	return &Model{Vocab: v, Lex: lex, BoW: bow, NMF: nmf, Info: info}, nil
}

// Save writes the model's files into dir, each under a temporary name
// renamed into place, and returns their names relative to dir.
func (m *Model) Save(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	parts, err := m.parts()
	if err != nil {
		return nil, err
	}
	names := []string{VocabularyFile, TopicsFile, InfoFile}
	for i, name := range names {
		if err := atomicfile.WriteFile(filepath.Join(dir, name), parts[i]); err != nil {
			return nil, fmt.Errorf("saving the featurize model: %w", err)
		}
	}
	if len(m.Info.Curve) > 0 {
		var b bytes.Buffer
		b.WriteString("k\trel_error\tobjective\titers\n")
		for _, c := range m.Info.Curve {
			fmt.Fprintf(&b, "%d\t%.6f\t%.6g\t%d\n", c.K, c.RelError, c.Objective, c.Iters)
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, CurveFile), b.Bytes()); err != nil {
			return nil, err
		}
		names = append(names, CurveFile)
	}
	return names, nil
}

// parts encodes the vocabulary, the topics and the info, in that order.
func (m *Model) parts() ([][]byte, error) {
	var vocab, topics bytes.Buffer
	if _, err := m.Vocab.WriteTo(&vocab); err != nil {
		return nil, err
	}
	if _, err := m.NMF.WriteTo(&topics); err != nil {
		return nil, err
	}
	info, err := json.MarshalIndent(m.Info, "", "  ")
	if err != nil {
		return nil, err
	}
	return [][]byte{vocab.Bytes(), topics.Bytes(), append(info, '\n')}, nil
}

// LoadModel reads a model saved by Save. dir may also be a directory of
// featurized shards, or its featurize/ subdirectory: the model is then the
// one its manifest names (featurize/<version>/), or, in shards featurized
// before versions, the files in featurize/.
func LoadModel(dir string) (*Model, error) {
	if _, err := os.Stat(filepath.Join(dir, InfoFile)); errors.Is(err, os.ErrNotExist) {
		dir = modelDir(dir)
	}
	var parts [3][]byte
	for i, name := range []string{VocabularyFile, TopicsFile, InfoFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("loading the featurize model: %w", err)
		}
		parts[i] = b
	}
	m, err := decodeModel(parts[0], parts[1], parts[2])
	if err != nil {
		return nil, fmt.Errorf("loading the featurize model from %s: %w", dir, err)
	}
	return m, nil
}

// modelDir finds the model of a directory of featurized shards (dir) or of
// its featurize/ subdirectory (dir's parent holds the manifest), following
// the manifest; dir/featurize where no manifest names a model; dir itself
// when neither is there, for the error to name.
func modelDir(dir string) string {
	for _, root := range []string{dir, filepath.Dir(dir)} {
		m, err := shards.ReadManifest(root)
		if err != nil || m.Featurize == nil {
			continue
		}
		found := filepath.Join(root, filepath.FromSlash(path.Dir(m.Featurize.Path)))
		if rel, err := filepath.Rel(dir, found); err == nil && filepath.IsLocal(rel) {
			return found
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "featurize", InfoFile)); err == nil {
		return filepath.Join(dir, "featurize")
	}
	return dir
}

func decodeModel(vocab, topics, info []byte) (*Model, error) {
	v, err := ReadVocabulary(bytes.NewReader(vocab))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", VocabularyFile, err)
	}
	nmf, err := ReadNMF(bytes.NewReader(topics))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", TopicsFile, err)
	}
	var in Info
	if err := json.Unmarshal(info, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", InfoFile, err)
	}
	if in.Format != infoFormat || in.Version != 1 {
		return nil, fmt.Errorf("%s: format %q version %d, want %q version 1", InfoFile, in.Format, in.Version, infoFormat)
	}
	return NewModel(v, nmf, in)
}

// MarshalBinary encodes the model as one value (the three files, each
// preceded by its length as a uvarint), which the featurize pipeline hands
// to its workers as a side input.
func (m *Model) MarshalBinary() ([]byte, error) {
	parts, err := m.parts()
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, p := range parts {
		out = binary.AppendUvarint(out, uint64(len(p)))
		out = append(out, p...)
	}
	return out, nil
}

// UnmarshalModel decodes what MarshalBinary encoded.
func UnmarshalModel(b []byte) (*Model, error) {
	var parts [3][]byte
	for i := range parts {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, errors.New("featurize: truncated model encoding")
		}
		parts[i], b = b[k:k+int(n)], b[k+int(n):]
	}
	if len(b) != 0 {
		return nil, errors.New("featurize: trailing bytes after the model encoding")
	}
	return decodeModel(parts[0], parts[1], parts[2])
}

// Featurizer applies a model to rows. It holds scratch space: one
// Featurizer serves one goroutine.
type Featurizer struct {
	m  *Model
	t  *Transformer
	sc BoWScratch
}

// NewFeaturizer returns a Featurizer of m.
func (m *Model) NewFeaturizer() *Featurizer {
	return &Featurizer{m: m, t: m.NMF.NewTransformer()}
}

// TextStats counts what Apply saw.
type TextStats struct {
	// Tokens counts the tokens of the Texts; Unknown those outside the
	// vocabulary, and Bucketed those of them that got a bucket's id (all
	// of them in a model with buckets, none without: they got UnkID).
	Texts, Tokens, Unknown, Bucketed int64
	// Empty counts texts with no known word, whose topic vector is zero.
	Empty int64
}

// Add adds o's counts.
func (s *TextStats) Add(o TextStats) {
	s.Texts += o.Texts
	s.Tokens += o.Tokens
	s.Unknown += o.Unknown
	s.Bucketed += o.Bucketed
	s.Empty += o.Empty
}

// Apply sets the row's token ids (IDsA, IDsB) and topic vectors (TopicsA,
// TopicsB) from its tokens, replacing earlier ones. Side B is left empty
// for a row without a second text. The ids are in [0, V+N) (the model's
// Lex); the topic vectors weigh the vocabulary's words only.
func (f *Featurizer) Apply(r *shards.Row, st *TextStats) {
	r.IDsA, r.TopicsA = f.text(r.IDsA, r.TopicsA, r.TokensA, st)
	if len(r.TokensB) == 0 && r.B == "" {
		r.IDsB, r.TopicsB = nil, nil
		return
	}
	r.IDsB, r.TopicsB = f.text(r.IDsB, r.TopicsB, r.TokensB, st)
}

// Topics appends the topic vector θ of a tokenised text to dst, as Apply
// computes it for a row's side: for a model with a topic context, the
// context of a sentence featurize never saw.
func (f *Featurizer) Topics(dst []float32, tokens []string) []float32 {
	var st TextStats
	_, dst = f.text(nil, dst, tokens, &st)
	return dst
}

func (f *Featurizer) text(ids []int32, topics []float32, tokens []string, st *TextStats) ([]int32, []float32) {
	ids, unknown := f.m.Lex.AppendIDs(ids[:0], tokens)
	idx, val := f.m.BoW.Vector(&f.sc, ids)
	topics = f.t.Transform(topics[:0], idx, val)
	st.Texts++
	st.Tokens += int64(len(tokens))
	st.Unknown += int64(unknown)
	if f.m.Lex.Buckets() > 0 {
		st.Bucketed += int64(unknown)
	}
	if len(idx) == 0 {
		st.Empty++
	}
	return ids, topics
}

// Topic returns the top n words of topic t with their weights, heaviest
// first.
func (m *Model) Topic(t, n int) []TokenWeight {
	row := m.NMF.H[t*m.NMF.Terms : (t+1)*m.NMF.Terms]
	var out []TokenWeight
	for id, w := range row {
		if w <= 0 || id < NumSpecial {
			continue
		}
		out = append(out, TokenWeight{Token: m.Vocab.entries[id].Token, Weight: w})
	}
	sortTokenWeights(out)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// TokenWeight is a word and its weight in a topic.
type TokenWeight struct {
	Token  string
	Weight float32
}

func sortTokenWeights(ws []TokenWeight) {
	slices.SortFunc(ws, func(a, b TokenWeight) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return strings.Compare(a.Token, b.Token)
	})
}
