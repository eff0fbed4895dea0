package evalsink

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parastream/parastream/internal/atomicfile"
)

// MTEBScore is a figure in MTEB's metric: the Spearman correlation
// (and Pearson's r) of the cosines with the gold scores over all of a
// task's pairs pooled, as MTEB's STS tasks score them (main score
// cosine_spearman), read from the evaluation's rows: a year's pooled row
// of the STS sets, the STS Benchmark's set rows.
type MTEBScore struct {
	Task     string  // MTEB's task name: STS12..STS16, STSBenchmark
	Split    string  // MTEB's split: test, validation
	Revision string  // the MTEB dataset's revision the task names
	Spearman float64 // ×100
	Pearson  float64 // ×100
	Pairs    int64
}

// mtebTasks are MTEB's English STS tasks parastream's sets correspond
// to, with the dataset revisions MTEB's task definitions name.
func mtebTasks() []struct{ corpus, year, task, revision string } {
	return []struct{ corpus, year, task, revision string }{
		{"sts", "2012", "STS12", "a0d554a64d88156834ff5ae9920b964011b16384"},
		{"sts", "2013", "STS13", "7e90230a92c190f1bf69ae9002b8cea547a64cca"},
		{"sts", "2014", "STS14", "6031580fec1f6af667f0bd2da0a551cf4f0b2375"},
		{"sts", "2015", "STS15", "ae752c7c21bf194d8b67fd573edf7ae58183cbe3"},
		{"stsb", "", "STSBenchmark", "b0fddb56ed78048fa8b90373c8a3cfc37b684831"},
	}
}

// MTEBScores are the MTEB figures of one evaluation's rows, in MTEB's
// task order. The STS years take their pooled rows; the STS Benchmark its
// dev set as MTEB's "validation" split and its test set as "test".
func MTEBScores(rows []Result) []MTEBScore {
	var out []MTEBScore
	for _, t := range mtebTasks() {
		for _, r := range rows {
			if r.Corpus != t.corpus || r.Pearson == nil || r.Spearman == nil || r.Adaptation != "" {
				continue
			}
			split := ""
			switch {
			case t.corpus == "sts" && r.Kind == KindPooled && r.Year == t.year:
				split = "test"
			case t.corpus == "stsb" && r.Kind == KindDataset && r.Split == "dev":
				split = "validation"
			case t.corpus == "stsb" && r.Kind == KindDataset && r.Split == "test":
				split = "test"
			}
			if split != "" {
				out = append(out, MTEBScore{Task: t.task, Split: split, Revision: t.revision, Spearman: *r.Spearman, Pearson: *r.Pearson, Pairs: r.Pairs})
			}
		}
	}
	return out
}

// MTEBMeta describes the model in MTEB's model_meta.json.
type MTEBMeta struct {
	Name     string // the model's name, as "org/name"
	Revision string // the checkpoint's hash
	EmbedDim int
	// Datasets are those the model was trained on (MTEB's
	// training_datasets), by name.
	Datasets []string
	Version  string // parastream's
}

// WriteMTEB writes the scores in the layout of MTEB's results repository:
// dir/<name with "/" as "__">/<revision>/<Task>.json, one per task (the
// TaskResult fields: dataset_revision, task_name, mteb_version, scores by
// split, each a list of one "default" subset with main_score, hf_subset
// and languages, evaluation_time), and model_meta.json beside them. It
// returns the files written.
func WriteMTEB(dir string, scores []MTEBScore, meta MTEBMeta) ([]string, error) {
	if len(scores) == 0 {
		return nil, fmt.Errorf("mteb: the evaluation has no STS year's pooled figures nor an STS Benchmark set to write")
	}
	if meta.Name == "" || meta.Revision == "" {
		return nil, fmt.Errorf("mteb: a model name and a revision are needed (got %q, %q)", meta.Name, meta.Revision)
	}
	out := filepath.Join(dir, strings.ReplaceAll(meta.Name, "/", "__"), meta.Revision)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	byTask := map[string][]MTEBScore{}
	var tasks []string
	for _, s := range scores {
		if byTask[s.Task] == nil {
			tasks = append(tasks, s.Task)
		}
		byTask[s.Task] = append(byTask[s.Task], s)
	}
	var files []string
	for _, task := range tasks {
		split := map[string][]map[string]any{}
		for _, s := range byTask[task] {
			sp, p := s.Spearman/100, s.Pearson/100
			split[s.Split] = append(split[s.Split], map[string]any{
				"pearson": p, "spearman": sp, "cosine_pearson": p, "cosine_spearman": sp,
				"main_score": sp, "hf_subset": "default", "languages": []string{"eng-Latn"},
			})
		}
		path := filepath.Join(out, task+".json")
		doc := map[string]any{
			"dataset_revision": byTask[task][0].Revision,
			"task_name":        task,
			"mteb_version":     nil,
			"scores":           split,
			"evaluation_time":  nil,
			"kg_co2_emissions": nil,
		}
		if err := atomicfile.WriteFile(path, mustJSON(doc)); err != nil {
			return nil, fmt.Errorf("mteb: %w", err)
		}
		files = append(files, path)
	}
	datasets := map[string][]string{}
	for _, d := range slices.Sorted(slices.Values(meta.Datasets)) {
		datasets[d] = []string{"train"}
	}
	path := filepath.Join(out, "model_meta.json")
	doc := map[string]any{
		"name":               meta.Name,
		"revision":           meta.Revision,
		"release_date":       nil,
		"languages":          []string{"eng-Latn"},
		"embed_dim":          meta.EmbedDim,
		"similarity_fn_name": "cosine",
		"framework":          []string{"parastream"},
		"open_weights":       true,
		"training_datasets":  datasets,
		"reference":          nil,
		"loader":             nil,
		"parastream_version": meta.Version,
	}
	if err := atomicfile.WriteFile(path, mustJSON(doc)); err != nil {
		return nil, fmt.Errorf("mteb: %w", err)
	}
	return append(files, path), nil
}
