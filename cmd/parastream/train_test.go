package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parastream/parastream/featurize"
	"github.com/parastream/parastream/featurize/lexicon"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep"
)

// writeFeaturized writes n rows of corpus "para", split "train", with
// tokens and ids over a vocabulary of 400 words (404 entries), the
// vocabulary file and the manifest naming it, under a new directory; it
// returns the directory. With buckets > 0, one token in ten is an unseen
// word ("u0" to "u99") with its bucket's id, and a featurize.json records
// the buckets.
func writeFeaturized(t *testing.T, n, buckets int) string {
	return writeFeaturizedCorpora(t, []string{"para"}, []int{n}, buckets)
}

// writeFeaturizedCorpora writes, for each corpus, n rows of its train split
// (ids "<corpus><i>") featurized with one vocabulary and buckets, as one
// featurize run over them all would (see writeFeaturized). Rows of "snli"
// are labelled with the classes 0, 1, 2 in turn, rows of "labelled" with
// 0 and 1 in turn; the others have no label.
func writeFeaturizedCorpora(t *testing.T, corpora []string, ns []int, buckets int) string {
	t.Helper()
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	var counts []featurize.TokenCount
	for i := range 400 {
		counts = append(counts, featurize.TokenCount{Token: fmt.Sprint("w", i), Count: int64(1000 - i), Docs: int64(1000 - i)})
	}
	v, err := featurize.BuildVocabulary(counts, 1000, featurize.VocabConfig{})
	if err != nil {
		t.Fatal(err)
	}
	lex, err := v.Lexicon(buckets)
	if err != nil {
		t.Fatal(err)
	}
	side := func() ([]string, []int32) {
		toks := make([]string, 2+rng.IntN(12))
		for i := range toks {
			toks[i] = fmt.Sprint("w", rng.IntN(400))
			if buckets > 0 && rng.IntN(10) == 0 {
				toks[i] = fmt.Sprint("u", rng.IntN(100))
			}
		}
		ids, _ := lex.AppendIDs(nil, toks)
		return toks, ids
	}
	m := shards.NewManifest([]string{"train_test"})
	for c, corpus := range corpora {
		n := ns[c]
		w, err := shards.NewWriter(root, corpus, "train", shards.WriterOptions{MaxRows: int64(n/2 + 1)})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			r := shards.Row{ID: fmt.Sprint(corpus, i), Corpus: corpus, Dataset: corpus, Split: "train"}
			if corpus == "para" {
				r.ID = fmt.Sprint("row", i)
			}
			r.TokensA, r.IDsA = side()
			r.TokensB, r.IDsB = side()
			switch corpus {
			case "snli":
				r.Label = ptrTo(float64(i % 3))
			case "labelled":
				r.Label = ptrTo(float64(i % 2))
			}
			r.A, r.B = strings.Join(r.TokensA, " "), strings.Join(r.TokensB, " ")
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		infos, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		m.AddSplit(corpus, "train", infos...)
	}
	var buf bytes.Buffer
	if _, err := v.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "featurize"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "featurize", "vocab.tsv"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := shards.NewArtifact(root, "featurize/vocab.tsv", int64(v.Len()))
	if err != nil {
		t.Fatal(err)
	}
	m.Vocabulary = &a
	if buckets > 0 {
		info := fmt.Sprintf(`{"format": "parastream-featurize", "version": 1, "oov_buckets": %d, "oov_hash": %q}`, buckets, lexicon.Hash)
		if err := os.WriteFile(filepath.Join(root, "featurize", "featurize.json"), []byte(info), 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := shards.NewArtifact(root, "featurize/featurize.json", 0)
		if err != nil {
			t.Fatal(err)
		}
		m.Featurize = &a
	}
	if err := shards.WriteManifest(root, m); err != nil {
		t.Fatal(err)
	}
	return root
}

// lastTracedStep is the step of the trace's last complete line (0 when
// there is none).
func lastTracedStep(path string) int64 {
	data, _ := os.ReadFile(path)
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	step, _, _ := bytes.Cut(lines[len(lines)-1], []byte("\t"))
	n, _ := strconv.ParseInt(string(step), 10, 64)
	return n
}

// TestTrainKilledAndResumedExactlyOnce runs `parastream train` against a
// `parastream broker`, SIGKILLs it mid-epoch once it has written a
// checkpoint and trained past it, and resumes it from its last checkpoint.
// The trainer's ids trace has a line "<step> <epoch> <row id>" per trained
// example: the first process's lines of steps after the resumed checkpoint
// are the lost work, which the resumed process trains again. Without them,
// every row of the epoch is trained exactly once. The final checkpoint then
// embeds and exports.
func TestTrainKilledAndResumedExactlyOnce(t *testing.T) {
	bin := binary(t)
	const rows = 6000
	root := writeFeaturized(t, rows, 50)
	ctx, b := publishedBroker(t, bin, root)

	dir, trace := filepath.Join(t.TempDir(), "ck"), filepath.Join(t.TempDir(), "ids.tsv")
	before, resumedAt := trainAndKill(ctx, t, bin, dir, trace, rows/20, "train", "--brokers", b.addr, "--dataset", "para", "--run", "crash",
		"--model", "avg", "--dim", "32", "--batch", "20", "--epochs", "1", "--checkpoint-dir", dir, "--checkpoint-every", "20",
		"--window", "4", "--shuffle-buffer", "500", "--trace-ids", trace)

	out, err := exec.CommandContext(ctx, bin, "train", "--brokers", b.addr, "--dataset", "para", "--resume", dir,
		"--epochs", "1", "--checkpoint-every", "20", "--window", "4", "--shuffle-buffer", "500", "--trace-ids", trace, "--quiet").CombinedOutput()
	if err != nil {
		t.Fatalf("resumed train: %v\n%s", err, out)
	}
	t.Logf("resumed: %s", out)
	if !regexp.MustCompile(`(?m)^run crash: of [0-9.]+ s, the loop waited [0-9.]+ s for the feed and [0-9.]+ s in checkpoints$`).Match(out) {
		t.Errorf("no line of the loop's waits in the summary:\n%s", out)
	}

	count := map[string]int{}
	for _, f := range tracedLines(t, trace, before, resumedAt, func(f []string) bool { return len(f) == 3 && f[1] == "1" }) {
		count[f[2]]++
	}
	for id, n := range count {
		if n != 1 {
			t.Errorf("row %s trained %d times", id, n)
		}
	}
	if len(count) != rows {
		t.Errorf("%d rows trained, want %d", len(count), rows)
	}
	t.Logf("%d rows trained exactly once across the crash", len(count))

	// The final checkpoint embeds sentences and exports.
	final, err := trainstep.LatestCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The new run took the buckets from the published featurize.json; the
	// resumed run kept them.
	if ck, err := trainstep.ReadCheckpoint(final); err != nil || ck.Config.OOVBuckets != 50 || ck.Config.Vocab != 454 {
		t.Fatalf("final checkpoint: %v; want 50 buckets after the 404 words", err)
	}
	embed := exec.CommandContext(ctx, bin, "embed", "--checkpoint", dir)
	embed.Stdin = strings.NewReader("w1 w2 w3\nW5 unknownword\n\nW5 u7\n")
	vecs, err := embed.Output()
	if err != nil {
		t.Fatalf("embed: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(vecs), "\n"), "\n")
	if len(lines) != 4 || len(strings.Fields(lines[0])) != 32 || lines[0] == lines[1] || lines[1] == lines[3] {
		t.Errorf("embed wrote %q, want 4 lines of 32 numbers, the first two and the second and fourth different", vecs)
	}
	glove := filepath.Join(t.TempDir(), "vectors.txt")
	if out, err := exec.CommandContext(ctx, bin, "export", "--checkpoint", final, "--format", "glove", "--out", glove).CombinedOutput(); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	vectors, err := trainstep.LoadVectors(glove)
	if err != nil || vectors.Dim != 32 || len(vectors.Words) != 404 {
		t.Fatalf("exported vectors: %v; want 404 words of 32", err)
	}
	st := filepath.Join(t.TempDir(), "model.safetensors")
	if out, err := exec.CommandContext(ctx, bin, "export", "--checkpoint", final, "--format", "safetensors", "--out", st).CombinedOutput(); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	data, err := os.ReadFile(st)
	if err != nil {
		t.Fatal(err)
	}
	// The GloVe text holds the 404 words (above); safetensors the whole
	// table, buckets included.
	if ts, meta, err := trainstep.ReadSafetensors(data); err != nil || len(ts) != 1 || ts[0].Name != "embeddings" || !slices.Equal(ts[0].Shape, []int{454, 32}) ||
		!strings.Contains(meta["vocab"], `"w399"`) || !strings.Contains(meta["config"], `"oov_buckets":50`) {
		t.Errorf("exported safetensors: %v, %d tensors, metadata keys %d", err, len(ts), len(meta))
	}
}

// publishedBroker starts a `parastream broker` and publishes the shards of
// root to it in messages of 100 rows; the context ends the test's commands
// after 2 minutes.
func publishedBroker(t *testing.T, bin, root string) (context.Context, *brokerProc) {
	t.Helper()
	b := startBrokerProc(t, bin, "127.0.0.1:0", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	if out, err := exec.CommandContext(ctx, bin, "publish", "--shards", root, "--brokers", b.addr, "--batch-rows", "100", "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("publish: %v\n%s", err, out)
	}
	return ctx, b
}

// trainAndKill runs `parastream train` with args, SIGKILLs it once it has
// written a checkpoint in dir and traced 7 steps past it (before step
// epochSteps, the end of its epoch), and cuts the trace back to whole lines.
// It returns the trace as the killed process left it and the step of the
// checkpoint to resume from: the trace's lines of later steps are lost work.
func trainAndKill(ctx context.Context, t *testing.T, bin, dir, trace string, epochSteps int64, args ...string) (before []byte, resumedAt int64) {
	t.Helper()
	train := exec.CommandContext(ctx, bin, args...)
	train.Stderr = os.Stderr
	if err := train.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- train.Wait() }()
	var ckStep int64 = -1
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case err := <-done:
			t.Fatalf("the trainer ended (%v) before it could be killed after a checkpoint", err)
		case <-tick.C:
			if ck, err := trainstep.LatestCheckpoint(dir); err == nil && ckStep < 0 {
				ckStep, _ = strconv.ParseInt(strings.TrimPrefix(filepath.Base(ck), "step-"), 10, 64)
			}
			if ckStep > 0 && lastTracedStep(trace) >= ckStep+7 {
				train.Process.Signal(syscall.SIGKILL)
				break wait
			}
		}
	}
	<-done
	if ws, ok := train.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("trainer: %v, want killed by SIGKILL", train.ProcessState)
	}
	before, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	before = before[:bytes.LastIndexByte(before, '\n')+1] // a line cut by the kill is of lost work
	last, err := trainstep.LatestCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := trainstep.ReadCheckpoint(last)
	if err != nil {
		t.Fatal(err)
	}
	resumedAt = ck.State.Step
	killedAt := lastTracedStep(trace)
	t.Logf("killed at step %d; resuming from %s (step %d): steps %d to %d are lost work", killedAt, last, resumedAt, resumedAt+1, killedAt)
	if killedAt >= epochSteps {
		t.Fatalf("killed at step %d: the epoch (%d steps) was over", killedAt, epochSteps)
	}
	if err := os.WriteFile(trace, before, 0o644); err != nil {
		t.Fatal(err)
	}
	return before, resumedAt
}

// TestTrainMixKilledAndResumedExactlyOnce mixes two datasets featurized
// together in one `parastream train --dataset alpha,beta` run, SIGKILLs it
// mid-epoch after a checkpoint, and resumes it: every row of each dataset
// is trained exactly once in the epoch, and the trace names each row's
// dataset.
func TestTrainMixKilledAndResumedExactlyOnce(t *testing.T) {
	bin := binary(t)
	const na, nb = 3000, 1500
	root := writeFeaturizedCorpora(t, []string{"alpha", "beta"}, []int{na, nb}, 0)
	ctx, b := publishedBroker(t, bin, root)
	dir, trace := filepath.Join(t.TempDir(), "ck"), filepath.Join(t.TempDir(), "ids.tsv")
	flags := []string{"--brokers", b.addr, "--dataset", "alpha,beta", "--epochs", "1", "--checkpoint-every", "20", "--window", "4",
		"--shuffle-buffer", "500", "--trace-ids", trace}
	before, resumedAt := trainAndKill(ctx, t, bin, dir, trace, (na+nb)/20,
		append([]string{"train", "--run", "mix", "--model", "avg", "--dim", "16", "--batch", "20", "--checkpoint-dir", dir}, flags...)...)
	out, err := exec.CommandContext(ctx, bin, append([]string{"train", "--resume", dir, "--quiet"}, flags...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("resumed train: %v\n%s", err, out)
	}
	t.Logf("resumed: %s", out)
	count := map[string]map[string]int{}
	for _, f := range tracedLines(t, trace, before, resumedAt, mixLine) {
		if count[f[3]] == nil {
			count[f[3]] = map[string]int{}
		}
		count[f[3]][f[2]]++
	}
	for ds, n := range map[string]int{"alpha": na, "beta": nb} {
		if len(count[ds]) != n {
			t.Errorf("%s: %d rows trained, want %d", ds, len(count[ds]), n)
		}
		for id, k := range count[ds] {
			if k != 1 {
				t.Errorf("%s: row %s trained %d times", ds, id, k)
			}
		}
	}
	t.Logf("alpha %d and beta %d rows trained exactly once across the crash", len(count["alpha"]), len(count["beta"]))
}

// tracedLines reads the ids trace of a run killed and resumed (see
// trainAndKill): the fields of each line of kept work, each line checked by
// valid (a mistake: the test fails), and the count of lines of lost work
// (the killed process's lines of steps after resumedAt), which it fails on
// when there are none: the kill came right at a checkpoint, and the test
// would prove less than it should.
func tracedLines(t *testing.T, trace string, before []byte, resumedAt int64, valid func(f []string) bool) (kept [][]string) {
	t.Helper()
	all, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	sc := bufio.NewScanner(bytes.NewReader(all))
	for at := 0; sc.Scan(); at += len(sc.Bytes()) + 1 {
		f := strings.Split(sc.Text(), "\t")
		step, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || !valid(f) {
			t.Fatalf("trace line %q", sc.Text())
		}
		if at < len(before) && step > resumedAt {
			lost++
			continue
		}
		kept = append(kept, f)
	}
	if lost == 0 {
		t.Errorf("no lost work: the kill came right at a checkpoint, the test proves less than it should")
	}
	t.Logf("%d trace lines of lost work dropped", lost)
	return kept
}

// mixLine says whether trace fields are a mix's first-epoch line: step,
// epoch 1, id, the id's dataset (its prefix), pass 1.
func mixLine(f []string) bool {
	return len(f) == 5 && f[1] == "1" && f[4] == "1" && strings.HasPrefix(f[2], f[3])
}

func ptrTo[T any](v T) *T { return &v }

// TestTrainMultitaskKilledAndResumedExactlyOnce trains a pairs dataset and
// an NLI dataset in one run (`--dataset labelled,snli`, issue 23's
// multitask training), SIGKILLs it mid-epoch after a checkpoint and
// resumes it: every row of each dataset is trained exactly once (the NLI
// rows all of them, --min-label filtering only the pairs dataset), the
// progress reports the NLI head's loss, and the final checkpoint holds
// the head.
func TestTrainMultitaskKilledAndResumedExactlyOnce(t *testing.T) {
	bin := binary(t)
	const nl, ns = 3000, 1200
	root := writeFeaturizedCorpora(t, []string{"labelled", "snli"}, []int{nl, ns}, 0)
	ctx, b := publishedBroker(t, bin, root)
	dir, trace := filepath.Join(t.TempDir(), "ck"), filepath.Join(t.TempDir(), "ids.tsv")
	flags := []string{"--brokers", b.addr, "--dataset", "labelled,snli", "--epochs", "1", "--checkpoint-every", "20", "--window", "4",
		"--shuffle-buffer", "500", "--trace-ids", trace}
	before, resumedAt := trainAndKill(ctx, t, bin, dir, trace, (nl/2+ns)/20,
		append([]string{"train", "--run", "multitask", "--model", "avg", "--dim", "16", "--batch", "20", "--min-label", "1", "--nli-hidden", "12",
			"--checkpoint-dir", dir}, flags...)...)
	out, err := exec.CommandContext(ctx, bin, append([]string{"train", "--resume", dir, "--progress-every", "1ms"}, flags...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("resumed train: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), " nli loss ") {
		t.Errorf("the resumed run's progress gives no NLI loss:\n%s", out)
	}
	count := map[string]map[string]int{}
	steps := map[string]map[string]bool{}
	for _, f := range tracedLines(t, trace, before, resumedAt, mixLine) {
		if count[f[3]] == nil {
			count[f[3]], steps[f[3]] = map[string]int{}, map[string]bool{}
		}
		count[f[3]][f[2]]++
		steps[f[3]][f[0]] = true
	}
	for ds, n := range map[string]int{"labelled": nl / 2, "snli": ns} {
		if len(count[ds]) != n {
			t.Errorf("%s: %d rows trained, want %d", ds, len(count[ds]), n)
		}
		for id, k := range count[ds] {
			if k != 1 {
				t.Errorf("%s: row %s trained %d times", ds, id, k)
			}
		}
	}
	for step := range steps["snli"] {
		if steps["labelled"][step] {
			t.Errorf("step %s trained rows of both datasets: a batch is of one kind", step)
		}
	}
	final, err := trainstep.LatestCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := trainstep.ReadCheckpoint(final)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Config.NLIHidden != 12 {
		t.Errorf("final checkpoint: nli_hidden %d, want 12", ck.Config.NLIHidden)
	}
	heads := 0
	for _, p := range ck.Params {
		if strings.HasPrefix(p.Name, "nli.") {
			heads++
		}
	}
	if heads != 4 {
		t.Errorf("final checkpoint: %d NLI head tensors, want 4", heads)
	}
	t.Logf("labelled %d and snli %d rows trained exactly once across the crash, in %d and %d steps",
		len(count["labelled"]), len(count["snli"]), len(steps["labelled"]), len(steps["snli"]))
}
