package evalsink

import (
	"slices"
	"testing"

	"github.com/parastream/parastream/corpora"
)

// TestEvalSetsHaveTasks checks that evalsink scores every evaluation set
// corpora's formats mark (corpora.Eval) by the task the entry names, and
// that the sets evalsink's tasks name are such sets: a set added to the
// format list without its task's settings here (a classifier, a ranking
// scorer and label), or a task evalsink does not run, fails here rather
// than giving no row.
func TestEvalSetsHaveTasks(t *testing.T) {
	for _, task := range corpora.Tasks() {
		switch task {
		case TaskSimilarity, TaskRetrieval, TaskClassification, TaskRanking, TaskWordContext:
		default:
			t.Errorf("corpora's task %q: evalsink runs no such task (Evaluate, tasks)", task)
		}
	}
	classified := map[string]bool{}
	for _, c := range classifyTasks() {
		classified[c.corpus] = true
		if task := corpora.Evaluation(c.corpus).Task; task != TaskClassification && task != TaskSimilarity {
			t.Errorf("classification task %s reads corpus %s, whose format is no classification or similarity set (task %q)", c.name, c.corpus, task)
		}
	}
	for corpus := range rankingLabels() {
		if task := corpora.Evaluation(corpus).Task; task != TaskRanking {
			t.Errorf("ranking label of corpus %s, whose format is no ranking set (task %q)", corpus, task)
		}
	}
	sets := corpora.EvalFormats()
	if len(sets) == 0 {
		t.Fatal("no evaluation set among corpora's formats")
	}
	for _, f := range sets {
		e := f.Eval
		// LoadSets reads every split of a set with an official split, and
		// the held-out test split of one without: only retrieval's training
		// corpora have none.
		if (e.Task == TaskRetrieval) != (e.Split == nil) {
			t.Errorf("evaluation set %s: task %s, official split %v: a retrieval set takes the hashed split, every other set its official one",
				f.Corpus, e.Task, e.Split != nil)
		}
		switch e.Task {
		case TaskClassification:
			if !classified[f.Corpus] {
				t.Errorf("classification set %s has no classifier (classifyTasks)", f.Corpus)
			}
		case TaskRanking:
			s := &Set{Corpus: f.Corpus, Split: "test", Dataset: f.Corpus + "/test", Task: e.Task}
			if len(rankingDefs(s)) == 0 || rankingLabels()[f.Corpus] == nil {
				t.Errorf("ranking set %s has no scorer (rankingDefs) or no label (rankingLabels)", f.Corpus)
			}
		}
		if taskLabels()[f.Corpus] == nil && e.Task != TaskSimilarity && e.Task != TaskRetrieval {
			t.Errorf("evaluation set %s (%s) has no label in the report", f.Corpus, e.Task)
		}
	}
	if got := corpusOrder(); !slices.Equal(got[:5], []string{"sts", "stsb", "sick", "reddit", "quora"}) {
		t.Errorf("the report's corpora begin %v: similarity then retrieval", got)
	}
}
