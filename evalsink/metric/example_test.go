package metric_test

import (
	"fmt"

	"github.com/parastream/parastream/evalsink/metric"
)

// Pearson's r of predicted similarities against gold scores, the first
// figure of a similarity row (Result.Pearson, ×100 there).
func ExamplePearson() {
	gold := []float64{0, 1, 2, 3, 4, 5}
	predicted := []float64{0.1, 0.2, 0.4, 0.5, 0.7, 0.9}
	fmt.Printf("%.4f\n", metric.Pearson(gold, predicted))
	// Output: 0.9941
}

// Spearman's ρ ranks both sides first, ties sharing their average rank:
// a monotone prediction scores 1 whatever its scale.
func ExampleSpearman() {
	gold := []float64{0, 1, 2, 3, 4, 5}
	predicted := []float64{0.1, 0.2, 0.4, 0.5, 0.7, 0.9}
	fmt.Printf("%.4f\n", metric.Spearman(gold, predicted))
	fmt.Println(metric.Ranks([]float64{0.5, 0.1, 0.5}))
	// Output:
	// 1.0000
	// [2.5 1 2.5]
}
