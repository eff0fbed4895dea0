package shards

import (
	"context"
	"encoding/json"
	"fmt"
)

// ReceiptsDir is the directory of a work directory that holds the
// receipts of a run's workers.
const ReceiptsDir = "receipts"

// WriteReceipt leaves v, as JSON, in dir/receipts/<name>.json for the
// driver, atomically (dir may be a staging prefix on an object store, see
// Output.Staging: the receipt is then one object, written whole): a worker writes its receipt once the shards it
// names are durable, and the driver commits only the shards that receipts
// name (a worker that died left none). WriteReceipt and ReadReceipts are
// the one writer and reader of receipts, whatever a receipt holds (a
// writer group's shards in transforms, a featurized shard in featurize).
func WriteReceipt(ctx context.Context, dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding receipt %s: %w", name, err)
	}
	return WriteObject(ctx, JoinPath(dir, ReceiptsDir, name+".json"), b)
}

// ReadReceipts reads the receipts the workers of a run left under dir, in
// the order of their names; none is no error.
func ReadReceipts[T any](dir string) ([]T, error) {
	ctx := context.Background()
	paths, err := Glob(ctx, JoinPath(dir, ReceiptsDir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(paths))
	for _, p := range paths {
		b, err := ReadFile(ctx, p)
		if err != nil {
			return nil, err
		}
		var rec T
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("reading receipt %s: %w", p, err)
		}
		out = append(out, rec)
	}
	return out, nil
}
