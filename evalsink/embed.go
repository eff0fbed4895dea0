package evalsink

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/parastream/parastream/trainstep/compute"
)

// embedChunk is how many texts go to the model at once.
const embedChunk = 256

// UnknownToken is the vocabulary entry unknown tokens map to, when the
// checkpoint's vocabulary has it (featurize's vocabularies do, at id 1).
const UnknownToken = "<unk>"

// Embedder embeds tokenised texts with a checkpoint's model, mapping tokens
// to ids through the checkpoint's own vocabulary (not the ids stored in
// the shards, which may come from another featurize run). A token not in
// the vocabulary maps to UnknownToken where the vocabulary has it and is
// dropped otherwise; a text left with no ids embeds as the zero vector
// (whose cosine with anything is 0). Identical texts are embedded once.
//
// An Embedder is not safe for concurrent use.
type Embedder struct {
	model compute.Model
	ids   map[string]int32
	unk   int32
	dim   int
	cache map[string][]float32
	// Tokens counts the tokens mapped, Unknown those not in the
	// vocabulary, Empty the texts that embedded as the zero vector.
	Tokens, Unknown, Empty int64
}

// NewEmbedder returns an embedder of model m, whose sentence embeddings
// have dim components and whose token ids index vocab.
func NewEmbedder(m compute.Model, vocab []string, dim int) (*Embedder, error) {
	if len(vocab) == 0 {
		return nil, errors.New("evalsink: the checkpoint has no vocabulary (vocab.txt): its token ids cannot be mapped")
	}
	e := &Embedder{model: m, ids: make(map[string]int32, len(vocab)), unk: -1, dim: dim, cache: map[string][]float32{}}
	for i, w := range vocab {
		if _, dup := e.ids[w]; !dup {
			e.ids[w] = int32(i)
		}
	}
	if id, ok := e.ids[UnknownToken]; ok {
		e.unk = id
	}
	return e, nil
}

// IDs maps tokens to the vocabulary's ids.
func (e *Embedder) IDs(tokens []string) []int32 {
	ids := make([]int32, 0, len(tokens))
	for _, t := range tokens {
		e.Tokens++
		id, ok := e.ids[t]
		if !ok {
			e.Unknown++
			if e.unk < 0 {
				continue
			}
			id = e.unk
		}
		ids = append(ids, id)
	}
	return ids
}

// Embed returns the embedding of each text.
func (e *Embedder) Embed(ctx context.Context, texts [][]string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var (
		pending []int // indexes in texts of the unique texts to embed
		seqs    [][]int32
		keys    []string
	)
	first := map[string]int{}
	for i, t := range texts {
		key := strings.Join(t, "\x00")
		if v, ok := e.cache[key]; ok {
			out[i] = v
			continue
		}
		if _, ok := first[key]; ok {
			continue
		}
		first[key] = i
		ids := e.IDs(t)
		if len(ids) == 0 {
			e.Empty++
			e.cache[key] = make([]float32, e.dim)
			out[i] = e.cache[key]
			continue
		}
		pending, seqs, keys = append(pending, i), append(seqs, ids), append(keys, key)
	}
	for lo := 0; lo < len(seqs); lo += embedChunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+embedChunk, len(seqs))
		vecs, err := e.model.Embed(seqs[lo:hi])
		if err != nil {
			return nil, fmt.Errorf("embedding: %w", err)
		}
		for j, v := range vecs {
			if len(v) != e.dim {
				return nil, fmt.Errorf("embedding: the model gave %d components, its configuration says %d", len(v), e.dim)
			}
			e.cache[keys[lo+j]] = v
			out[pending[lo+j]] = v
		}
	}
	for i, t := range texts {
		if out[i] == nil {
			out[i] = e.cache[strings.Join(t, "\x00")]
		}
	}
	return out, nil
}
