package evalsink

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// NewEvalID identifies an evaluation that an Evaluator does not run (a
// generation evaluation, GenerationRows) from everything that changes its
// figures: the checkpoint's id, the data's hash, the decoding options, and
// a name for the kind of evaluation, so that it never equals the id of the
// checkpoint's similarity evaluation. The same parts give the same id;
// different lists of parts, different ids.
func NewEvalID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		// Each part prefixed by its length: no two lists of parts hash
		// the same bytes.
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// AppendResults adds the rows of one evaluation (all with one EvalID) to
// the results directory out as a part of its own, written atomically,
// unless the evaluation's part exists already: then it writes no part
// (added is false), as Evaluate does for a checkpoint evaluated before.
// Either way it rewrites the CSV, the report and the learning curves from
// every part. It is how rows built outside an Evaluator (GenerationRows)
// join the result tables; the SQL sink takes them with SQLSink.Insert.
func AppendResults(out string, rows []Result) (added bool, err error) {
	if len(rows) == 0 {
		return false, errors.New("evalsink: no result rows to append")
	}
	id := rows[0].EvalID
	if id == "" || strings.ContainsAny(id, `/\`) {
		return false, fmt.Errorf("evalsink: result rows with eval_id %q: give them an id (NewEvalID)", id)
	}
	for _, r := range rows {
		if r.EvalID != id {
			return false, fmt.Errorf("evalsink: result rows of two evaluations (%s, %s): append each evaluation's rows on their own", id, r.EvalID)
		}
	}
	if _, err := os.Stat(partPath(out, id)); err == nil {
		added = false
	} else if errors.Is(err, os.ErrNotExist) {
		if _, err := writePart(out, id, rows); err != nil {
			return false, err
		}
		added = true
	} else {
		return false, fmt.Errorf("appending results: %w", err)
	}
	all, err := ReadResults(out)
	if err != nil {
		return added, err
	}
	_, err = WriteViews(out, all)
	return added, err
}
