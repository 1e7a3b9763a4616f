package privacy

import (
	"math"
	"math/big"
	"testing"
)

func laplaceFloat(t *testing.T, scale float64) *DiscreteLaplace {
	t.Helper()
	d, err := NewDiscreteLaplace(scale)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// laplaceCases covers the 64-bit path (integer, dyadic and non-dyadic
// float scales, an exact rational) and the big-integer path (a scale whose
// numerator and denominator exceed 64 bits).
func laplaceCases() []struct {
	name  string
	scale *big.Rat
} {
	bigScale, _ := new(big.Rat).SetString("1180591620717411303425/295147905179352825856") // (2^70+1)/2^68 ≈ 4
	bigOdd, _ := new(big.Rat).SetString("1180591620717411303425/984770902183611232881")   // (2^70+1)/3^44 ≈ 1.2
	out := []struct {
		name  string
		scale *big.Rat
	}{
		{"0.3", new(big.Rat).SetFloat64(0.3)},
		{"1", big.NewRat(1, 1)},
		{"2.5", new(big.Rat).SetFloat64(2.5)},
		{"10/3", big.NewRat(10, 3)},
		{"1000.1", new(big.Rat).SetFloat64(1000.1)},
		{"big≈4", bigScale},
		{"big≈1.2", bigOdd},
	}
	return out
}

// TestDiscreteLaplaceDistribution: χ² goodness of fit against the exact pmf
// P[x] ∝ exp(−|x|/scale) (cells merged to expected counts >= 5, threshold
// the χ² quantile at 1 − 1e-6) and the mean and variance (z-tests, total
// false-failure rate 1e-6), on N = 125,000 draws (quick) or 5·10^6 (long).
func TestDiscreteLaplaceDistribution(t *testing.T) {
	n := size(125_000, 5_000_000)
	for i, c := range laplaceCases() {
		t.Run(c.name, func(t *testing.T) {
			r := testRand(t, uint64(100+i))
			d, err := NewDiscreteLaplaceRat(c.scale)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := c.scale.Float64()
			lim := int(40*b) + 20
			pmf := pmfTable(lim, func(x int) float64 { return math.Exp(-math.Abs(float64(x)) / b) })
			counts := make([]int, len(pmf))
			xs := make([]float64, n)
			for j := range xs {
				x := d.Sample(r)
				xs[j] = float64(x)
				if x < int64(-lim) || x > int64(lim) {
					t.Fatalf("draw %d beyond ±%d", x, lim)
				}
				counts[int(x)+lim]++
			}
			stat, df := chiSquare(counts, pmf, n, 5)
			if th := chi2Threshold(df, falseFailure); stat > th {
				t.Errorf("χ² = %.1f > %.1f (df %d)", stat, th, df)
			}
			// Exact moments: p = e^{−1/b}, Var = 2p/(1−p)².
			p := math.Exp(-1 / b)
			_, _, m4 := moments(pmf)
			checkMoments(t, xs, 0, 2*p/((1-p)*(1-p)), m4)
		})
	}
}

// gaussianCases: tiny σ (almost all mass at 0), integer, non-dyadic
// (σ² with a 106-bit numerator: big-integer Bernoulli), and large σ.
var gaussianCases = []float64{0.3, 1, 3.7, 100.5, 10000}

// TestDiscreteGaussianDistribution: as for the Laplace, against the exact
// pmf P[x] ∝ exp(−x²/(2σ²)), N = 125,000 (quick) or 5·10^6 (long).
func TestDiscreteGaussianDistribution(t *testing.T) {
	n := size(125_000, 5_000_000)
	for i, sigma := range gaussianCases {
		t.Run(ftoa(sigma), func(t *testing.T) {
			r := testRand(t, uint64(200+i))
			g, err := NewDiscreteGaussian(sigma)
			if err != nil {
				t.Fatal(err)
			}
			lim := int(14*sigma) + 10
			pmf := pmfTable(lim, func(x int) float64 { return math.Exp(-float64(x) * float64(x) / (2 * sigma * sigma)) })
			counts := make([]int, len(pmf))
			xs := make([]float64, n)
			for j := range xs {
				x := g.Sample(r)
				xs[j] = float64(x)
				if x < int64(-lim) || x > int64(lim) {
					t.Fatalf("draw %d beyond ±%d", x, lim)
				}
				counts[int(x)+lim]++
			}
			stat, df := chiSquare(counts, pmf, n, 5)
			if th := chi2Threshold(df, falseFailure); stat > th {
				t.Errorf("χ² = %.1f > %.1f (df %d)", stat, th, df)
			}
			mean, v, m4 := moments(pmf)
			checkMoments(t, xs, mean, v, m4)
		})
	}
}

func ftoa(f float64) string { return big.NewFloat(f).Text('g', 6) }

// TestDiscreteGaussianLargeSigma checks moments at σ = 10^6 and 2^40 (the
// limit), where the discrete Gaussian's variance and fourth moment equal
// σ² and 3σ⁴ to within a relative exp(−2π²σ²).
func TestDiscreteGaussianLargeSigma(t *testing.T) {
	n := size(20_000, 1_000_000)
	for i, sigma := range []float64{1e6, MaxDiscreteScale} {
		r := testRand(t, uint64(300+i))
		g, err := NewDiscreteGaussian(sigma)
		if err != nil {
			t.Fatal(err)
		}
		xs := make([]float64, n)
		for j := range xs {
			xs[j] = float64(g.Sample(r))
		}
		checkMoments(t, xs, 0, sigma*sigma, 3*sigma*sigma*sigma*sigma)
	}
}

func TestDiscreteConstructors(t *testing.T) {
	for _, s := range []float64{0, -1, math.NaN(), math.Inf(1), 2 * MaxDiscreteScale} {
		if _, err := NewDiscreteLaplace(s); err == nil {
			t.Errorf("NewDiscreteLaplace(%v): no error", s)
		}
		if _, err := NewDiscreteGaussian(s); err == nil {
			t.Errorf("NewDiscreteGaussian(%v): no error", s)
		}
	}
	if _, err := NewDiscreteGaussianRat(big.NewRat(-1, 2)); err == nil {
		t.Error("NewDiscreteGaussianRat(−1/2): no error")
	}
	g, err := NewDiscreteGaussian(3.7)
	if err != nil {
		t.Fatal(err)
	}
	if want := new(big.Rat).Mul(new(big.Rat).SetFloat64(3.7), new(big.Rat).SetFloat64(3.7)); g.Sigma2().Cmp(want) != 0 {
		t.Errorf("σ² = %s, want the exact square of 3.7's value %s", g.Sigma2(), want)
	}
}

func TestDiscreteCosts(t *testing.T) {
	l := laplaceFloat(t, 4)
	if c := l.Cost(2); c.Kind != Pure || c.Eps != 0.5 || c.Rho < 0.125 || c.Rho > 0.125*(1+1e-14) {
		t.Errorf("DiscreteLaplace(4).Cost(2) = %+v, want pure ε = 0.5, ρ = 0.125", c)
	}
	// 1/3 is not a float: the cost must round up.
	l = laplaceFloat(t, 3)
	if c := l.Cost(1); c.Eps < 1.0/3 || new(big.Rat).SetFloat64(c.Eps).Cmp(big.NewRat(1, 3)) < 0 {
		t.Errorf("DiscreteLaplace(3).Cost(1).Eps = %v, below 1/3", c.Eps)
	}
	g, _ := NewDiscreteGaussian(2)
	if c := g.Cost(math.Sqrt2); c.Kind != ZCDP || c.Rho < 0.25 || c.Rho > 0.25*(1+1e-15) {
		t.Errorf("DiscreteGaussian(2).Cost(√2) = %+v, want ρ = 0.25 (rounded up)", c)
	}
}

// TestDiscreteDeterministic: a seeded stream gives the same draws, and a
// clone is an independent sampler with the same law.
func TestDiscreteDeterministic(t *testing.T) {
	g, _ := NewDiscreteGaussian(3.7)
	c := g.Clone()
	a, b := NewSeeded(5), NewSeeded(5)
	for range 1000 {
		if x, y := g.Sample(a), c.Sample(b); x != y {
			t.Fatalf("clone with equal seeds: %d != %d", x, y)
		}
	}
	counts := []int64{10, 20, 30}
	g.AddTo(NewSeeded(1), counts)
	if counts[0] == 10 && counts[1] == 20 && counts[2] == 30 {
		t.Error("AddTo added no noise (possible but unlikely at σ = 3.7: P < 1e-3)")
	}
}

func TestDiscreteAllocs(t *testing.T) {
	r := NewSeeded(1)
	l := laplaceFloat(t, 1000.1)
	g, _ := NewDiscreteGaussian(3.7)
	for range 100 { // warm the scratch
		l.Sample(r)
		g.Sample(r)
	}
	if a := testing.AllocsPerRun(1000, func() { l.Sample(r) }); a != 0 {
		t.Errorf("DiscreteLaplace.Sample allocates %v times", a)
	}
	if a := testing.AllocsPerRun(1000, func() { g.Sample(r) }); a > 0.05 {
		t.Errorf("DiscreteGaussian.Sample allocates %v times per draw", a)
	}
}
