package trainstep_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
)

// TestReadRunConfigOldFiles: run.json files written before RunConfig was
// what run.json holds (testdata/runjson: a mix, a resumed run, the demo's
// run without flags) read back into RunConfig, and a RunConfig written
// again is the same file, byte for byte.
func TestReadRunConfigOldFiles(t *testing.T) {
	for _, c := range []struct {
		file  string
		check func(*trainstep.RunConfig) bool
	}{
		{"mix.json", func(r *trainstep.RunConfig) bool {
			return r.Run == "m" && r.Dataset == "moses,reddit" && fmt.Sprint(r.Datasets) == "[moses reddit]" && r.Mix["moses"] == 22 &&
				r.Epochs == 3 && r.CheckpointEvery == 7 && len(r.Client.Brokers) == 1 && r.Flags["model"] == "avg" && r.Tokenize.Lower
		}},
		{"resumed.json", func(r *trainstep.RunConfig) bool {
			return r.Run == "b" && r.Resume == "/runs/ck-lstm/step-00000015" && r.Flags["model"] == "lstmavg" && r.Flags["max-steps"] == "10"
		}},
		{"noflags.json", func(r *trainstep.RunConfig) bool {
			return r.Run == "demo-avg-moses" && r.Flags == nil && r.Epochs == 300 && r.ShuffleBuffer == 1000 && r.Window == 20 && r.Prefix == "parastream"
		}},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "runjson", c.file))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, trainstep.FileRun), data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := trainstep.ReadRunConfig(dir)
		if err != nil || r == nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if !c.check(r) {
			t.Errorf("%s: read %+v", c.file, r)
		}
		again, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if again = append(again, '\n'); !bytes.Equal(again, data) {
			t.Errorf("%s written again:\n%s\nwant:\n%s", c.file, again, data)
		}
	}
	if r, err := trainstep.ReadRunConfig(t.TempDir()); r != nil || err != nil {
		t.Errorf("a checkpoint without run.json: %+v, %v", r, err)
	}
}

// TestRunConfigKeepsNoSecret: run.json keeps the brokers of the client
// configuration, never its password.
func TestRunConfigKeepsNoSecret(t *testing.T) {
	data, err := json.Marshal(trainstep.RunConfig{Client: stream.ClientConfig{Brokers: []string{"k:9092"}, SASLMechanism: stream.SASLPlain, SASLUser: "u", SASLPassword: "secret"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); strings.Contains(s, "secret") || !strings.Contains(s, `"brokers":["k:9092"]`) {
		t.Errorf("run.json %s", s)
	}
}

// TestRunReadsEachManifestOnce: a run reads each dataset's manifest from
// Kafka once, new or resumed, one dataset or a mix, and the vocabulary
// and the consumers take it from there.
func TestRunReadsEachManifestOnce(t *testing.T) {
	vocab := "#texts\t0\n"
	for _, w := range mixVocab() {
		vocab += w + "\t1\t1\n"
	}
	cc := publishDatasets(t, []testDataset{{"alpha", mixRows("a", 60, 1), vocab}, {"beta", mixRows("b", 40, 2), vocab}})
	var mu sync.Mutex
	reads := map[string]int{}
	counting := func(ctx context.Context, cc stream.ClientConfig, prefix, dataset string) (*shards.Manifest, error) {
		mu.Lock()
		reads[dataset]++
		mu.Unlock()
		return stream.ReadManifest(ctx, cc, prefix, dataset)
	}
	for _, c := range []struct {
		name     string
		datasets []string
		vocab    []string
	}{
		{"one dataset, the vocabulary fetched", []string{"alpha"}, nil},
		{"a mix, the vocabulary fetched", []string{"alpha", "beta"}, nil},
		{"a mix, the vocabulary given", []string{"alpha", "beta"}, mixVocab()},
	} {
		dir := t.TempDir()
		cfg := trainstep.RunConfig{Client: cc, Datasets: c.datasets, Epochs: 1, Vocab: c.vocab, CheckpointDir: dir,
			Model: trainstep.Config{Dim: 8, BatchSize: 10}, MaxSteps: 3}
		for _, resume := range []bool{false, true} {
			if resume {
				cfg = trainstep.RunConfig{Client: cc, Datasets: c.datasets, Epochs: 1, Resume: dir, MaxSteps: 2}
			}
			clear(reads)
			if _, err := trainstep.Run(context.Background(), trainstep.WithManifestReader(cfg, counting)); err != nil {
				t.Fatalf("%s (resumed %v): %v", c.name, resume, err)
			}
			for _, d := range c.datasets {
				if reads[d] != 1 {
					t.Errorf("%s (resumed %v): the manifest of %s read %d times, want once", c.name, resume, d, reads[d])
				}
			}
			if len(reads) != len(c.datasets) {
				t.Errorf("%s (resumed %v): manifests read %v", c.name, resume, reads)
			}
		}
	}
}

// TestRunConsumerTakesTheManifestRead: the consumer of a run trains from
// the manifest the run read (here one counting a row less than published,
// which the consumer notes at the epoch's end), not one it read again.
func TestRunConsumerTakesTheManifestRead(t *testing.T) {
	cc := publishDatasets(t, []testDataset{{"alpha", mixRows("a", 60, 1), "#texts\t0\n"}})
	less := func(ctx context.Context, cc stream.ClientConfig, prefix, dataset string) (*shards.Manifest, error) {
		m, err := stream.ReadManifest(ctx, cc, prefix, dataset)
		if err != nil {
			return nil, err
		}
		c := *m
		c.Splits = maps.Clone(m.Splits)
		key := shards.SplitKey(dataset, "train")
		si := c.Splits[key]
		si.Rows--
		c.Splits[key] = si
		return &c, nil
	}
	var log bytes.Buffer
	cfg := trainstep.RunConfig{Client: cc, Dataset: "alpha", Epochs: 1, Vocab: mixVocab(), CheckpointDir: t.TempDir(),
		Model: trainstep.Config{Dim: 8, BatchSize: 10}, Logger: slog.New(slog.NewTextHandler(&log, nil))}
	if _, err := trainstep.Run(context.Background(), trainstep.WithManifestReader(cfg, less)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "more rows than the manifest's") {
		t.Errorf("the consumer did not train from the manifest the run read; log:\n%s", log.String())
	}
}
