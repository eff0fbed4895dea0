package evalsink_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/internal/evaltest"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/transforms/text"
)

// exportSentences are lines whose tokenisation the exported tokenizer must
// reproduce: clitics, abbreviations, numbers, inner punctuation, URLs.
var exportSentences = []string{
	"A man with a hard hat is dancing.",
	"I don't think they'll come; John's car isn't here.",
	"Mr. Smith met Dr. Jones in the U.S. at 12:30 on 10/17/01.",
	"State-of-the-art models cost $5,000 (or 50%) -- really?!",
	"See http://example.org/a_b, or write to someone@example.com.",
	"O'clock AT&T e.g. node.js 3.14 and/or ... !!!",
	"Unseen zyzzyva words here",
}

// staticCheckpoint saves a small avg checkpoint over the sentences' words
// (less a few, to have unseen ones).
func staticCheckpoint(t *testing.T) string {
	vocab := []string{"<pad>", "<unk>", "<s>", "</s>"}
	for _, s := range exportSentences {
		for _, w := range text.Tokenize(s, text.TokenizeOptions{Lower: true}) {
			if !slices.Contains(vocab, w) && w != "zyzzyva" {
				vocab = append(vocab, w)
			}
		}
	}
	return evaltest.Checkpoint(t, t.TempDir(), "ck", vocab, 3)
}

// readST reads a safetensors file's one tensor by its header, apart from
// trainstep's reader.
func readST(t *testing.T, path string) (name string, shape []int, data []float32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b)
	var h map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &h); err != nil {
		t.Fatal(err)
	}
	delete(h, "__metadata__")
	for k, raw := range h {
		var e struct {
			Dtype   string   `json:"dtype"`
			Shape   []int    `json:"shape"`
			Offsets [2]int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &e); err != nil || e.Dtype != "F32" {
			t.Fatalf("%s: %s %s %v", path, k, e.Dtype, err)
		}
		body := b[8+n+uint64(e.Offsets[0]) : 8+n+uint64(e.Offsets[1])]
		data = make([]float32, len(body)/4)
		if err := binary.Read(bytes.NewReader(body), binary.LittleEndian, data); err != nil {
			t.Fatal(err)
		}
		name, shape = k, e.Shape
	}
	return name, shape, data
}

// TestExportStaticLayout: each format's files, tensor name and shape, a
// tokenizer id a row, and the table the checkpoint's words (truncated to
// a prefix with TruncateDim); a second export into the same directory,
// and a model that is not an average, are refused.
func TestExportStaticLayout(t *testing.T) {
	ckDir := staticCheckpoint(t)
	ck, err := trainstep.ReadCheckpoint(ckDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		format, module, tensor string
		files                  []string
		truncate               int
	}{
		{evalsink.FormatSentenceTransformers, "0_StaticEmbedding", "embedding.weight",
			[]string{"0_StaticEmbedding/model.safetensors", "0_StaticEmbedding/tokenizer.json", "config_sentence_transformers.json", "modules.json"}, 0},
		{evalsink.FormatModel2Vec, ".", "embeddings", []string{"config.json", "model.safetensors", "modules.json", "tokenizer.json"}, 8},
	} {
		t.Run(c.format, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if err := evalsink.ExportStatic(dir, ck, evalsink.StaticConfig{Format: c.format, TruncateDim: c.truncate}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for f := range testenv.Tree(t, dir) {
				got = append(got, f)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.files) {
				t.Errorf("files %v, want %v", got, c.files)
			}
			name, shape, data := readST(t, filepath.Join(dir, c.module, "model.safetensors"))
			d := ck.Config.Dim
			keep := d
			if c.truncate > 0 {
				keep = c.truncate
			}
			if name != c.tensor || !slices.Equal(shape, []int{len(ck.Vocab), keep}) {
				t.Fatalf("tensor %s %v, want %s [%d %d]", name, shape, c.tensor, len(ck.Vocab), keep)
			}
			emb := ck.Params[0].Data
			for i := range ck.Vocab {
				if !slices.Equal(data[i*keep:(i+1)*keep], emb[i*d:i*d+keep]) {
					t.Fatalf("row %d (%s) differs from the checkpoint's", i, ck.Vocab[i])
				}
			}
			var tok struct {
				Model struct {
					Type  string         `json:"type"`
					Vocab map[string]int `json:"vocab"`
					Unk   string         `json:"unk_token"`
				} `json:"model"`
			}
			b, _ := os.ReadFile(filepath.Join(dir, c.module, "tokenizer.json"))
			if err := json.Unmarshal(b, &tok); err != nil || tok.Model.Type != "WordLevel" || len(tok.Model.Vocab) != len(ck.Vocab) || tok.Model.Vocab[tok.Model.Unk] != 1 {
				t.Errorf("tokenizer.json: %s model of %d words, unk %q (%v)", tok.Model.Type, len(tok.Model.Vocab), tok.Model.Unk, err)
			}
			if err := evalsink.ExportStatic(dir, ck, evalsink.StaticConfig{Format: c.format}); err == nil || !strings.Contains(err.Error(), "not empty") {
				t.Errorf("second export into %s: %v, want a refusal", dir, err)
			}
		})
	}
	other := *ck
	other.Config.Encoder = "lstmavg"
	if err := evalsink.ExportStatic(t.TempDir(), &other, evalsink.StaticConfig{Format: evalsink.FormatModel2Vec}); err == nil || !strings.Contains(err.Error(), "avg") {
		t.Errorf("exporting an lstmavg model: %v, want a refusal naming avg", err)
	}
}

// TestExportStaticInterop reads both exports with other implementations:
// Hugging Face's tokenizer code (the npm @huggingface/tokenizers package,
// tools/interop/hf_tokenize.mjs) must split every sentence as
// text.Tokenize does, and scripts/export_check.py (json and struct) must
// compute parastream's vectors within 1e-5 for the sentences without an
// unseen word. It needs node, `npm ci` in tools/interop and python3;
// without them it skips, unless PARASTREAM_REQUIRE_INTEROP=1.
func TestExportStaticInterop(t *testing.T) {
	root := testenv.Root()
	interop := filepath.Join(root, "tools", "interop")
	missing := func(what string) {
		msg := fmt.Sprintf("export interop test: %s; install with `cd tools/interop && npm ci`", what)
		if os.Getenv("PARASTREAM_REQUIRE_INTEROP") == "1" {
			t.Fatal(msg)
		}
		t.Skip("skipping " + msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not in PATH")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		missing("python3 is not in PATH")
	}
	if _, err := os.Stat(filepath.Join(interop, "node_modules", "@huggingface", "tokenizers", "package.json")); err != nil {
		missing("tools/interop/node_modules/@huggingface/tokenizers is absent")
	}
	ckDir := staticCheckpoint(t)
	ck, err := trainstep.ReadCheckpoint(ckDir)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	lines := filepath.Join(work, "lines.txt")
	if err := os.WriteFile(lines, []byte(strings.Join(exportSentences, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	emb, _, err := evalsink.OpenEmbedder(ckDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	var ref bytes.Buffer
	f, _ := os.Open(lines)
	defer f.Close()
	if _, err := emb.EmbedLines(t.Context(), f, func(s string) []string { return text.Tokenize(s, text.TokenizeOptions{Lower: true}) },
		func(line string, vec []float32) error { return evalsink.WriteVector(&ref, "text", line, vec) }); err != nil {
		t.Fatal(err)
	}
	embedFile := filepath.Join(work, "embed.txt")
	if err := os.WriteFile(embedFile, ref.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range evalsink.StaticFormats() {
		dir := filepath.Join(work, format)
		if err := evalsink.ExportStatic(dir, ck, evalsink.StaticConfig{Format: format}); err != nil {
			t.Fatal(err)
		}
		tokPath := filepath.Join(dir, "tokenizer.json")
		if format == evalsink.FormatSentenceTransformers {
			tokPath = filepath.Join(dir, "0_StaticEmbedding", "tokenizer.json")
		}
		cmd := exec.Command(node, filepath.Join(interop, "hf_tokenize.mjs"), tokPath)
		cmd.Stdin = strings.NewReader(strings.Join(exportSentences, "\n") + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("hf_tokenize.mjs: %v", err)
		}
		idsFile := filepath.Join(work, format+".ids.jsonl")
		if err := os.WriteFile(idsFile, out, 0o644); err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var enc struct{ Tokens []string }
			if err := json.Unmarshal([]byte(line), &enc); err != nil {
				t.Fatal(err)
			}
			if want := text.Tokenize(exportSentences[i], text.TokenizeOptions{Lower: true}); !slices.Equal(enc.Tokens, want) {
				t.Errorf("%s: %q: Hugging Face tokens %q, parastream's %q", format, exportSentences[i], enc.Tokens, want)
			}
		}
		check := exec.Command(python, filepath.Join(root, "scripts", "export_check.py"), "--dir", dir, "--ids", idsFile, "--embed", embedFile)
		res, err := check.CombinedOutput()
		if err != nil {
			t.Errorf("%s: export_check.py: %v\n%s", format, err, res)
		}
		t.Logf("%s: %s", format, bytes.TrimSpace(res))
		if !bytes.Contains(res, []byte("in_vocabulary=6 ")) {
			t.Errorf("%s: export_check.py read %s, want the 6 sentences without an unseen word compared", format, res)
		}
	}
}
