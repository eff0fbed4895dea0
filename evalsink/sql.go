package evalsink

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
)

// SQLTable is the results table the SQL sink writes.
const SQLTable = "parastream_eval_results"

// sqlSchema creates the results table when missing. Its primary key is
// Result.Key's: an evaluation's figure is stored once. sqlMigrate adds the
// generation columns to a table created before them.
const sqlSchema = `CREATE TABLE IF NOT EXISTS ` + SQLTable + ` (
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

// sqlMigrate adds the columns of ResultSchemaVersions 2 (generation
// figures) and 3 (classification figures, intervals, adaptation) to a
// table of an earlier version.
const sqlMigrate = `ALTER TABLE ` + SQLTable + `
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

const sqlInsert = `INSERT INTO ` + SQLTable + ` (eval_id, run, model, step, epoch, checkpoint, checkpoint_id, corpus, split,
	dataset, year, kind, pairs, pearson, spearman, p_at_1, p_at_3, p_at_10, mrr, map, bleu_1, bleu_2, bleu_3, bleu_4,
	meteor, ter, accuracy, f1, ci_low, ci_high, candidates, scale, adaptation, evaluated_at, versions, data_hash, model_hash)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24,
	$25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37)
ON CONFLICT DO NOTHING`

// SQLSink writes result rows to PostgreSQL.
type SQLSink struct {
	conn *pgx.Conn
	log  *slog.Logger
}

// OpenSQL connects to the database dsn names (a libpq connection string
// or postgres:// URL) and creates the results table when it is missing.
func OpenSQL(ctx context.Context, dsn string, logger *slog.Logger) (*SQLSink, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connecting to the SQL sink: %w", err)
	}
	if _, err := conn.Exec(ctx, sqlSchema); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("creating table %s: %w", SQLTable, err)
	}
	if _, err := conn.Exec(ctx, sqlMigrate); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("adding the generation columns to table %s: %w", SQLTable, err)
	}
	return &SQLSink{conn: conn, log: logger}, nil
}

// Insert adds the rows the table does not hold yet (by their key), in one
// transaction, and returns how many it added.
func (s *SQLSink) Insert(ctx context.Context, rows []Result) (int64, error) {
	tx, err := s.conn.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("writing to %s: %w", SQLTable, err)
	}
	defer tx.Rollback(ctx)
	var b pgx.Batch
	for _, r := range rows {
		b.Queue(sqlInsert, r.EvalID, r.Run, r.Model, r.Step, r.Epoch, r.Checkpoint, r.CheckpointID, r.Corpus, r.Split,
			r.Dataset, r.Year, r.Kind, r.Pairs, r.Pearson, r.Spearman, r.PAt1, r.PAt3, r.PAt10, r.MRR, r.MAP,
			r.BLEU1, r.BLEU2, r.BLEU3, r.BLEU4, r.METEOR, r.TER, r.Accuracy, r.F1, sqlInterval(r.CILow), sqlInterval(r.CIHigh),
			r.Candidates, r.Scale, r.Adaptation, r.EvaluatedAt, r.Versions, r.DataHash, r.ModelHash)
	}
	br := tx.SendBatch(ctx, &b)
	var added int64
	for range rows {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return 0, fmt.Errorf("writing to %s: %w", SQLTable, err)
		}
		added += tag.RowsAffected()
	}
	if err := br.Close(); err != nil {
		return 0, fmt.Errorf("writing to %s: %w", SQLTable, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("writing to %s: %w", SQLTable, err)
	}
	s.log.Info("wrote results to SQL", "table", SQLTable, "rows", len(rows), "added", added)
	return added, nil
}

// Count returns the number of rows in the results table.
func (s *SQLSink) Count(ctx context.Context) (int64, error) {
	var n int64
	err := s.conn.QueryRow(ctx, `SELECT count(*) FROM `+SQLTable).Scan(&n)
	return n, err
}

// Close closes the connection.
func (s *SQLSink) Close() error {
	return s.conn.Close(context.Background())
}

// sqlInterval is an interval map as a jsonb value; NULL for none.
func sqlInterval(m map[string]float64) any {
	if s := intervalJSON(m); s != "" {
		return s
	}
	return nil
}
