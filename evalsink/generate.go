package evalsink

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/transforms/text"
)

// generateChunk is how many sentences go to the generator at once.
const generateChunk = 64

// Paraphraser generates paraphrases with the model of an edd checkpoint
// (compute.EncEDD): texts are tokenised as its training data was, mapped
// to ids through its lexicon (as Embedder does), generated from, and the
// ids mapped back to the vocabulary's words. It is not safe for
// concurrent use.
type Paraphraser struct {
	emb   *Embedder
	gen   compute.Generator
	vocab []string
	opts  text.TokenizeOptions
	dir   string
}

// OpenParaphraser loads the edd checkpoint in dir (or the latest under
// it). Close it to release the model.
func OpenParaphraser(dir string) (*Paraphraser, *trainstep.Checkpoint, error) {
	ckDir, err := trainstep.LatestCheckpoint(dir)
	if err != nil {
		return nil, nil, err
	}
	emb, ck, err := OpenEmbedder(ckDir, nil)
	if err != nil {
		return nil, nil, err
	}
	gen, ok := emb.model.(compute.Generator)
	if !ok || !ck.Config.IsEDD() {
		emb.Close()
		return nil, nil, fmt.Errorf("checkpoint %s holds a %s model, which does not generate: train one with --model %s", ckDir, ck.Config.Encoder, compute.EncEDD)
	}
	opts := text.TokenizeOptions{Lower: true}
	if ck.Run != nil {
		opts = text.TokenizeOptions{Lower: ck.Run.Tokenize.Lower, StartEnd: ck.Run.Tokenize.StartEnd}
	}
	return &Paraphraser{emb: emb, gen: gen, vocab: ck.Vocab, opts: opts, dir: ckDir}, ck, nil
}

// Dir is the checkpoint directory the model was loaded from.
func (p *Paraphraser) Dir() string { return p.dir }

// Close releases the model.
func (p *Paraphraser) Close() error { return p.emb.Close() }

// Tokenize splits a line as the checkpoint's training data was split.
func (p *Paraphraser) Tokenize(line string) []string { return text.Tokenize(line, p.opts) }

// Paraphrase generates one paraphrase (its words) for each tokenised
// text; a text with no token id gets an empty paraphrase.
func (p *Paraphraser) Paraphrase(texts [][]string, opts compute.GenerateOptions) ([][]string, error) {
	out := make([][]string, len(texts))
	var seqs [][]int32
	var at []int
	for i, t := range texts {
		if ids := p.emb.IDs(t); len(ids) > 0 {
			seqs, at = append(seqs, ids), append(at, i)
		}
	}
	if len(seqs) == 0 {
		return out, nil
	}
	gen, err := p.gen.Generate(seqs, opts)
	if err != nil {
		return nil, err
	}
	for k, ids := range gen {
		out[at[k]] = p.Words(ids)
	}
	return out, nil
}

// Words maps generated ids to the vocabulary's words, leaving out the
// sentence tags <s> and </s> (which a model trained on tagged texts
// generates too).
func (p *Paraphraser) Words(ids []int32) []string {
	words := make([]string, 0, len(ids))
	for _, id := range ids {
		w := fmt.Sprintf("<id:%d>", id)
		if int(id) < len(p.vocab) {
			w = p.vocab[id]
		}
		if w == text.StartToken || w == text.EndToken {
			continue
		}
		words = append(words, w)
	}
	return words
}

// ParaphraseLines writes, for each line of r, its paraphrase (the
// generated words joined by spaces) as a line of w, in order, and returns
// the number of lines.
func (p *Paraphraser) ParaphraseLines(ctx context.Context, r io.Reader, w io.Writer, opts compute.GenerateOptions) (int, error) {
	bw := bufio.NewWriter(w)
	n, err := chunkLines(ctx, r, generateChunk, func(lines []string) error {
		texts := make([][]string, len(lines))
		for i, line := range lines {
			texts[i] = p.Tokenize(line)
		}
		out, err := p.Paraphrase(texts, opts)
		if err != nil {
			return err
		}
		for _, words := range out {
			if _, err := fmt.Fprintln(bw, strings.Join(words, " ")); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
	return n, err
}
