package solvers

import (
	"context"
	"math"
	"testing"

	"github.com/dpsynth/synth/model"
)

// TestFitAfterConvergedFit checks that a fit run to its minimum still
// moves when new measurements are added: the one-way fit of noisy tables
// converges (its line search then accepts ever smaller steps), a pair with
// a strong dependence is measured, and the warm-started fit must bring the
// model's pair marginal close to it. Before each fit started from the safe
// step, the second fit kept the first one's step (about 1e-16) and left
// the model where it was.
func TestFitAfterConvergedFit(t *testing.T) {
	sizes := []int{2, 2}
	// Noisy one-way tables (each sums to more than 1, as noisy counts do):
	// the least-squares minimum leaves a residual, and a long run ends where
	// no step passes the line search.
	f := newFactoredFit(&model.Settings{})
	defer f.close()
	oneWays, err := model.NewTree(sizes, [][]int{{0}, {1}})
	if err != nil {
		t.Fatal(err)
	}
	f.add(oneWays, toMeas([]int{0}, []float64{0.72, 0.31}, 1, 1), toMeas([]int{1}, []float64{0.41, 0.62}, 1, 1))
	if err := f.run(context.Background(), 5000, -1); err != nil {
		t.Fatal(err)
	}
	// The pair's shares keep the one-way tables (0.7/0.3 and 0.4/0.6) but
	// not their independence (0.28, 0.42, 0.12, 0.18).
	want := []float64{0.38, 0.32, 0.02, 0.28}
	tree, err := model.NewTree(sizes, [][]int{{0}, {1}, {0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	f.add(tree, toMeas([]int{0, 1}, want, 1, 1))
	if err := f.run(context.Background(), 100, 1e-12); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, 4)
	if err := f.cur.Marginal([]int{0, 1}, got); err != nil {
		t.Fatal(err)
	}
	dist := 0.0
	for i := range got {
		dist += math.Abs(got[i] - want[i])
	}
	// Starting from independence the distance is 0.8; the least-squares fit
	// of the three tables (each at weight 1) is within 0.01 of the pair.
	if dist > 0.01 {
		t.Errorf("pair marginal after the second fit = %.4f, want within 0.01 of %v (L1 %.4f)", got, want, dist)
	}
}
