package solvers

import (
	"context"
	"slices"
	"testing"

	"github.com/dpsynth/synth/internal/par"
)

// TestLSFitSUREBest: with SURE stopping, the fit returns the distribution
// of the step with the smallest risk estimate bit for bit — kept without a
// copy while later trials and steps reuse the other buffers — also when
// that step is neither the first nor the last.
func TestLSFitSUREBest(t *testing.T) {
	fx := small(t)
	for _, eps := range []float64{0.05, 0.3, 3} {
		p := fx.problem(t, eps, 1e-9, 11)
		s := &Project{}
		plan, err := s.Plan(&p.Shape)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := measure(p, plan.groups, p.Neighbours, plan.count)
		if err != nil {
			t.Fatal(err)
		}
		team := par.NewTeam(0)
		f := newLSFit(ms.op, ms.y, ms.w, team)
		f.start(nil)
		path := [][]float64{slices.Clone(f.d)} // the distribution after each step
		f.trace = func(_ int, _ float64, d []float64) { path = append(path, slices.Clone(d)) }
		f.useSURE(p.Rand.NormFloat64, 0.01, 5)
		if err := f.run(context.Background(), 300, 1e-12); err != nil {
			t.Fatal(err)
		}
		best := f.sure.bestIt
		t.Logf("ε = %g: %d steps, best %d", eps, len(path)-1, best)
		if !slices.Equal(f.d, path[best]) {
			t.Errorf("ε = %g: the fit's output is not the distribution of its best step %d", eps, best)
		}
		// A second run continues from there with the buffers still apart.
		if err := f.run(context.Background(), 3, 1e-12); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(f.d, path[f.sure.bestIt]) {
			t.Errorf("ε = %g: after a second run, the output is not the best step's", eps)
		}
		team.Close()
	}
}
