package evalsink_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/parquet-go/parquet-go"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/internal/evaltest"
	"github.com/parastream/parastream/internal/testenv"
)

// generationRows scores evaltest.BLEUCorpus as a generation set of checkpoint
// "ck" at step.
func generationRows(t *testing.T, run string, step int64) []evalsink.Result {
	t.Helper()
	hyps, refs := evaltest.BLEUCorpus()
	base := evalsink.Result{EvalID: evalsink.NewEvalID("generation", run, fmt.Sprint(step), "data"), Run: run, Model: "seq2seq", Step: step,
		Checkpoint: "/ck", CheckpointID: "ck", Scale: evalsink.ScaleCosine, EvaluatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Versions: "test", DataHash: "data", ModelHash: "model"}
	rows, err := evalsink.GenerationRows(base, evalsink.GenerationSet{Corpus: "quora", Split: "test", Dataset: "quora/test", Hyps: hyps, Refs: refs})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestAppendGenerationResults appends a generation evaluation to a results
// directory: one part, once; its figures in the CSV's columns and in the
// report's generation table.
func TestAppendGenerationResults(t *testing.T) {
	out := t.TempDir()
	rows := generationRows(t, "gen-a", 300)
	for i, want := range []bool{true, false} {
		added, err := evalsink.AppendResults(out, rows)
		if err != nil {
			t.Fatal(err)
		}
		if added != want {
			t.Errorf("append %d added a part: %v, want %v", i+1, added, want)
		}
	}
	parts, _ := filepath.Glob(filepath.Join(out, evalsink.PartsDir, "*.parquet"))
	got, err := evalsink.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 1 || len(got) != 1 || got[0].Kind != evalsink.KindGeneration || got[0].BLEU4 == nil || *got[0].BLEU4 != *rows[0].BLEU4 ||
		*got[0].METEOR != *rows[0].METEOR || *got[0].TER != *rows[0].TER || got[0].Pearson != nil {
		t.Fatalf("%d parts, rows read back %+v", len(parts), got)
	}
	f, err := os.Open(filepath.Join(out, evalsink.CSVName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) string { return recs[1][slices.Index(recs[0], name)] }
	if len(recs) != 2 || col("kind") != "generation" || col("bleu_4") != "35.00684129662144" || col("ter") != "35.64356435643564" ||
		col("pearson") != "" || col("pairs") != "8" {
		t.Errorf("CSV %v", recs)
	}
	report, err := os.ReadFile(filepath.Join(out, evalsink.ReportName))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"## Generation", "| quora/test BLEU-4 | 8 † | 35.0 |", "| quora/test TER | 8 † | 35.6 |", "| quora/test METEOR | 8 † |"} {
		if !strings.Contains(string(report), line) {
			t.Errorf("report lacks %q:\n%s", line, report)
		}
	}
	if strings.Contains(string(report), "Semantic textual similarity") {
		t.Errorf("report of generation rows only has a similarity table:\n%s", report)
	}

	// A later checkpoint of the run: the report's column moves to it, and
	// the run gets a generation learning curve.
	later := generationRows(t, "gen-a", 600)
	*later[0].BLEU4 = 40
	if _, err := evalsink.AppendResults(out, later); err != nil {
		t.Fatal(err)
	}
	if report, err = os.ReadFile(filepath.Join(out, evalsink.ReportName)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "| quora/test BLEU-4 | 8 † | 40.0 |") || !strings.Contains(string(report), "gen-a (seq2seq, step 600)") {
		t.Errorf("report after step 600:\n%s", report)
	}
	pf, err := os.Open(filepath.Join(out, evalsink.PlotsDir, "curves-gen-a-generation.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if img, err := png.Decode(pf); err != nil || img.Bounds().Dx() < 100 {
		t.Errorf("generation curve: %v", err)
	}

	other := generationRows(t, "gen-b", 1)
	mixed := append(slices.Clone(rows), other...)
	if _, err := evalsink.AppendResults(out, mixed); err == nil || !strings.Contains(err.Error(), "two evaluations") {
		t.Errorf("appending rows of two evaluations: %v", err)
	}
	if _, err := evalsink.AppendResults(out, nil); err == nil {
		t.Error("appending no rows: no error")
	}
	ab, again := evalsink.NewEvalID("a", "b"), evalsink.NewEvalID("a", "b")
	if ab == evalsink.NewEvalID("a", "c") || ab != again || evalsink.NewEvalID("a\nb") == ab || len(ab) != 32 {
		t.Error("NewEvalID: different parts give one id, or the same parts two")
	}
}

// resultV1 is the Result schema of version 1, before the generation
// columns.
type resultV1 struct {
	EvalID       string    `parquet:"eval_id,dict"`
	Run          string    `parquet:"run,dict"`
	Model        string    `parquet:"model,dict"`
	Step         int64     `parquet:"step"`
	Epoch        int64     `parquet:"epoch"`
	Checkpoint   string    `parquet:"checkpoint,dict"`
	CheckpointID string    `parquet:"checkpoint_id,dict"`
	Corpus       string    `parquet:"corpus,dict"`
	Split        string    `parquet:"split,dict"`
	Dataset      string    `parquet:"dataset,dict"`
	Year         string    `parquet:"year,dict"`
	Kind         string    `parquet:"kind,dict"`
	Pairs        int64     `parquet:"pairs"`
	Pearson      *float64  `parquet:"pearson,optional"`
	Spearman     *float64  `parquet:"spearman,optional"`
	PAt1         *float64  `parquet:"p_at_1,optional"`
	PAt3         *float64  `parquet:"p_at_3,optional"`
	PAt10        *float64  `parquet:"p_at_10,optional"`
	MRR          *float64  `parquet:"mrr,optional"`
	MAP          *float64  `parquet:"map,optional"`
	Candidates   int64     `parquet:"candidates"`
	Scale        string    `parquet:"scale,dict"`
	EvaluatedAt  time.Time `parquet:"evaluated_at,timestamp(millisecond)"`
	Versions     string    `parquet:"versions,dict"`
	DataHash     string    `parquet:"data_hash,dict"`
	ModelHash    string    `parquet:"model_hash,dict"`
}

// TestReadsPartsOfSchemaV1: a results directory holding a part written
// before the generation columns reads with them NULL beside a generation
// part, and the report has both tables.
func TestReadsPartsOfSchemaV1(t *testing.T) {
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, evalsink.PartsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	r := 0.5
	old := []resultV1{{EvalID: "old", Run: "gen-a", Model: "avg", Step: 1, Corpus: "stsb", Split: "dev", Dataset: "stsb/dev",
		Kind: evalsink.KindDataset, Pairs: 1500, Pearson: &r, Spearman: &r, Scale: evalsink.ScaleCosine,
		EvaluatedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}}
	f, err := os.Create(filepath.Join(out, evalsink.PartsDir, "part-old.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[resultV1](f)
	if _, err := w.Write(old); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := evalsink.AppendResults(out, generationRows(t, "gen-a", 1)); err != nil {
		t.Fatal(err)
	}
	rows, err := evalsink.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	for _, row := range rows {
		switch row.EvalID {
		case "old":
			if row.Pearson == nil || *row.Pearson != 0.5 || row.BLEU1 != nil || row.METEOR != nil || row.TER != nil || row.Pairs != 1500 {
				t.Errorf("version 1 row read as %+v", row)
			}
		default:
			if row.BLEU1 == nil || row.Pearson != nil {
				t.Errorf("generation row read as %+v", row)
			}
		}
	}
	report, err := os.ReadFile(filepath.Join(out, evalsink.ReportName))
	if err != nil {
		t.Fatal(err)
	}
	// One column for the run: the similarity table shows its embedding
	// evaluation, the generation table its generation evaluation.
	for _, want := range []string{"| STS Benchmark dev | 1500 | 0.5 |", "| quora/test BLEU-1 | 8 † | 74.5 |",
		"| Dataset | n | gen-a (avg, step 1) |", "| Dataset | n | gen-a (seq2seq, step 1) |"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

// TestSQLSinkGenerationColumns: a results table created before the
// generation columns gets them when the sink opens, and stores a
// generation row's figures.
func TestSQLSinkGenerationColumns(t *testing.T) {
	dsn := postgres(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The table as version 1 created it.
	if _, err := conn.Exec(ctx, `CREATE TABLE `+evalsink.SQLTable+` (
	eval_id text NOT NULL, run text NOT NULL, model text NOT NULL, step bigint NOT NULL, epoch bigint NOT NULL,
	checkpoint text NOT NULL, checkpoint_id text NOT NULL, corpus text NOT NULL, split text NOT NULL, dataset text NOT NULL,
	year text NOT NULL, kind text NOT NULL, pairs bigint NOT NULL, pearson double precision, spearman double precision,
	p_at_1 double precision, p_at_3 double precision, p_at_10 double precision, mrr double precision, map double precision,
	candidates bigint NOT NULL, scale text NOT NULL, evaluated_at timestamptz NOT NULL, versions text NOT NULL,
	data_hash text NOT NULL, model_hash text NOT NULL, PRIMARY KEY (eval_id, corpus, split, dataset, kind))`); err != nil {
		t.Fatal(err)
	}
	sink, err := evalsink.OpenSQL(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	rows := generationRows(t, "gen-a", 300)
	for i, want := range []int64{1, 0} {
		if n, err := sink.Insert(ctx, rows); err != nil || n != want {
			t.Fatalf("insert %d: %d rows (err %v), want %d", i+1, n, err, want)
		}
	}
	var b1, b4, meteor, ter float64
	var pearson *float64
	if err := conn.QueryRow(ctx, `SELECT bleu_1, bleu_4, meteor, ter, pearson FROM `+evalsink.SQLTable+` WHERE kind = 'generation'`).
		Scan(&b1, &b4, &meteor, &ter, &pearson); err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if b1 != *r.BLEU1 || b4 != *r.BLEU4 || meteor != *r.METEOR || ter != *r.TER || pearson != nil {
		t.Errorf("stored %v %v %v %v %v, want %v %v %v %v NULL", b1, b4, meteor, ter, pearson, *r.BLEU1, *r.BLEU4, *r.METEOR, *r.TER)
	}
}

// TestDuckDBReadsGenerationPart reads a generation part with DuckDB (as
// TestDuckDBReadsResults): the six figures, and NULL pearson.
func TestDuckDBReadsGenerationPart(t *testing.T) {
	dir := filepath.Join(testenv.Root(), "tools", "interop")
	node, err := exec.LookPath("node")
	if err != nil {
		required(t, "PARASTREAM_REQUIRE_INTEROP", "node is not in PATH; install it and run `cd tools/interop && npm ci`")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		required(t, "PARASTREAM_REQUIRE_INTEROP", "tools/interop/node_modules/@duckdb/node-api is absent: run `cd tools/interop && npm ci`")
	}
	out := t.TempDir()
	rows := generationRows(t, "gen-a", 300)
	if _, err := evalsink.AppendResults(out, rows); err != nil {
		t.Fatal(err)
	}
	parts, _ := filepath.Glob(filepath.Join(out, evalsink.PartsDir, "*.parquet"))
	if len(parts) != 1 {
		t.Fatalf("%d parts", len(parts))
	}
	cmd := exec.Command(node, filepath.Join(dir, "read_parquet.mjs"), parts[0])
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("read_parquet.mjs: %v\n%s", err, stderr.String())
	}
	var got []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	if len(got) != 1 {
		t.Fatalf("DuckDB read %d rows, want 1", len(got))
	}
	r := rows[0]
	for name, want := range map[string]float64{"bleu_1": *r.BLEU1, "bleu_2": *r.BLEU2, "bleu_3": *r.BLEU3, "bleu_4": *r.BLEU4,
		"meteor": *r.METEOR, "ter": *r.TER} {
		if v, ok := got[0][name].(float64); !ok || v != want {
			t.Errorf("DuckDB %s = %v, want %v", name, got[0][name], want)
		}
	}
	if got[0]["pearson"] != nil || got[0]["kind"] != "generation" {
		t.Errorf("DuckDB row %v", got[0])
	}
}
