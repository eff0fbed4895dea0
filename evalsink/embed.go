package evalsink

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/parastream/parastream/featurize/lexicon"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// embedChunk is how many texts go to the model at once.
const embedChunk = 256

// Embedder embeds tokenised texts with a checkpoint's model, mapping tokens
// to ids through the checkpoint's own lexicon (trainstep.Checkpoint.Lexicon:
// its vocabulary and out-of-vocabulary buckets), not the ids stored in the
// shards, which may come from another featurize run. A token not in the
// vocabulary gets its hashed bucket when the checkpoint has buckets (the
// id the same token had in the training data), else the vocabulary's
// "<unk>" where it has one, and is dropped otherwise; a text left with no
// ids embeds as the zero vector (whose cosine with anything is 0).
// Identical texts are embedded once.
//
// An Embedder is not safe for concurrent use.
type Embedder struct {
	model compute.Model
	lex   *lexicon.Lexicon
	dim   int
	cache map[string][]float32
	// context gives a text's topic vector, for a model with a topic
	// context (SetContext); nil otherwise.
	context func(tokens []string) []float32
	// adapt maps every embedding returned (SetAdaptation); nil: none.
	adapt *Adaptation
	// truncate keeps the first truncate components of every embedding
	// (SetTruncate, a Matryoshka prefix); 0: all.
	truncate int
	// Tokens counts the tokens mapped, Unknown those not in the
	// vocabulary, Bucketed those of them that got a bucket's id (all of
	// them with buckets, none without), Empty the texts that embedded as
	// the zero vector.
	Tokens, Unknown, Bucketed, Empty int64
}

// NewEmbedder returns an embedder of model m, whose sentence embeddings
// have dim components and whose token ids are lex's.
func NewEmbedder(m compute.Model, lex *lexicon.Lexicon, dim int) (*Embedder, error) {
	if lex == nil || lex.Words() == 0 {
		return nil, errors.New("evalsink: the checkpoint has no vocabulary (vocab.txt): its token ids cannot be mapped")
	}
	return &Embedder{model: m, lex: lex, dim: dim, cache: map[string][]float32{}}, nil
}

// ContextFunc gives, for a checkpoint of a model with a topic context
// (compute.Config.Context), the function computing a text's topic vector
// with the featurize model the checkpoint keeps (trainstep.DirFeaturize).
type ContextFunc func(checkpointDir string) (func(tokens []string) []float32, error)

// OpenEmbedder loads the model of the checkpoint in dir and returns its
// embedder and the checkpoint. contextFor computes the topic context of a
// model that takes one; such a model is refused when it is nil. Close the
// embedder to release the model. The embedder of `parastream embed` and of
// the evaluator.
func OpenEmbedder(dir string, contextFor ContextFunc) (*Embedder, *trainstep.Checkpoint, error) {
	m, ck, err := trainstep.LoadModel(dir, nil)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*Embedder, *trainstep.Checkpoint, error) {
		m.Close()
		return nil, nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	lex, err := ck.Lexicon()
	if err != nil {
		return fail(err)
	}
	emb, err := NewEmbedder(m, lex, ck.Config.EmbedDim())
	if err != nil {
		return fail(err)
	}
	if ck.Config.Context == "" {
		return emb, ck, nil
	}
	if contextFor == nil {
		return fail(fmt.Errorf("its model takes a %s context, and no function to compute it was given (evalsink.Config.ContextFor)", ck.Config.Context))
	}
	f, err := contextFor(dir)
	if err != nil {
		return fail(err)
	}
	if err := emb.SetContext(f); err != nil {
		return fail(err)
	}
	return emb, ck, nil
}

// SetTruncate makes every embedding its first d components (a
// Matryoshka prefix: Config.Matryoshka trains them as embeddings of their
// own); 0 keeps all of them. It empties the cache.
func (e *Embedder) SetTruncate(d int) error {
	if d < 0 || d > e.dim {
		return fmt.Errorf("truncate-dim %d: give 1 to the embedding size %d (0: all)", d, e.dim)
	}
	if d > 0 && e.adapt != nil {
		return errors.New("truncate-dim with an STS adaptation: the adaptation maps the whole embedding; give one or the other")
	}
	e.truncate = d
	clear(e.cache)
	return nil
}

// Close releases the embedder's model.
func (e *Embedder) Close() error { return e.model.Close() }

// Lexicon is the lexicon mapping the embedder's tokens to ids.
func (e *Embedder) Lexicon() *lexicon.Lexicon { return e.lex }

// SetContext makes the embedder give each text the topic vector f
// computes to a model with a topic context (compute.Config.Context): the
// model must implement compute.ContextEmbedder.
func (e *Embedder) SetContext(f func(tokens []string) []float32) error {
	if _, ok := e.model.(compute.ContextEmbedder); !ok {
		return errors.New("evalsink: the model takes no context")
	}
	e.context = f
	return nil
}

// IDs maps tokens to the checkpoint's ids.
func (e *Embedder) IDs(tokens []string) []int32 {
	ids, unknown := e.lex.AppendIDs(make([]int32, 0, len(tokens)), tokens)
	e.Tokens += int64(len(tokens))
	e.Unknown += int64(unknown)
	if e.lex.Buckets() > 0 {
		e.Bucketed += int64(unknown)
	}
	return ids
}

// HasContext says whether the embedder gives each text a topic context
// (its model takes one: SetContext).
func (e *Embedder) HasContext() bool { return e.context != nil }

// Embed returns the embedding of each text (with its own topic vector as
// its context, for a model with a topic context).
func (e *Embedder) Embed(ctx context.Context, texts [][]string) ([][]float32, error) {
	return e.embed(ctx, texts, nil)
}

// EmbedInContext returns the embedding of each text with the topic vector
// of contexts[i] as its context, for a model with a topic context
// (HasContext): a word embedded with the topics of the sentence it occurs
// in. A text whose context is the text itself embeds as Embed gives it.
func (e *Embedder) EmbedInContext(ctx context.Context, texts, contexts [][]string) ([][]float32, error) {
	if e.context == nil {
		return nil, errors.New("evalsink: embedding in context: the model takes no context")
	}
	if len(contexts) != len(texts) {
		return nil, fmt.Errorf("evalsink: embedding %d texts in %d contexts", len(texts), len(contexts))
	}
	return e.embed(ctx, texts, contexts)
}

// embed embeds texts, each in its own context (contexts nil) or in
// contexts[i]'s; an embedding is cached under its text and, where it
// differs from the text, its context.
func (e *Embedder) embed(ctx context.Context, texts, contexts [][]string) ([][]float32, error) {
	keyOf := func(i int) string {
		k := strings.Join(texts[i], "\x00")
		if contexts != nil {
			if c := strings.Join(contexts[i], "\x00"); c != k {
				k += "\x01" + c
			}
		}
		return k
	}
	out := make([][]float32, len(texts))
	var (
		pending []int // indexes in texts of the unique texts to embed
		seqs    [][]int32
		ctxs    [][]float32
		keys    []string
	)
	first := map[string]int{}
	for i, t := range texts {
		key := keyOf(i)
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
			e.cache[key] = make([]float32, cmp.Or(e.truncate, e.dim))
			out[i] = e.cache[key]
			continue
		}
		pending, seqs, keys = append(pending, i), append(seqs, ids), append(keys, key)
		if e.context != nil {
			c := t
			if contexts != nil {
				c = contexts[i]
			}
			ctxs = append(ctxs, e.context(c))
		}
	}
	for lo := 0; lo < len(seqs); lo += embedChunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+embedChunk, len(seqs))
		var vecs [][]float32
		var err error
		if e.context != nil {
			vecs, err = e.model.(compute.ContextEmbedder).EmbedContext(seqs[lo:hi], ctxs[lo:hi])
		} else {
			vecs, err = e.model.Embed(seqs[lo:hi])
		}
		if err != nil {
			return nil, fmt.Errorf("embedding: %w", err)
		}
		for j, v := range vecs {
			if len(v) != e.dim {
				return nil, fmt.Errorf("embedding: the model gave %d components, its configuration says %d", len(v), e.dim)
			}
			if e.adapt != nil {
				v = e.adapt.Apply(v)
			}
			if e.truncate > 0 {
				v = v[:e.truncate:e.truncate]
			}
			e.cache[keys[lo+j]] = v
			out[pending[lo+j]] = v
		}
	}
	for i := range texts {
		if out[i] == nil {
			out[i] = e.cache[keyOf(i)]
		}
	}
	return out, nil
}
