package query

import (
	"math/rand/v2"
	"testing"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/universe"
)

// TestOperatorDeterministic: on a universe large enough to run on two
// workers, repeated calls give bit-identical answers and adjoints (the
// partition of the work, and so every floating-point sum, is the same each
// call). Seeded solver runs depend on it.
func TestOperatorDeterministic(t *testing.T) {
	b, err := datasets.ReadFile("adult-reduced/adult-reduced-domain.json")
	if err != nil {
		t.Fatal(err)
	}
	dom, err := universe.ParseDomain(b)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := KWay(dom, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	op, err := wl.Compile(&CompileSettings{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	r := rand.New(rand.NewPCG(1, 2))
	d := make([]float64, op.K())
	for i := range d {
		d[i] = r.Float64()
	}
	y := make([]float64, op.M())
	for j := range y {
		y[j] = r.NormFloat64()
	}
	a0, a := make([]float64, op.M()), make([]float64, op.M())
	x0, x := make([]float64, op.K()), make([]float64, op.K())
	op.Answer(d, a0)
	op.Adjoint(y, x0)
	for it := range 100 {
		op.Answer(d, a)
		for j := range a {
			if a[j] != a0[j] {
				t.Fatalf("call %d: Answer[%d] (%s) = %v, first call gave %v", it, j, wl.Label(j), a[j], a0[j])
			}
		}
		op.Adjoint(y, x)
		for i := range x {
			if x[i] != x0[i] {
				t.Fatalf("call %d: Adjoint[%d] = %v, first call gave %v", it, i, x[i], x0[i])
			}
		}
	}
}
