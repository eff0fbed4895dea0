package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/featurize"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/transforms/text"
)

// TestContextTopicsEndToEnd trains a model with the topic context from a
// broker (`parastream train --context topics`) on generated Quora pairs
// featurized with 4 topics, then checks that the checkpoint keeps the
// featurize model, that `embed` of plain text gives the vector of the
// shard's ids and topic vector (the context evaluation computes is the one
// training saw), that the context changes the vector, and that `eval run`
// evaluates it.
func TestContextTopicsEndToEnd(t *testing.T) {
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	eval, _ := evalFixtures(t, bin)
	quora := filepath.Join(t.TempDir(), "quora.tsv")
	if out, err := exec.CommandContext(ctx, bin, "gen", "quora", "--rows", "1500", "--seed", "5", "--malformed-rate", "0", "--out", quora).CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	if out, err := exec.CommandContext(ctx, bin, "extract", "--corpus", "quora", "--input", quora, "--out", eval).CombinedOutput(); err != nil {
		t.Fatalf("extract: %v\n%s", err, out)
	}
	feat := filepath.Join(t.TempDir(), "featurized")
	if out, err := exec.CommandContext(ctx, bin, "featurize", "--in", eval, "--out", feat, "--oov-buckets", "100", "--topics", "4", "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("featurize: %v\n%s", err, out)
	}
	b := startBrokerProc(t, bin, "127.0.0.1:0", t.TempDir())
	if out, err := exec.CommandContext(ctx, bin, "publish", "--shards", feat, "--brokers", b.addr, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("publish: %v\n%s", err, out)
	}
	ckDir := filepath.Join(t.TempDir(), "ck")
	if out, err := exec.CommandContext(ctx, bin, "train", "--brokers", b.addr, "--dataset", "quora", "--context", "topics", "--dim", "16",
		"--epochs", "2", "--checkpoint-dir", ckDir, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
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
	if ck.Config.Context != compute.ContextTopics || ck.Config.Topics != 4 {
		t.Fatalf("checkpoint config: context %q, topics %d; want topics and 4", ck.Config.Context, ck.Config.Topics)
	}
	for _, name := range []string{featurize.VocabularyFile, featurize.TopicsFile, featurize.InfoFile} {
		if _, err := os.Stat(filepath.Join(last, trainstep.DirFeaturize, name)); err != nil {
			t.Errorf("the checkpoint lacks its featurize model's %s: %v", name, err)
		}
	}
	var w compute.Tensor
	for _, p := range ck.Params {
		if p.Name == compute.ParamContextW {
			w = p
		}
	}
	if !slices.ContainsFunc(w.Data, func(v float32) bool { return v != 0 }) {
		t.Fatalf("W_θ is still zero after training")
	}

	// Texts of the shards whose plain text tokenises as their tokens.
	opts := text.TokenizeOptions{Lower: ck.Run.Tokenize.Lower, StartEnd: ck.Run.Tokenize.StartEnd}
	mf, err := shards.ReadManifest(feat)
	if err != nil {
		t.Fatal(err)
	}
	type sample struct {
		plain  string
		ids    []int32
		topics []float32
	}
	var texts []sample
	for _, f := range mf.Files {
		if !strings.HasPrefix(f.Path, "quora/") {
			continue
		}
		r, err := shards.OpenFile(filepath.Join(feat, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		for row, err := range r.All() {
			if err != nil {
				t.Fatal(err)
			}
			if len(texts) < 30 && len(row.IDsA) > 0 && !strings.Contains(row.A, "\n") && slices.Equal(text.Tokenize(row.A, opts), row.TokensA) &&
				slices.ContainsFunc(row.TopicsA, func(v float32) bool { return v != 0 }) {
				texts = append(texts, sample{row.A, slices.Clone(row.IDsA), slices.Clone(row.TopicsA)})
			}
		}
		r.Close()
	}
	if len(texts) < 10 {
		t.Fatalf("%d texts with a topic vector, want at least 10", len(texts))
	}
	var seqs [][]int32
	var ctxs [][]float32
	var stdin strings.Builder
	for _, x := range texts {
		seqs, ctxs = append(seqs, x.ids), append(ctxs, x.topics)
		stdin.WriteString(x.plain + "\n")
	}
	cm := m.(compute.ContextEmbedder)
	want, err := cm.EmbedContext(seqs, ctxs)
	if err != nil {
		t.Fatal(err)
	}
	noCtx, err := cm.EmbedContext(seqs, make([][]float32, len(seqs)))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "embed", "--checkpoint", last, "--format", "json")
	cmd.Stdin = strings.NewReader(stdin.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("embed: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for i := 0; sc.Scan(); i++ {
		var line struct {
			Vector []float32 `json:"vector"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		for u := range line.Vector {
			if d := line.Vector[u] - want[i][u]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("%q: embed gives %v, the shard's ids and topics %v", texts[i].plain, line.Vector[:3], want[i][:3])
			}
		}
	}
	if slices.Equal(want[0], noCtx[0]) {
		t.Errorf("the context does not change the embedding of %q", texts[0].plain)
	}
	code, evalOut, evalErr := runCLI(t, "eval", "run", "--checkpoint", last, "--eval", feat, "--out", t.TempDir())
	if code != 0 {
		t.Errorf("eval run: exit %d\n%s\n%s", code, evalOut, evalErr)
	}
}
