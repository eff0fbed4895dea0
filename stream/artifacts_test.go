package stream_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
)

// writeModelFiles writes a vocabulary of about vocabBytes bytes and a small
// featurize record under root/featurize, and lists them in the manifest.
func writeModelFiles(t *testing.T, root string, vocabBytes int) map[string][]byte {
	t.Helper()
	var vocab bytes.Buffer
	rng := rand.New(rand.NewPCG(3, 4))
	vocab.WriteString("#texts\t1000\n")
	for i := 0; vocab.Len() < vocabBytes; i++ {
		fmt.Fprintf(&vocab, "w%d-%x\t%d\t%d\n", i, rng.Uint64(), 1000-i%1000, 1+i%500)
	}
	files := map[string][]byte{
		"featurize/vocab.tsv":      vocab.Bytes(),
		"featurize/featurize.json": []byte(`{"weighting": "tfidf", "k": 8}` + "\n"),
	}
	if err := os.MkdirAll(filepath.Join(root, "featurize"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, data := range files {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := shards.ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	v, err := shards.NewArtifact(root, "featurize/vocab.tsv", 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := shards.NewArtifact(root, "featurize/featurize.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	m.Vocabulary, m.Featurize = &v, &f
	if err := shards.WriteManifest(root, m); err != nil {
		t.Fatal(err)
	}
	return files
}

// artifactMessages counts the messages of the artifacts topic.
func artifactMessages(t *testing.T, ctx context.Context, addr string) int64 {
	t.Helper()
	conn, err := kafka.DialLeader(ctx, "tcp", addr, stream.ArtifactTopic(stream.DefaultPrefix), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	first, last, err := conn.ReadOffsets()
	if err != nil {
		t.Fatal(err)
	}
	return last - first
}

// TestArtifactsTravelOnKafka publishes a dataset whose vocabulary is
// larger than a message, reads every model file back through the brokers
// alone, publishes again (nothing is written twice), and checks that a
// corrupted chunk is caught by the manifest's sha256.
func TestArtifactsTravelOnKafka(t *testing.T) {
	root := t.TempDir()
	writeDataset(t, root, "sts", map[string]int{"train": 300}, 1000)
	files := writeModelFiles(t, root, 3<<20)
	b := startBroker(t, "")
	ctx := context.Background()
	cc := stream.ClientConfig{Brokers: []string{b.Addr()}}
	if _, err := stream.Publish(ctx, root, publishConfig(t, b)); err != nil {
		t.Fatal(err)
	}
	for p, want := range files {
		got, err := stream.ReadArtifact(ctx, cc, "", "sts", p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: read back %d bytes, published %d, not the same", p, len(got), len(want))
		}
	}
	n := artifactMessages(t, ctx, b.Addr())
	if n < 4 {
		t.Errorf("%d artifact messages: a 3 MiB vocabulary under a 1 MiB message limit takes at least 3 chunks, plus featurize.json", n)
	}

	if _, err := stream.Publish(ctx, root, publishConfig(t, b)); err != nil {
		t.Fatal(err)
	}
	if again := artifactMessages(t, ctx, b.Addr()); again != n {
		t.Errorf("publishing again wrote %d more artifact messages, want none", again-n)
	}

	if _, err := stream.ReadArtifact(ctx, cc, "", "sts", "featurize/topics.safetensors"); !errors.Is(err, stream.ErrArtifact) {
		t.Errorf("an artifact the manifest does not list: %v, want ErrArtifact", err)
	}
	if _, err := stream.ReadArtifact(ctx, cc, "", "nosuch", "featurize/vocab.tsv"); !errors.Is(err, stream.ErrNoManifest) {
		t.Errorf("a dataset never published: %v, want ErrNoManifest", err)
	}

	// A later message for chunk 1 with the right headers and other bytes.
	m, err := shards.ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	w := &kafka.Writer{Addr: kafka.TCP(b.Addr()), RequiredAcks: kafka.RequireAll, BatchBytes: 2 << 20, Transport: newTransport(t)}
	defer w.Close()
	err = w.WriteMessages(ctx, kafka.Message{
		Topic: stream.ArtifactTopic(stream.DefaultPrefix), Key: []byte("sts/featurize/vocab.tsv#1"),
		Value: bytes.Repeat([]byte("x"), 1000),
		Headers: []kafka.Header{
			{Key: stream.HeaderArtifactSHA256, Value: []byte(m.Vocabulary.SHA256)},
			{Key: stream.HeaderArtifactChunk, Value: []byte(fmt.Sprintf("1/%d", n-1))},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.ReadArtifact(ctx, cc, "", "sts", "featurize/vocab.tsv"); !errors.Is(err, stream.ErrChecksum) {
		t.Errorf("a corrupted chunk: %v, want ErrChecksum", err)
	} else {
		t.Logf("corrupted chunk: %v", err)
	}
}
