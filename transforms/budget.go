package transforms

import (
	"reflect"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms/text"
)

// Token-budget sampling, as the paraphrase research built its PPDB
// training set: "we select a sample of pairs from PPDB XL such that the
// number of tokens is approximately the same as the number of tokens in
// the SimpWiki sentences" (Wieting and Gimpel 2017, section 4.1).
//
// Each pair gets a seeded pseudo-random priority, a hash of its ID, and the
// sample is the pairs of lowest priority whose tokens (both sides) add up
// to at most the budget. Priorities are cut into 2^20 cells; the pipeline
// sums the tokens of each cell over the whole corpus (a Beam combine) and
// keeps the cells below the first one that would pass the budget, so the
// sample falls short of the budget by less than one cell's tokens (about a
// millionth of the corpus). The sample is deterministic for a seed and
// independent of the order and bucketing of the data.

// budgetCellBits is the number of priority bits that make a cell.
const budgetCellBits = 20

// BudgetConfig configures token-budget sampling. A zero Tokens is off.
type BudgetConfig struct {
	Tokens int64
	Seed   uint64
}

func (c BudgetConfig) cell(id string) uint32 {
	return uint32(text.Hash64(c.Seed^0x5eed5eed, id) >> (64 - budgetCellBits))
}

func rowTokens(r *shards.Row) int64 { return int64(len(r.TokensA) + len(r.TokensB)) }

// TokenHistogram holds the tokens of each priority cell.
type TokenHistogram struct {
	Cells map[uint32]int64
}

// cut is the first cell that is not kept: the cells below it hold at most
// budget tokens. With no budget every cell is kept.
func (h TokenHistogram) cut(budget int64) (cut uint64, kept int64) {
	if budget <= 0 {
		return 1 << budgetCellBits, 0
	}
	cells := make([]uint32, 0, len(h.Cells))
	for c := range h.Cells {
		cells = append(cells, c)
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i] < cells[j] })
	for _, c := range cells {
		if kept+h.Cells[c] > budget {
			return uint64(c), kept
		}
		kept += h.Cells[c]
	}
	return 1 << budgetCellBits, kept
}

// tokenHistFn sums cell histograms.
type tokenHistFn struct{}

func (tokenHistFn) CreateAccumulator() TokenHistogram {
	return TokenHistogram{Cells: map[uint32]int64{}}
}

func (tokenHistFn) AddInput(a, b TokenHistogram) TokenHistogram {
	return tokenHistFn{}.MergeAccumulators(a, b)
}

func (tokenHistFn) MergeAccumulators(a, b TokenHistogram) TokenHistogram {
	if a.Cells == nil {
		a.Cells = map[uint32]int64{}
	}
	for c, n := range b.Cells {
		a.Cells[c] += n
	}
	return a
}

func (tokenHistFn) ExtractOutput(a TokenHistogram) TokenHistogram { return a }

// sumHistograms combines the per-bucket histograms into one, a singleton.
// An empty histogram joins them, so that the result exists even when no
// bucket emitted one (no budget, or no data): Beam's global combine of an
// empty collection has no element.
func sumHistograms(s beam.Scope, hists beam.PCollection) beam.PCollection {
	return beam.Combine(s, tokenHistFn{}, beam.Flatten(s, hists, beam.Create(s, TokenHistogram{Cells: map[uint32]int64{}})))
}

func init() {
	beam.RegisterType(reflect.TypeOf((*TokenHistogram)(nil)).Elem())
	register.Combiner1[TokenHistogram](&tokenHistFn{})
}
