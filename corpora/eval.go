package corpora

import (
	"cmp"
	"slices"
	"strings"
)

// Evaluation tasks: what `parastream eval` (evalsink) does with an
// evaluation set's rows. A Format's Eval names one.
const (
	// TaskSimilarity: graded pairs; cosine against the gold score
	// (Pearson, Spearman).
	TaskSimilarity = "similarity"
	// TaskRetrieval: input-response pairs; pick the response among
	// candidates (precision at N, MRR, MAP).
	TaskRetrieval = "retrieval"
	// TaskClassification: labelled sentences or pairs (SST, MR, MSRP,
	// SNLI); a classifier on frozen embeddings (accuracy, F1).
	TaskClassification = "classification"
	// TaskRanking: questions with labelled candidates (SemEval CQA,
	// TrecQA, WikiQA); rank the candidates (MAP, MRR).
	TaskRanking = "ranking"
	// TaskWordContext: word pairs in context (SCWS); cosine of the
	// words' representations against the human rating (Spearman).
	TaskWordContext = "word_context"
)

// Tasks returns the evaluation tasks in the order of the report.
func Tasks() []string {
	return []string{TaskSimilarity, TaskRetrieval, TaskClassification, TaskRanking, TaskWordContext}
}

// Eval says whether and how a format's rows are evaluated: the one place
// that extraction (official splits, single texts, no dedupe) and
// evaluation (which splits are sets, of which task, in which order) read.
// The zero value is a training corpus: no task, no official split, pairs.
type Eval struct {
	// Task is the evaluation task of the rows (a Task constant); "" for a
	// training corpus.
	Task string
	// Order places the set among its task's sets in the report: sets and
	// their rows sort by task (Tasks), then Order.
	Order int
	// Split returns the official split of a row of the given dataset
	// (Example.Dataset): the split the set was released with. Extraction
	// keeps every pair of a set with an official split (no dedupe) and
	// evaluation reads each of its splits. Nil where the set has none:
	// its rows take the hashed split, as a training corpus's do, and only
	// the held-out test split is evaluated (retrieval's reddit and quora).
	Split func(dataset string) string
	// SingleText says the rows are single texts, B empty (SST, MR): the
	// length rule then checks A alone.
	SingleText bool
}

// Evaluated says whether the format is an evaluation set.
func (e Eval) Evaluated() bool { return e.Task != "" }

// OfficialSplit is the split a row of dataset was released with; ok is
// false where the set has no official split, or is no evaluation set.
func (e Eval) OfficialSplit(dataset string) (split string, ok bool) {
	if e.Split == nil {
		return "", false
	}
	return e.Split(dataset), true
}

// Evaluation returns how the rows of corpus (an Example.Corpus, which is
// also the name an evaluation set's extraction writes its shards under)
// are evaluated: the Eval of the format yielding it, the zero Eval for a
// training corpus.
func Evaluation(corpus string) Eval { return formats().evaluation(corpus) }

func (r registry) evaluation(corpus string) Eval {
	for _, f := range r {
		if f.Corpus == corpus && f.Eval.Evaluated() {
			return f.Eval
		}
	}
	return Eval{}
}

// EvalFormats returns the formats that are evaluation sets, in the order
// of the report: by task (Tasks), then by Order.
func EvalFormats() []Format { return formats().evalFormats() }

func (r registry) evalFormats() []Format {
	var out []Format
	for _, f := range r.list() {
		if f.Eval.Evaluated() {
			out = append(out, f)
		}
	}
	tasks := Tasks()
	slices.SortStableFunc(out, func(a, b Format) int {
		return cmp.Or(cmp.Compare(slices.Index(tasks, a.Eval.Task), slices.Index(tasks, b.Eval.Task)), cmp.Compare(a.Eval.Order, b.Eval.Order))
	})
	return out
}

// The official split rules of the evaluation sets (Eval.Split).

// stsSplit: STS sets are test sets except the 2012 training sets (the
// dataset's year directory holds "train": 2012-train/MSRpar).
func stsSplit(dataset string) string {
	if strings.Contains(strings.SplitN(dataset, "/", 2)[0], "train") {
		return "train"
	}
	return "test"
}

// namedSplit: the split the dataset names, STS Benchmark's and SICK's
// (stsb/dev, sick/trial: train, dev, test, trial); test otherwise.
func namedSplit(dataset string) string {
	switch name := lastElem(dataset); name {
	case "train", "dev", "test", "trial":
		return name
	}
	return "test"
}

// splitInDataset: the split the dataset's name holds (snli/dev,
// msrp/train, semeval-cqa/train-part2, trecqa/clean-dev,
// multinli/dev_matched): train, dev (dev, trial, valid) or test, which is
// also the default.
func splitInDataset(dataset string) string { return splitName(lastElem(dataset), "test") }

// wholeSet: the set has no split and is evaluated whole (MR by 10-fold
// cross-validation, SCWS): every row is test.
func wholeSet(string) string { return "test" }

// lastElem is the last /-separated element of a dataset name.
func lastElem(dataset string) string { return dataset[strings.LastIndexByte(dataset, '/')+1:] }
