package evalsink

import (
	"strings"
	"testing"
)

// TestSQLStatements: the SQL table the column table makes holds the
// table of schema version 3 (as sql.go spelled it before the column
// table), line for line and in order: a new column adds lines, never
// changes one; likewise the migration and the insert's columns. The
// insert has a parameter a column.
func TestSQLStatements(t *testing.T) {
	const schema = `CREATE TABLE IF NOT EXISTS ` + SQLTable + ` (
	eval_id        text NOT NULL,
	run            text NOT NULL,
	model          text NOT NULL,
	step           bigint NOT NULL,
	epoch          bigint NOT NULL,
	checkpoint     text NOT NULL,
	checkpoint_id  text NOT NULL,
	corpus         text NOT NULL,
	split          text NOT NULL,
	dataset        text NOT NULL,
	year           text NOT NULL,
	kind           text NOT NULL,
	pairs          bigint NOT NULL,
	pearson        double precision,
	spearman       double precision,
	p_at_1         double precision,
	p_at_3         double precision,
	p_at_10        double precision,
	mrr            double precision,
	map            double precision,
	bleu_1         double precision,
	bleu_2         double precision,
	bleu_3         double precision,
	bleu_4         double precision,
	meteor         double precision,
	ter            double precision,
	accuracy       double precision,
	f1             double precision,
	ci_low         jsonb,
	ci_high        jsonb,
	candidates     bigint NOT NULL,
	scale          text NOT NULL,
	adaptation     text NOT NULL DEFAULT '',
	evaluated_at   timestamptz NOT NULL,
	versions       text NOT NULL,
	data_hash      text NOT NULL,
	model_hash     text NOT NULL,
	PRIMARY KEY (eval_id, corpus, split, dataset, kind)
)`
	const migrate = `ALTER TABLE ` + SQLTable + `
	ADD COLUMN IF NOT EXISTS bleu_1 double precision,
	ADD COLUMN IF NOT EXISTS bleu_2 double precision,
	ADD COLUMN IF NOT EXISTS bleu_3 double precision,
	ADD COLUMN IF NOT EXISTS bleu_4 double precision,
	ADD COLUMN IF NOT EXISTS meteor double precision,
	ADD COLUMN IF NOT EXISTS ter double precision,
	ADD COLUMN IF NOT EXISTS accuracy double precision,
	ADD COLUMN IF NOT EXISTS f1 double precision,
	ADD COLUMN IF NOT EXISTS ci_low jsonb,
	ADD COLUMN IF NOT EXISTS ci_high jsonb,
	ADD COLUMN IF NOT EXISTS adaptation text NOT NULL DEFAULT ''`
	const insert = `INSERT INTO ` + SQLTable + ` (eval_id, run, model, step, epoch, checkpoint, checkpoint_id, corpus, split,
	dataset, year, kind, pairs, pearson, spearman, p_at_1, p_at_3, p_at_10, mrr, map, bleu_1, bleu_2, bleu_3, bleu_4,
	meteor, ter, accuracy, f1, ci_low, ci_high, candidates, scale, adaptation, evaluated_at, versions, data_hash, model_hash)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24,
	$25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37)
ON CONFLICT DO NOTHING`
	lines := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(l), ","))
		}
		return out
	}
	names := func(s string) []string {
		s = s[strings.Index(s, "(")+1 : strings.Index(s, ")")]
		var out []string
		for _, n := range strings.Split(s, ",") {
			out = append(out, strings.TrimSpace(n))
		}
		return out
	}
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"schema", lines(sqlSchema()), lines(schema)},
		{"migration", lines(sqlMigrate()), lines(migrate)},
		{"insert", names(sqlInsert()), names(insert)},
	} {
		if !holds(c.got, c.want) {
			t.Errorf("%s:\n%s\ndoes not hold, in order,\n%s", c.name, strings.Join(c.got, "\n"), strings.Join(c.want, "\n"))
		}
	}
	if n := strings.Count(sqlInsert(), "$"); n != len(Columns()) {
		t.Errorf("insert has %d parameters for %d columns", n, len(Columns()))
	}
}

// holds says whether want is a subsequence of got.
func holds(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}
