package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
)

// startBroker starts an in-memory embedded broker for the test.
func startBroker(t *testing.T) string {
	t.Helper()
	b, err := stream.StartBroker(context.Background(), stream.BrokerConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b.Addr()
}

// topics lists the broker's topics, with a kafka-go client of its own.
func topics(t *testing.T, addr string) []string {
	t.Helper()
	c := &kafka.Client{Addr: kafka.TCP(addr), Transport: &kafka.Transport{}}
	meta, err := c.Metadata(context.Background(), &kafka.MetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tp := range meta.Topics {
		names = append(names, tp.Name)
	}
	return names
}

// TestPublishCorruptShardPublishesNothing: one flipped byte in one shard
// makes `parastream publish` exit non-zero naming the shard, with no topic
// created (the manifests topic included) and nothing written.
func TestPublishCorruptShardPublishesNothing(t *testing.T) {
	root := writeShards(t, 3000, 1000)
	shard := filepath.Join(root, "sts", "train", "part-00001-of-00003.parquet")
	data, err := os.ReadFile(shard)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(shard, data, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := startBroker(t)
	code, _, stderr := runCLI(t, "publish", "--shards", root, "--brokers", addr, "--quiet")
	if code == 0 || !strings.Contains(stderr, "sts/train/part-00001-of-00003.parquet") || !strings.Contains(stderr, "nothing was published") {
		t.Fatalf("publish: exit %d, stderr %q; want a failure naming the shard", code, stderr)
	}
	if names := topics(t, addr); len(names) != 0 {
		t.Errorf("topics after the failed publish: %q, want none", names)
	}
}

// copyTopic copies the first max messages of each partition of topic from
// (all of them when max < 0) to a new topic to, with as many partitions.
func copyTopic(t *testing.T, addr, from, to string, max int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := kafka.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	parts, err := conn.ReadPartitions(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.CreateTopics(kafka.TopicConfig{Topic: to, NumPartitions: len(parts), ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: to, Transport: &kafka.Transport{}, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	for _, p := range parts {
		lc, err := kafka.DialLeader(ctx, "tcp", addr, from, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		first, last, err := lc.ReadOffsets()
		if err != nil {
			t.Fatal(err)
		}
		var msgs []kafka.Message
		for off := first; off < last && (max < 0 || len(msgs) < max); {
			lc.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := lc.Seek(off, kafka.SeekAbsolute); err != nil {
				t.Fatal(err)
			}
			batch := lc.ReadBatch(1, 64<<20)
			for max < 0 || len(msgs) < max {
				m, err := batch.ReadMessage()
				if err != nil {
					break
				}
				msgs = append(msgs, kafka.Message{Key: m.Key, Value: m.Value, Headers: m.Headers})
				off = m.Offset + 1
			}
			if err := batch.Close(); err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
		}
		lc.Close()
		w.Balancer = kafka.BalancerFunc(func(kafka.Message, ...int) int { return p.ID })
		if len(msgs) > 0 {
			if err := w.WriteMessages(ctx, msgs...); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestConsumeAndTrainFailWithoutRows: a dataset whose manifest (and
// vocabulary) is on the topics but whose rows never were, or only partly,
// makes `consume` and `train` exit non-zero saying what is missing and how
// to publish again; train writes no checkpoint.
func TestConsumeAndTrainFailWithoutRows(t *testing.T) {
	root := writeFeaturized(t, 400, 0)
	addr := startBroker(t)
	if code, _, stderr := runCLI(t, "publish", "--shards", root, "--brokers", addr, "--topic-prefix", "full", "--batch-rows", "50", "--quiet"); code != 0 {
		t.Fatalf("publish: %s", stderr)
	}
	for _, prefix := range []string{"norows", "partial", "notopic"} {
		copyTopic(t, addr, "full.manifests", prefix+".manifests", -1)
		copyTopic(t, addr, "full.artifacts", prefix+".artifacts", -1)
	}
	copyTopic(t, addr, "full.para.train", "norows.para.train", 0)
	copyTopic(t, addr, "full.para.train", "partial.para.train", 1)

	for prefix, want := range map[string]string{
		"norows":  "ended with 0 of the 400 rows",
		"partial": "of the 400 rows",
		"notopic": "topic notopic.para.train does not exist",
	} {
		code, _, stderr := runCLI(t, "consume", "--brokers", addr, "--topic-prefix", prefix, "--dataset", "para", "--n", "0", "--quiet")
		if code == 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "parastream publish --shards DIR --dataset para --topic-prefix "+prefix) {
			t.Errorf("consume %s: exit %d, stderr %q; want a failure saying %q and how to publish again", prefix, code, stderr, want)
		}
		dir := filepath.Join(t.TempDir(), "ck")
		code, _, stderr = runCLI(t, "train", "--brokers", addr, "--topic-prefix", prefix, "--dataset", "para", "--run", prefix,
			"--dim", "8", "--batch", "20", "--checkpoint-dir", dir, "--quiet")
		if code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("train %s: exit %d, stderr %q; want a failure saying %q", prefix, code, stderr, want)
		}
		if prefix != "partial" {
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("train %s: %d entries in the checkpoint directory, want none", prefix, len(entries))
			}
		}
		t.Logf("%s: %s", prefix, strings.TrimSpace(stderr))
	}
}

// runInfo reads run.json and config.json of the newest checkpoint in dir.
func runInfo(t *testing.T, dir string) (string, *trainstep.RunConfig, trainstep.Config) {
	t.Helper()
	ck, err := trainstep.LatestCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := trainstep.ReadRunConfig(ck)
	if err != nil || info == nil {
		t.Fatalf("run.json of %s: %v", ck, err)
	}
	c, err := trainstep.ReadCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Base(ck), info, c.Config
}

// TestTrainResumeIsTheRun: `train --resume DIR` with no other flag
// continues the run with every flag it was started with (run.json and
// config.json compared before and after); a flag that would change the
// model is refused, one that is safe to change overrides with a line; a
// corrupt newest checkpoint is passed over with a warning naming it, and
// named as an error when it is given itself.
func TestTrainResumeIsTheRun(t *testing.T) {
	addr := publishedRows(t, 400)
	dir := filepath.Join(t.TempDir(), "ck")
	code, _, stderr := runCLI(t, "train", "--brokers", addr, "--dataset", "para", "--run", "kept", "--model", "avg", "--dim", "12",
		"--batch", "20", "--lr", "0.003", "--seed", "7", "--epochs", "3", "--checkpoint-every", "4", "--max-steps", "6",
		"--window", "2", "--shuffle-buffer", "100", "--checkpoint-dir", dir, "--keep-optimizer", "10", "--quiet") // every checkpoint resumable: the test resumes older ones
	if code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	ck1, before, cfg1 := runInfo(t, dir)
	if ck1 != "step-00000006" || before.Epochs != 3 || before.CheckpointEvery != 4 || before.Flags["lr"] != "0.003" {
		t.Fatalf("%s: run.json %+v", ck1, before)
	}

	if code, _, stderr = runCLI(t, "train", "--resume", dir); code != 0 {
		t.Fatalf("resume: %s", stderr)
	}
	ck2, after, cfg2 := runInfo(t, dir)
	if ck2 != "step-00000012" {
		t.Errorf("resumed run ended at %s, want step-00000012 (--max-steps 6 again)", ck2)
	}
	if _, err := os.Stat(filepath.Join(dir, "step-00000010")); err != nil {
		t.Errorf("no checkpoint at step 10 (--checkpoint-every 4 after step 6): %v", err)
	}
	if after.Epochs != 3 || after.CheckpointEvery != 4 || after.Window != 2 || after.ShuffleBuffer != 100 || after.Run != "kept" {
		t.Errorf("run.json after the resume: %+v", after)
	}
	for name, v := range before.Flags {
		if after.Flags[name] != v {
			t.Errorf("--%s: %q before the resume, %q after", name, v, after.Flags[name])
		}
	}
	if len(after.Flags) != len(before.Flags) {
		t.Errorf("%d flags kept after the resume, %d before", len(after.Flags), len(before.Flags))
	}
	if !reflect.DeepEqual(cfg1, cfg2) {
		t.Errorf("config.json changed: %+v, then %+v", cfg1, cfg2)
	}
	if _, ok := after.Flags["sasl-password"]; ok {
		t.Error("run.json keeps the SASL password")
	}

	code, _, stderr = runCLI(t, "train", "--resume", dir, "--lr", "0.1", "--dim", "12")
	if code != 2 || !strings.Contains(stderr, "--lr 0.1") || !strings.Contains(stderr, "0.003") || strings.Contains(stderr, "--dim 12") {
		t.Errorf("resume with another --lr: exit %d, stderr %q; want it refused (exit 2), --dim (the same) accepted", code, stderr)
	}
	t.Logf("another --lr: %s", stderr)
	code, _, stderr = runCLI(t, "train", "--resume", dir, "--epochs", "4", "--max-steps", "2")
	if code != 0 || !strings.Contains(stderr, "--epochs 4 overrides the run's 3") || !strings.Contains(stderr, "--max-steps 2 overrides the run's 6") {
		t.Fatalf("resume with --epochs 4: exit %d, stderr %q", code, stderr)
	}
	if ck, info, _ := runInfo(t, dir); ck != "step-00000014" || info.Epochs != 4 {
		t.Errorf("%s: epochs %d, want step-00000014 and 4", ck, info.Epochs)
	}

	// The newest checkpoint corrupt: one byte of its parameters flipped.
	newest := filepath.Join(dir, "step-00000014")
	model := filepath.Join(newest, trainstep.FileModel)
	data, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-3] ^= 1
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "train", "--resume", dir, "--max-steps", "1")
	if code != 0 || !strings.Contains(stderr, "passing over the corrupt checkpoint "+newest) || !strings.Contains(stderr, "resuming from "+filepath.Join(dir, "step-00000012")) {
		t.Fatalf("resume past a corrupt checkpoint: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "step-00000013")); err != nil {
		t.Errorf("no checkpoint of step 13 after resuming from step 12: %v", err)
	}
	t.Logf("past a corrupt checkpoint: %s", stderr)
	code, _, stderr = runCLI(t, "train", "--resume", newest)
	if code == 0 || !strings.Contains(stderr, newest) || !strings.Contains(stderr, "sha256") {
		t.Errorf("resume from the corrupt checkpoint itself: exit %d, stderr %q; want an error naming it", code, stderr)
	}
	t.Logf("the corrupt checkpoint itself: %s", stderr)

	// A checkpoint without sha256sums.txt (written before it) with a file
	// missing is passed over too.
	os.RemoveAll(newest)
	step13 := filepath.Join(dir, "step-00000013")
	os.Remove(filepath.Join(step13, trainstep.FileSums))
	os.Remove(filepath.Join(step13, trainstep.FileOptimizer))
	code, _, stderr = runCLI(t, "train", "--resume", dir, "--max-steps", "1")
	if code != 0 || !strings.Contains(stderr, "passing over the corrupt checkpoint "+step13) || !strings.Contains(stderr, trainstep.FileOptimizer) {
		t.Errorf("resume past a checkpoint missing a file: exit %d, stderr %q", code, stderr)
	}
}

// TestOutRefused: --out refuses the root, the home directory and a
// directory of someone else's files before anything runs.
func TestOutRefused(t *testing.T) {
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(t.TempDir(), "quora.tsv")
	if err := os.WriteFile(input, []byte("id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"extract", "--corpus", "quora", "--input", input, "--out", "/"},
		{"extract", "--corpus", "quora", "--input", input, "--out", foreign},
		{"featurize", "--in", foreign, "--out", "/"},
		{"demo", "--out", foreign},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != 2 || !strings.Contains(stderr, "output directory refused") {
			t.Errorf("%q: exit %d, stderr %q; want --out refused", args, code, stderr)
		}
		if entries, _ := os.ReadDir(foreign); len(entries) != 1 {
			t.Errorf("%q: %d entries in the foreign directory, want its one file", args, len(entries))
		}
	}
}
