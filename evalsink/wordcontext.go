package evalsink

import (
	"context"
	"fmt"
	"strings"

	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/transforms/text"
)

// Word similarity in context (SCWS, Huang et al. 2012): pairs of words,
// each in its own context (a window of text around it), rated 0-10 by
// people; a model's prediction is the cosine of the two words'
// representations, correlated with the mean rating.

// Datasets of the word-in-context rows, after the set's name.
const (
	// WordsAlone: each word embedded as a one-word text, its context
	// ignored.
	WordsAlone = "words"
	// WordsInTopics: each word embedded with its context's topic vector
	// as the model's context (a model with a topic context only).
	WordsInTopics = "topics"
)

// targetWord returns a word-in-context pair's target word as extraction
// tokenised it: the tokens of the context at the word's position (the
// number of tokens of the text before it, left), which carry the
// extraction's case. ok is false when the context does not hold the word
// there; the word tokenised and lowercased (extraction's default) is
// returned then.
func targetWord(contextTokens []string, left, word string) (tokens []string, ok bool) {
	n := len(text.Tokenize(left, text.TokenizeOptions{}))
	if len(contextTokens) > 0 && contextTokens[0] == text.StartToken {
		n++
	}
	w := text.Tokenize(word, text.TokenizeOptions{})
	if len(w) == 0 || n+len(w) > len(contextTokens) {
		return text.Tokenize(word, text.TokenizeOptions{Lower: true}), false
	}
	got := contextTokens[n : n+len(w)]
	for i := range w {
		if !strings.EqualFold(got[i], w[i]) {
			return text.Tokenize(word, text.TokenizeOptions{Lower: true}), false
		}
	}
	return got, true
}

// wordContextTask scores every word-in-context set (SCWS): a
// KindWordContext row "<dataset>/words" (WordsAlone: the cosine of the two
// target words each embedded as a one-word text through the Embedder,
// out-of-vocabulary buckets as for any text, the context ignored; a model
// with a topic context gives the word its own topic vector, as it gives any
// text), and for
// a model with a topic context a row "<dataset>/topics" (WordsInTopics:
// each word embedded with the topic vector of its whole context). Each
// row's Spearman's ρ and Pearson's r have the pairs as items (Pred the
// cosine, Gold the mean rating).
func wordContextTask(ctx context.Context, env TaskEnv) ([]RowFigures, error) {
	var out []RowFigures
	for _, s := range env.Sets.Sets {
		if s.Task != TaskWordContext {
			continue
		}
		words := make([][]string, 2*len(s.Pairs))
		contexts := make([][]string, 2*len(s.Pairs))
		missed := 0
		for i, p := range s.Pairs {
			for side, c := range []struct {
				tokens     []string
				word, left string
			}{{p.A, "word1", "left1"}, {p.B, "word2", "left2"}} {
				word, ok := p.Meta[c.word]
				left, okLeft := p.Meta[c.left]
				if !ok || !okLeft {
					return nil, fmt.Errorf("word similarity in context: %s pair %s has no %s or %s", s.Dataset, p.ID, c.word, c.left)
				}
				w, found := targetWord(c.tokens, left, word)
				if !found {
					missed++
				}
				words[2*i+side], contexts[2*i+side] = w, c.tokens
			}
		}
		if missed > 0 && env.Log != nil {
			env.Log.Warn("target words not found at their place in the context; tokenised on their own", "set", s.Dataset, "words", missed)
		}
		names := []string{WordsAlone}
		if env.Emb.HasContext() {
			names = append(names, WordsInTopics)
		}
		for _, name := range names {
			var vecs [][]float32
			var err error
			if name == WordsAlone {
				vecs, err = env.Emb.Embed(ctx, words)
			} else {
				vecs, err = env.Emb.EmbedInContext(ctx, words, contexts)
			}
			if err != nil {
				return nil, fmt.Errorf("word similarity in context, %s %s: %w", s.Dataset, name, err)
			}
			pred, gold := make([]float64, len(s.Pairs)), make([]float64, len(s.Pairs))
			items := make([]metric.Item, len(s.Pairs))
			for i, p := range s.Pairs {
				pred[i], gold[i] = metric.Cosine(vecs[2*i], vecs[2*i+1]), p.Gold
				items[i] = metric.Item{ID: p.ID, Pred: pred[i], Gold: gold[i]}
			}
			r := env.Base
			r.Corpus, r.Split, r.Dataset, r.Kind, r.Pairs = s.Corpus, s.Split, s.Dataset+"/"+name, KindWordContext, int64(len(s.Pairs))
			r.Pearson, r.Spearman = ptr(100*metric.Pearson(pred, gold)), ptr(100*metric.Spearman(pred, gold))
			out = append(out, RowFigures{r, []metric.Figure{
				{Column: "pearson", Metric: metric.MetricPearson, Items: items},
				{Column: "spearman", Metric: metric.MetricSpearman, Items: items},
			}})
		}
	}
	return out, nil
}

// scwsLabel is how the report names a word-in-context row.
func scwsLabel(r Result) string {
	switch {
	case strings.HasSuffix(r.Dataset, "/"+WordsAlone):
		return "SCWS, the two words alone (context ignored)"
	case strings.HasSuffix(r.Dataset, "/"+WordsInTopics):
		return "SCWS, each word with its context's topic vector"
	}
	return r.Dataset
}
