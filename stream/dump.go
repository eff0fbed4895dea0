package stream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
)

// RowJSON is a consumed row as DumpRows writes it: where it came from and
// the featurized row a trainer reads.
type RowJSON struct {
	Epoch     int      `json:"epoch"`
	Shard     string   `json:"shard"`
	Row       int64    `json:"row"`
	Partition int      `json:"partition"`
	Offset    int64    `json:"offset"`
	ID        string   `json:"id"`
	A         string   `json:"a"`
	B         string   `json:"b"`
	Label     *float64 `json:"label"`
	// The featurized row: token ids and topic vectors (absent before
	// featurize), exactly what a trainer reads.
	IDsA    []int32   `json:"ids_a,omitempty"`
	IDsB    []int32   `json:"ids_b,omitempty"`
	TopicsA []float32 `json:"topics_a,omitempty"`
	TopicsB []float32 `json:"topics_b,omitempty"`
}

// DumpRows reads up to n rows from c (0: to the end of its epochs) and
// writes each to w as a JSON line (RowJSON); a nil w only counts them
// (`parastream consume`, for debugging and the parity harness). It
// returns the rows read.
func DumpRows(ctx context.Context, c *Consumer, w io.Writer, n int64) (int64, error) {
	var enc *json.Encoder
	if w != nil {
		enc = json.NewEncoder(w)
		enc.SetEscapeHTML(false)
	}
	var got int64
	for n == 0 || got < n {
		r, err := c.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return got, err
		}
		got++
		if enc == nil {
			continue
		}
		if err := enc.Encode(RowJSON{Epoch: r.Epoch, Shard: r.Shard, Row: r.Index, Partition: r.Partition, Offset: r.Offset,
			ID: r.ID, A: r.A, B: r.B, Label: r.Label,
			IDsA: r.IDsA, IDsB: r.IDsB, TopicsA: r.TopicsA, TopicsB: r.TopicsB}); err != nil {
			return got, err
		}
	}
	return got, nil
}
