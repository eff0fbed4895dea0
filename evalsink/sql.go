package evalsink

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5"
)

// SQLTable is the results table the SQL sink writes.
const SQLTable = "parastream_eval_results"

// sqlSchema creates the results table when missing, a column a Columns
// entry. Its primary key is Result.Key's: an evaluation's figure is stored
// once.
func sqlSchema() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS " + SQLTable + " (\n")
	for _, c := range Columns() {
		fmt.Fprintf(&b, "\t%-15s%s,\n", c.Name, c.SQLType())
	}
	b.WriteString("\tPRIMARY KEY (eval_id, corpus, split, dataset, kind)\n)")
	return b.String()
}

// sqlMigrate adds the columns of ResultSchemaVersions after 1 (2: the
// generation figures; 3: the classification figures, intervals,
// adaptation) to a table of an earlier version.
func sqlMigrate() string {
	var adds []string
	for _, c := range Columns() {
		if c.Version > 1 {
			adds = append(adds, "\tADD COLUMN IF NOT EXISTS "+c.Name+" "+c.SQLType())
		}
	}
	return "ALTER TABLE " + SQLTable + "\n" + strings.Join(adds, ",\n")
}

// sqlInsert inserts a row (Columns' values in order) unless its key is
// stored.
func sqlInsert() string {
	var names, params []string
	for i, c := range Columns() {
		names = append(names, c.Name)
		params = append(params, fmt.Sprintf("$%d", i+1))
	}
	return "INSERT INTO " + SQLTable + " (" + strings.Join(names, ", ") + ")\nVALUES (" + strings.Join(params, ", ") + ")\nON CONFLICT DO NOTHING"
}

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
	if _, err := conn.Exec(ctx, sqlSchema()); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("creating table %s: %w", SQLTable, err)
	}
	if _, err := conn.Exec(ctx, sqlMigrate()); err != nil {
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
	insert, cols := sqlInsert(), Columns()
	for _, r := range rows {
		args := make([]any, len(cols))
		for i, c := range cols {
			args[i] = c.Value(&r)
		}
		b.Queue(insert, args...)
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
