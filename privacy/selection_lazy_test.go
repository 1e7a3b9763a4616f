package privacy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExponentialMechanismLazy checks the lazy walk against
// ExponentialMechanismWhere on the same draws: for random scores (with
// ties), bounds from tight to loose, unselectable indices and ok tests, the
// two must return the same index on every call, and the lazy one must not
// ask for more scores than there are.
func TestExponentialMechanismLazy(t *testing.T) {
	gen := rand.New(rand.NewPCG(3, 4))
	for trial := range 400 {
		n := 1 + gen.IntN(60)
		scores := make([]float64, n)
		upper := make([]float64, n)
		selectable := make([]bool, n)
		accept := make([]bool, n)
		for i := range n {
			scores[i] = math.Round(gen.NormFloat64()*20) / 4 // ties
			switch gen.IntN(3) {
			case 0:
				upper[i] = scores[i]
			case 1:
				upper[i] = scores[i] + gen.Float64()*5
			default:
				upper[i] = scores[i] + gen.Float64()*500
			}
			selectable[i] = gen.IntN(10) > 0
			accept[i] = gen.IntN(4) > 0
		}
		eps0 := []float64{0.05, 1, 20}[trial%3]
		seed := uint64(1000 + trial)
		ok := func(i int) bool { return accept[i] }
		okWhere := func(i int) bool { return selectable[i] && accept[i] }
		want := ExponentialMechanismWhere(NewSeeded(seed), scores, eps0, 1, okWhere, make([]float64, n))
		asked := 0
		exact := func(idx []int, out []float64) {
			for k, i := range idx {
				asked++
				out[k] = scores[i]
				if !selectable[i] {
					out[k] = math.Inf(-1)
				}
			}
		}
		var st LazySelection
		got := ExponentialMechanismLazy(NewSeeded(seed), upper, eps0, 1, exact, ok, &st)
		if got != want {
			t.Fatalf("trial %d: ExponentialMechanismLazy = %d, want %d (ExponentialMechanismWhere on the exact scores)\nscores %v\nupper %v", trial, got, want, scores, upper)
		}
		if asked > n {
			t.Fatalf("trial %d: %d exact scores asked for %d indices", trial, asked, n)
		}
	}
}

// TestExponentialMechanismLazyPrunes checks that bounds far below the best
// score keep exact from being asked: 1,000 indices, one scoring 1,000 and
// the rest bounded by 0, at ε0/(2Δ) = 1, leave the rest out unless a
// Gumbel draw beats the best by 1,000 (never, in float64).
func TestExponentialMechanismLazyPrunes(t *testing.T) {
	const n = 1000
	upper := make([]float64, n)
	upper[0] = 1000
	asked := 0
	exact := func(idx []int, out []float64) {
		for k, i := range idx {
			asked++
			out[k] = upper[i]
		}
	}
	var st LazySelection
	for seed := range uint64(20) {
		asked = 0
		if got := ExponentialMechanismLazy(NewSeeded(seed), upper, 2, 1, exact, func(int) bool { return true }, &st); got != 0 {
			t.Fatalf("seed %d: ExponentialMechanismLazy = %d, want 0", seed, got)
		}
		if asked > 16 {
			t.Errorf("seed %d: %d exact scores asked, want at most the first batch of 16", seed, asked)
		}
	}
	if got := ExponentialMechanismLazy(NewSeeded(1), upper, 2, 1, exact, func(int) bool { return false }, &st); got != -1 {
		t.Errorf("ExponentialMechanismLazy(nothing accepted) = %d, want -1", got)
	}
}

func BenchmarkExponentialMechanismLazy(b *testing.B) {
	const n = 43_744
	gen := rand.New(rand.NewPCG(1, 2))
	upper := make([]float64, n)
	for i := range upper {
		upper[i] = gen.Float64() * 1000
	}
	exact := func(idx []int, out []float64) {
		for k, i := range idx {
			out[k] = upper[i] - 10
		}
	}
	var st LazySelection
	r := NewSeeded(1)
	b.ReportAllocs()
	for b.Loop() {
		ExponentialMechanismLazy(r, upper, 1, 1, exact, func(int) bool { return true }, &st)
	}
}
