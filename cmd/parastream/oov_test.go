package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/cmd/parastream/internal/demo"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/featurize"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/transforms/text"
)

// bucketedText is a text of the featurized shards with a token outside
// the vocabulary.
type bucketedText struct {
	text   string
	tokens []string
	ids    []int32
}

// TestBucketsFromShardsAndStdin featurizes generated Quora pairs and the
// evaluation fixtures with out-of-vocabulary buckets (`parastream featurize --oov-buckets 1000`),
// trains on them from a broker (the demo's training: the trainer reads the
// buckets from the published featurize.json), and embeds texts holding
// unseen words three ways: the shards' ids through the model, the shards'
// tokens through evalsink's Embedder (what `eval` does), and the plain text
// on the stdin of `parastream embed`. The three vectors are the same; `eval
// run` reports the buckets.
func TestBucketsFromShardsAndStdin(t *testing.T) {
	bin := binary(t)
	ctx := context.Background()
	eval, _ := evalFixtures(t, bin)
	// Training data: generated Quora pairs, extracted beside the
	// evaluation sets, whose words are mostly unseen in them.
	quora := filepath.Join(t.TempDir(), "quora.tsv")
	if out, err := exec.Command(bin, "gen", "quora", "--rows", "2000", "--seed", "3", "--malformed-rate", "0", "--out", quora).CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "extract", "--corpus", "quora", "--input", quora, "--out", eval).CombinedOutput(); err != nil {
		t.Fatalf("extract: %v\n%s", err, out)
	}
	feat := filepath.Join(t.TempDir(), "featurized")
	out, err := exec.Command(bin, "featurize", "--in", eval, "--out", feat, "--oov-buckets", "1000", "--topics", "2", "--quiet").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "of tokens to the 1000 out-of-vocabulary buckets") {
		t.Fatalf("featurize: %v\n%s", err, out)
	}
	model, err := featurize.LoadModel(feat)
	if err != nil {
		t.Fatal(err)
	}
	V := model.Vocab.Len()

	ckDir := filepath.Join(t.TempDir(), "checkpoints")
	var log bytes.Buffer
	if err := (demo.Config{Stdout: &log, Stderr: &log}).TrainStream(ctx, feat, ckDir); err != nil {
		t.Fatalf("training: %v\n%s", err, log.String())
	}
	last, err := trainstep.LatestCheckpoint(ckDir)
	if err != nil {
		t.Fatal(err)
	}
	m, ck, err := trainstep.LoadModel(last, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if ck.Config.OOVBuckets != 1000 || ck.Config.Vocab != V+1000 || len(ck.Vocab) != V || ck.Run == nil {
		t.Fatalf("checkpoint: %d buckets, vocab %d, %d words (featurize: %d words), run %v", ck.Config.OOVBuckets, ck.Config.Vocab, len(ck.Vocab), V, ck.Run)
	}
	lex, err := ck.Lexicon()
	if err != nil {
		t.Fatal(err)
	}
	emb, err := evalsink.NewEmbedder(m, lex, ck.Config.EmbedDim())
	if err != nil {
		t.Fatal(err)
	}

	// Texts with an unseen word whose plain text tokenises as the shard's
	// tokens (the text is extraction's normalised one).
	opts := text.TokenizeOptions{Lower: ck.Run.Tokenize.Lower, StartEnd: ck.Run.Tokenize.StartEnd}
	mf, err := shards.ReadManifest(feat)
	if err != nil {
		t.Fatal(err)
	}
	var texts []bucketedText
	for _, f := range mf.Files {
		r, err := shards.OpenFile(filepath.Join(feat, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		for row, err := range r.All() {
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []bucketedText{{row.A, row.TokensA, row.IDsA}, {row.B, row.TokensB, row.IDsB}} {
				if len(texts) < 40 && slices.ContainsFunc(s.ids, func(id int32) bool { return int(id) >= V }) &&
					!strings.Contains(s.text, "\n") && slices.Equal(text.Tokenize(s.text, opts), s.tokens) {
					texts = append(texts, bucketedText{s.text, slices.Clone(s.tokens), slices.Clone(s.ids)})
				}
			}
		}
		r.Close()
	}
	if len(texts) < 10 {
		t.Fatalf("%d texts with an unseen word, want at least 10", len(texts))
	}

	var idSeqs [][]int32
	var tokenSeqs [][]string
	var stdin strings.Builder
	for _, x := range texts {
		idSeqs, tokenSeqs = append(idSeqs, x.ids), append(tokenSeqs, x.tokens)
		stdin.WriteString(x.text + "\n")
	}
	fromIDs, err := m.Embed(idSeqs)
	if err != nil {
		t.Fatal(err)
	}
	fromTokens, err := emb.Embed(ctx, tokenSeqs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "embed", "--checkpoint", last, "--format", "json")
	cmd.Stdin = strings.NewReader(stdin.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil || !strings.Contains(stderr.String(), "mapped to its 1000 out-of-vocabulary buckets") {
		t.Fatalf("embed: %v\n%s", err, stderr.String())
	}
	var fromStdin [][]float32
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Text   string    `json:"text"`
			Vector []float32 `json:"vector"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		fromStdin = append(fromStdin, line.Vector)
	}
	if len(fromStdin) != len(texts) {
		t.Fatalf("embed wrote %d vectors for %d texts", len(fromStdin), len(texts))
	}
	for i, x := range texts {
		if !slices.Equal(fromIDs[i], fromTokens[i]) || !slices.Equal(fromIDs[i], fromStdin[i]) {
			t.Errorf("%q: from the shard's ids %v, its tokens %v, stdin %v", x.text, fromIDs[i][:3], fromTokens[i][:3], fromStdin[i][:3])
		}
	}
	// The buckets matter: the same texts with their unseen words mapped to
	// <unk> embed otherwise.
	unk := make([][]int32, len(texts))
	for i, x := range texts {
		for _, id := range x.ids {
			if int(id) >= V {
				id = featurize.UnkID
			}
			unk[i] = append(unk[i], id)
		}
	}
	asUnk, err := m.Embed(unk)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(asUnk[0], fromIDs[0]) {
		t.Errorf("%q embeds the same with its unseen words as <unk>", texts[0].text)
	}

	code, evalOut, evalErr := runCLI(t, "eval", "run", "--checkpoint", last, "--eval", feat, "--out", t.TempDir())
	if code != 0 || !strings.Contains(evalOut, "mapped to its 1000 out-of-vocabulary buckets") {
		t.Errorf("eval run: exit %d\n%s\n%s", code, evalOut, evalErr)
	}
}
