package privacy

import (
	"math"
	"testing"
)

func TestGridFor(t *testing.T) {
	tests := []struct {
		sens float64
		want int
	}{
		{1, -10}, {1024, 0}, {1023, -1}, {2048, 1}, {1.0 / 48842, -26},
	}
	for _, tt := range tests {
		if got := GridFor(tt.sens); got != tt.want {
			t.Errorf("GridFor(%g) = %d, want %d", tt.sens, got, tt.want)
		}
		if g := pow2(GridFor(tt.sens)); g > tt.sens/1024 || 2*g <= tt.sens/1024 {
			t.Errorf("GridFor(%g): 2^e = %g is not the largest power of two <= Δ/1024", tt.sens, g)
		}
	}
}

// TestSnappedLaplace: outputs lie on the grid, and (release − snapped)/g
// follows the discrete Laplace of scale (Δ + g)/(ε·g): χ² against the exact
// pmf, N = 50,000 (quick) or 2·10^6 (long), threshold at 1 − 1e-6.
func TestSnappedLaplace(t *testing.T) {
	const sens, eps = 0.5, 1.0
	const gridExp = -4 // a coarse grid (g = 1/16) so that the pmf table stays small
	m, err := NewSnappedLaplace(sens, 1, eps, gridExp)
	if err != nil {
		t.Fatal(err)
	}
	g := m.Granularity()
	if g != 1.0/16 {
		t.Fatalf("granularity %g", g)
	}
	b := (sens + g) / (eps * g)
	r := testRand(t, 800)
	n := size(50_000, 2_000_000)
	lim := int(40*b) + 20
	pmf := pmfTable(lim, func(x int) float64 { return math.Exp(-math.Abs(float64(x)) / b) })
	counts := make([]int, len(pmf))
	const x = 3.14159
	snapped := math.RoundToEven(x/g) * g
	for range n {
		y, err := m.Release(r, x)
		if err != nil {
			t.Fatal(err)
		}
		k := (y - snapped) / g
		if k != math.Trunc(k) || math.Abs(k) > float64(lim) {
			t.Fatalf("release %v is not on the grid %g around %v", y, g, snapped)
		}
		counts[int(k)+lim]++
	}
	stat, df := chiSquare(counts, pmf, n, 5)
	if th := chi2Threshold(df, falseFailure); stat > th {
		t.Errorf("χ² = %.1f > %.1f (df %d)", stat, th, df)
	}
	if c := m.Cost(); c.Kind != Pure || c.Eps != eps {
		t.Errorf("cost %v, want pure ε = %g", c, eps)
	}
}

func TestSnappedGaussian(t *testing.T) {
	const sens, sigma = 1.0 / 48842, 0.003
	e := GridFor(sens)
	m, err := NewSnappedGaussian(sens, 2, sigma, e)
	if err != nil {
		t.Fatal(err)
	}
	g := m.Granularity()
	want := (sens + g*math.Sqrt2) * (sens + g*math.Sqrt2) / (2 * sigma * sigma)
	if c := m.Cost(); c.Kind != ZCDP || c.Rho < want || c.Rho > want*(1+1e-13) {
		t.Errorf("cost ρ = %.17g, want (Δ + g√2)²/(2σ²) = %.17g rounded up", c.Rho, want)
	}
	// Snapping costs at most a factor (1 + √c/1024)² over the unsnapped ρ.
	if base := sens * sens / (2 * sigma * sigma); want > base*(1+math.Sqrt2/1024)*(1+math.Sqrt2/1024) {
		t.Errorf("snapping cost %g over %g", want, base)
	}
	r := testRand(t, 801)
	x := []float64{0.1, 0.25, 0.3333}
	out := make([]float64, 3)
	xs := make([]float64, size(20_000, 1_000_000))
	for i := range xs {
		if err := m.ReleaseVector(r, x, out); err != nil {
			t.Fatal(err)
		}
		for _, y := range out {
			if k := y / g; k != math.Trunc(k) {
				t.Fatalf("release %v not on the grid %g", y, g)
			}
		}
		xs[i] = out[0] - math.RoundToEven(x[0]/g)*g
	}
	// σ/g ≈ 3,000 grid steps: the discrete Gaussian's moments are σ², 3σ⁴.
	checkMoments(t, xs, 0, sigma*sigma, 3*sigma*sigma*sigma*sigma)
}

func TestSnappedErrors(t *testing.T) {
	m, err := NewSnappedLaplace(1, 1, 1, -10)
	if err != nil {
		t.Fatal(err)
	}
	r := NewSeeded(1)
	for _, x := range []float64{math.NaN(), math.Inf(1), 1e300, 0x1p43} {
		if _, err := m.Release(r, x); err == nil {
			t.Errorf("Release(%v) succeeded", x)
		}
	}
	if err := m.ReleaseVector(r, []float64{1, math.NaN()}, make([]float64, 2)); err == nil {
		t.Error("ReleaseVector with a NaN succeeded")
	}
	bad := []func() error{
		func() error { _, err := NewSnappedLaplace(0, 1, 1, 0); return err },
		func() error { _, err := NewSnappedLaplace(1, 0, 1, 0); return err },
		func() error { _, err := NewSnappedLaplace(1, 1, math.NaN(), 0); return err },
		func() error { _, err := NewSnappedLaplace(1, 1, 1, 5000); return err },
		func() error { _, err := NewSnappedLaplace(1, 1, 1e-20, -10); return err }, // scale beyond 2^40
		func() error { _, err := NewSnappedGaussian(1, 1, -1, 0); return err },
		func() error { _, err := NewSnappedGaussian(1, 1, 1e30, -900); return err },
	}
	for i, f := range bad {
		if f() == nil {
			t.Errorf("bad constructor %d succeeded", i)
		}
	}
}
