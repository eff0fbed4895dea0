package evalsink

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/shards"
)

// Tasks of a Set: its corpus's evaluation task (corpora.Eval.Task).
const (
	// TaskSimilarity: graded pairs; cosine against the gold score
	// (Pearson, Spearman).
	TaskSimilarity = corpora.TaskSimilarity
	// TaskRetrieval: input-response pairs; pick the response among
	// candidates (precision at N, MRR, MAP).
	TaskRetrieval = corpora.TaskRetrieval
	// TaskClassification: labelled sentences or pairs (SST, MR, MSRP,
	// SNLI); a classifier on frozen embeddings (accuracy, F1).
	TaskClassification = corpora.TaskClassification
	// TaskRanking: questions with labelled candidates (SemEval CQA,
	// TrecQA, WikiQA); rank the candidates (MAP, MRR).
	TaskRanking = corpora.TaskRanking
	// TaskWordContext: word pairs in context (SCWS); cosine of the
	// words' representations against the human rating (Spearman).
	TaskWordContext = corpora.TaskWordContext
)

// corpusOrder returns every evaluated corpus in the order of the report:
// the evaluation sets of corpora's formats (corpora.EvalFormats).
func corpusOrder() []string {
	var out []string
	for _, f := range corpora.EvalFormats() {
		out = append(out, f.Corpus)
	}
	return out
}

// RetrievalSplit is the held-out split of the retrieval corpora that is
// evaluated; their other splits are training data.
const RetrievalSplit = "test"

// Set is one evaluation set: the pairs of one dataset of one split.
type Set struct {
	Corpus, Split string
	// Dataset names the set: the row's Dataset for similarity corpora
	// ("2014/deft-forum", "stsb/dev", "sick/trial"), "<corpus>/<split>"
	// for retrieval corpora.
	Dataset string
	// Year is the STS year ("2014", "2012-train") for the sts corpus, ""
	// otherwise.
	Year  string
	Task  string
	Pairs []Pair
}

// Pair is a pair of tokenised texts with its gold score or label.
type Pair struct {
	ID     string
	A, B   []string
	Gold   float64
	Group  string
	Source string
	// Meta is the row's metadata (shards.Row.Meta): SICK's
	// "entailment", SCWS's target words, a ranking's question id.
	Meta map[string]string
}

// Sets are the evaluation sets read from a shards directory, with the
// hash that identifies their data.
type Sets struct {
	Root string
	Sets []*Set
	// DataHash is the sha256 of the shard files' paths and checksums (as
	// the manifest lists them): the same data gives the same hash
	// whatever directory or command line produced it.
	DataHash string
	// Unlabelled counts the rows skipped for having no gold score or
	// label (retrieval rows need none).
	Unlabelled int64
}

// LoadSets reads the evaluation sets under root (a directory or an
// object-store prefix written by parastream extract, with its
// manifest): the splits of the corpora that
// corpora's formats mark as evaluation sets (corpora.Eval), each a Set of
// its task: every split of a set with an official split (sts, stsb, sick,
// and the other tasks' corpora), the held-out test split (RetrievalSplit)
// of one without (reddit, quora). Rows without a label are counted
// (Unlabelled) and skipped, except in retrieval sets. It verifies the
// manifest's checksums first. Texts are the rows' tokens (TokensA,
// TokensB), as extraction tokenised them.
func LoadSets(ctx context.Context, root string, logger *slog.Logger) (*Sets, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Sets on an object store (s3://, gs:// in the dataflow build) are
	// copied to a temporary directory, checked against their manifest,
	// and read from there; the copy goes once they are loaded.
	root, done, err := shards.LocalCopy(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("reading evaluation sets: %w", err)
	}
	defer done()
	m, err := shards.ReadManifest(root)
	if err != nil {
		return nil, fmt.Errorf("reading evaluation sets: %w", err)
	}
	if err := m.Verify(root); err != nil {
		return nil, fmt.Errorf("reading evaluation sets: %w", err)
	}
	h := sha256.New()
	for _, f := range m.Files {
		fmt.Fprintf(h, "%s\t%s\n", f.Path, f.SHA256)
	}
	out := &Sets{Root: root, DataHash: hex.EncodeToString(h.Sum(nil))}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range m.Splits {
			if !yield(k) {
				return
			}
		}
	})
	for _, key := range keys {
		si := m.Splits[key]
		eval := corpora.Evaluation(si.Corpus)
		if !eval.Evaluated() || (eval.Split == nil && si.Split != RetrievalSplit) {
			logger.Debug("not an evaluation split", "split", key)
			continue
		}
		ret := eval.Task == TaskRetrieval
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		byName := map[string]*Set{}
		r := shards.NewSplitReader(root, mustShards(m, si))
		for row, err := range r.All() {
			if err != nil {
				r.Close()
				return nil, fmt.Errorf("reading evaluation split %s: %w", key, err)
			}
			name := row.Dataset
			if ret {
				name = si.Corpus + "/" + si.Split
			}
			if !ret && row.Label == nil {
				out.Unlabelled++
				continue
			}
			s := byName[name]
			if s == nil {
				s = &Set{Corpus: si.Corpus, Split: si.Split, Dataset: name, Task: eval.Task}
				if si.Corpus == "sts" {
					s.Year, _, _ = strings.Cut(name, "/")
				}
				byName[name] = s
				out.Sets = append(out.Sets, s)
			}
			p := Pair{ID: row.ID, A: row.TokensA, B: row.TokensB, Group: row.GroupKey,
				Source: fmt.Sprintf("%s:%d", row.SourceFile, row.SourceLine), Meta: row.Meta}
			if row.Label != nil {
				p.Gold = *row.Label
			}
			s.Pairs = append(s.Pairs, p)
		}
		if err := r.Close(); err != nil {
			return nil, err
		}
	}
	corpusRank := corpusOrder()
	order := func(c string) int { return slices.Index(corpusRank, c) }
	slices.SortStableFunc(out.Sets, func(a, b *Set) int {
		return cmp.Or(cmp.Compare(order(a.Corpus), order(b.Corpus)),
			cmp.Compare(a.Split, b.Split), cmp.Compare(a.Year, b.Year), cmp.Compare(a.Dataset, b.Dataset))
	})
	if out.Unlabelled > 0 {
		logger.Warn("skipped evaluation pairs without a gold score", "pairs", out.Unlabelled)
	}
	if len(out.Sets) == 0 {
		return nil, fmt.Errorf("reading evaluation sets: %s holds no sts, stsb, sick split nor a reddit or quora test split (extract them with parastream extract --corpus sts|stsb|sick)", root)
	}
	return out, nil
}

func mustShards(m *shards.Manifest, si shards.SplitInfo) []shards.ShardInfo {
	infos, err := m.Shards(si.Corpus, si.Split)
	if err != nil {
		// Validated by ReadManifest: every split lists its shards.
		panic("evalsink: " + err.Error())
	}
	return infos
}
