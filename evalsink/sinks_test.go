package evalsink_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/internal/testenv"
)

// required skips the test with msg, or fails it when the environment
// variable env is "1" (as CI sets it).
func required(t *testing.T, env, msg string) {
	t.Helper()
	if os.Getenv(env) == "1" {
		t.Fatalf("%s (%s=1 makes this a failure)", msg, env)
	}
	t.Skip("skipping: " + msg)
}

// postgres starts a throwaway PostgreSQL server listening only on a Unix
// socket in a temporary directory, stopped and removed at the end of the
// test, and returns its DSN. It skips without PostgreSQL's binaries
// (fails with PARASTREAM_REQUIRE_POSTGRES=1). As root it runs the server
// as the postgres user (initdb refuses root).
func postgres(t *testing.T) string {
	t.Helper()
	bin := ""
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		bin = strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(filepath.Join(bin, "initdb")); bin == "" || err != nil {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		if len(dirs) == 0 {
			required(t, "PARASTREAM_REQUIRE_POSTGRES", "PostgreSQL server binaries (initdb, pg_ctl) are absent: apt-get install -y postgresql")
		}
		slices.Sort(dirs)
		bin = dirs[len(dirs)-1]
	}
	dir, err := os.MkdirTemp("", "evalsink-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var prefix []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			required(t, "PARASTREAM_REQUIRE_POSTGRES", "running as root and there is no postgres user to run the server as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		prefix = []string{"runuser", "-u", "postgres", "--"}
	}
	run := func(args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		args = append(slices.Clone(prefix), args...)
		out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
		if err != nil {
			t.Logf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return err
	}
	data := filepath.Join(dir, "data")
	if err := run(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"); err != nil {
		t.Fatal("initdb failed")
	}
	opts := "-k " + dir + " -c listen_addresses= -c fsync=off"
	if err := run(filepath.Join(bin, "pg_ctl"), "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		t.Fatalf("starting PostgreSQL failed:\n%s", log)
	}
	t.Cleanup(func() { run(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop") })
	return "host=" + dir + " user=postgres dbname=postgres sslmode=disable"
}

// TestSQLSink evaluates a checkpoint into PostgreSQL twice, from two
// evaluators, and through a results directory that already has the part:
// the table holds each row once.
func TestSQLSink(t *testing.T) {
	dsn := postgres(t)
	eval := fixtureSetsDir(t)
	sets := loadSets(t, eval)
	ck := checkpoint(t, t.TempDir(), "ck", vocabulary(sets, 0), 3)
	ctx := context.Background()
	out := t.TempDir()
	sum, err := evaluator(t, eval, out, dsn).Evaluate(ctx, evalsink.Target{Dir: ck})
	if err != nil {
		t.Fatal(err)
	}
	if sum.SQLInserted != int64(len(sum.Rows)) || len(sum.Rows) == 0 {
		t.Fatalf("first evaluation inserted %d of %d rows", sum.SQLInserted, len(sum.Rows))
	}
	again, err := evaluator(t, eval, out, dsn).Evaluate(ctx, evalsink.Target{Dir: ck})
	if err != nil {
		t.Fatal(err)
	}
	// Another results directory, same database: computed again, stored
	// once.
	other, err := evaluator(t, eval, t.TempDir(), dsn).Evaluate(ctx, evalsink.Target{Dir: ck})
	if err != nil {
		t.Fatal(err)
	}
	if again.SQLInserted != 0 || other.SQLInserted != 0 || !other.Added {
		t.Errorf("evaluating again inserted %d and %d rows (added a part: %v)", again.SQLInserted, other.SQLInserted, other.Added)
	}
	sink, err := evalsink.OpenSQL(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	if n, err := sink.Count(ctx); err != nil || n != int64(len(sum.Rows)) {
		t.Errorf("table holds %d rows (err %v), want %d", n, err, len(sum.Rows))
	}
}

// TestDuckDBReadsResults reads a results part with DuckDB (the node
// harness of tools/interop, as shards/interop_test.go runs it): the
// documented schema, and every row's figures.
func TestDuckDBReadsResults(t *testing.T) {
	dir := filepath.Join(testenv.Root(), "tools", "interop")
	node, err := exec.LookPath("node")
	if err != nil {
		required(t, "PARASTREAM_REQUIRE_INTEROP", "node is not in PATH; install it and run `cd tools/interop && npm ci`")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		required(t, "PARASTREAM_REQUIRE_INTEROP", "tools/interop/node_modules/@duckdb/node-api is absent: run `cd tools/interop && npm ci`")
	}
	eval := fixtureSetsDir(t)
	ck := checkpoint(t, t.TempDir(), "ck", vocabulary(loadSets(t, eval), 0), 4)
	sum, err := evaluator(t, eval, t.TempDir(), "").Evaluate(context.Background(), evalsink.Target{Dir: ck})
	if err != nil {
		t.Fatal(err)
	}
	duckdb := func(args ...string) []map[string]any {
		t.Helper()
		cmd := exec.Command(node, append([]string{filepath.Join(dir, "read_parquet.mjs")}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("read_parquet.mjs: %v\n%s", err, stderr.String())
		}
		var lines []map[string]any
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, m)
		}
		return lines
	}
	want := [][2]string{
		{"eval_id", "VARCHAR"}, {"run", "VARCHAR"}, {"model", "VARCHAR"}, {"step", "BIGINT"}, {"epoch", "BIGINT"},
		{"checkpoint", "VARCHAR"}, {"checkpoint_id", "VARCHAR"}, {"corpus", "VARCHAR"}, {"split", "VARCHAR"},
		{"dataset", "VARCHAR"}, {"year", "VARCHAR"}, {"kind", "VARCHAR"}, {"pairs", "BIGINT"},
		{"pearson", "DOUBLE"}, {"spearman", "DOUBLE"}, {"p_at_1", "DOUBLE"}, {"p_at_3", "DOUBLE"}, {"p_at_10", "DOUBLE"},
		{"mrr", "DOUBLE"}, {"map", "DOUBLE"}, {"bleu_1", "DOUBLE"}, {"bleu_2", "DOUBLE"}, {"bleu_3", "DOUBLE"},
		{"bleu_4", "DOUBLE"}, {"meteor", "DOUBLE"}, {"ter", "DOUBLE"}, {"accuracy", "DOUBLE"}, {"f1", "DOUBLE"},
		{"ci_low", "MAP(VARCHAR, DOUBLE)"}, {"ci_high", "MAP(VARCHAR, DOUBLE)"}, {"candidates", "BIGINT"}, {"scale", "VARCHAR"}, {"adaptation", "VARCHAR"},
		{"evaluated_at", "TIMESTAMP WITH TIME ZONE"}, {"versions", "VARCHAR"}, {"data_hash", "VARCHAR"}, {"model_hash", "VARCHAR"},
	}
	var got [][2]string
	for _, c := range duckdb("--describe", sum.Part) {
		got = append(got, [2]string{c["column_name"].(string), c["column_type"].(string)})
	}
	if !slices.Equal(got, want) {
		t.Errorf("DuckDB DESCRIBE:\n got %v\nwant %v", got, want)
	}
	rows := duckdb(sum.Part)
	if len(rows) != len(sum.Rows) {
		t.Fatalf("DuckDB read %d rows, want %d", len(rows), len(sum.Rows))
	}
	for i, r := range sum.Rows {
		g := rows[i]
		if g["dataset"] != r.Dataset || g["kind"] != r.Kind || g["run"] != r.Run || g["eval_id"] != r.EvalID {
			t.Errorf("row %d: DuckDB %v, written %+v", i, g, r)
		}
		if p, ok := g["pearson"].(float64); (r.Pearson == nil) != (g["pearson"] == nil) || (ok && p != *r.Pearson) {
			t.Errorf("row %d pearson: DuckDB %v, written %v", i, g["pearson"], r.Pearson)
		}
		if n, ok := g["pairs"].(float64); !ok || int64(n) != r.Pairs {
			t.Errorf("row %d pairs: DuckDB %v, written %d", i, g["pairs"], r.Pairs)
		}
	}
}
