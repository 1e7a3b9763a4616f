package privacy

import (
	"fmt"
	"math"
	"testing"
)

// dgPMF is N_Z(0, v) on [−n, n] by direct summation (index z + n).
func dgPMF(v float64, n int) []float64 {
	p := make([]float64, 2*n+1)
	s := 0.0
	for z := -n; z <= n; z++ {
		p[z+n] = math.Exp(-float64(z*z) / (2 * v))
		s += p[z+n]
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// convolve returns a*b (both centred: index i is value i − (len−1)/2).
func convolve(a, b []float64) []float64 {
	out := make([]float64, len(a)+len(b)-1)
	for i, x := range a {
		for j, y := range b {
			out[i+j] += x * y
		}
	}
	return out
}

// sumPMF is the law of m independent N_Z(0, v) draws, centred.
func sumPMF(m int, v float64, n int) []float64 {
	one := dgPMF(v, n)
	y := one
	for i := 1; i < m; i++ {
		y = convolve(y, one)
	}
	return y
}

// bruteBranchDelta is δ(t) of a branch whose noise sum has law y (centred):
// E[(1 − e^{t−L})_+] with L = (m − 2Y)/(2v).
func bruteBranchDelta(y []float64, m int, v, t float64) float64 {
	c := (len(y) - 1) / 2
	d := 0.0
	for i, p := range y {
		l := (float64(m) - 2*float64(i-c)) / (2 * v)
		if l > t {
			d += p * (1 - math.Exp(t-l))
		}
	}
	return d
}

// stagedRelease is a count at σ_c then one of branches chosen by a rule on
// the count's noise, each branch's noise sum with a law computed by
// convolution: exact returns the release's δ(ε) by direct summation.
type stagedRelease struct {
	vc    float64
	count []float64 // the count's noise, centred
	br    []GaussianBranch
	laws  [][]float64 // each branch's noise sum, centred
}

func newStagedRelease(sc float64, br []GaussianBranch) *stagedRelease {
	r := &stagedRelease{vc: sigma2Down(sc), br: br}
	r.count = dgPMF(r.vc, int(14*sc))
	for _, b := range br {
		r.laws = append(r.laws, sumPMF(b.Tables, sigma2Down(b.Sigma), int(14*b.Sigma)))
	}
	return r
}

// loss is the count's privacy loss at noise x.
func (r *stagedRelease) loss(x int) float64 { return (1 - 2*float64(x)) / (2 * r.vc) }

// branchDelta is branch b's δ at t.
func (r *stagedRelease) branchDelta(b int, t float64) float64 {
	return bruteBranchDelta(r.laws[b], r.br[b].Tables, sigma2Down(r.br[b].Sigma), t)
}

func (r *stagedRelease) exact(eps float64, pick func(x int) int) float64 {
	cn := (len(r.count) - 1) / 2
	d := 0.0
	for i, p := range r.count {
		x := i - cn
		d += p * r.branchDelta(pick(x), eps-r.loss(x))
	}
	return d
}

func TestStagedGaussianOneBranchExact(t *testing.T) {
	// With one table and no count the bound is the discrete Gaussian's own
	// δ (CKS Theorem 7), computed here by direct summation.
	for _, tc := range []struct{ sigma, eps float64 }{{1.5, 0.5}, {3, 0.2}, {10, 0.1}, {40, 0.01}, {2, 2}} {
		v := sigma2Down(tc.sigma)
		want := bruteBranchDelta(dgPMF(v, int(30*tc.sigma)+5), 1, v, tc.eps)
		got := StagedGaussian{Branches: []GaussianBranch{{Tables: 1, Sigma: tc.sigma}}}.Delta(tc.eps)
		if got < want*(1-1e-12) || got > want*(1+1e-9)+1e-15 {
			t.Errorf("Delta(σ %g, ε %g) = %.12g, want %.12g", tc.sigma, tc.eps, got, want)
		}
	}
}

func TestBranchTVBound(t *testing.T) {
	// branchTV bounds the distance between a sum of m discrete Gaussians and
	// the discrete Gaussian of the summed variance; at v near 1 the
	// difference is visible, so the bound is checked where it bites.
	for _, tc := range []struct {
		m int
		v float64
	}{{2, 1}, {3, 1.2}, {4, 1.5}, {2, 2}, {5, 2.5}, {3, 4}} {
		n := int(12*math.Sqrt(tc.v)) + 3
		y := sumPMF(tc.m, tc.v, n)
		c := (len(y) - 1) / 2
		z := dgPMF(float64(tc.m)*tc.v, c)
		tv := 0.0
		for i := range y {
			tv += math.Abs(y[i] - z[i])
		}
		tv /= 2
		if b := branchTV(tc.m, tc.v); b < tv {
			t.Errorf("branchTV(%d, %g) = %.3g, below the true distance %.3g", tc.m, tc.v, b, tv)
		}
	}
	if b := branchTV(400, 64); b > 1e-25 {
		t.Errorf("branchTV(400, 64) = %g, want negligible", b)
	}
}

func TestStagedGaussianSumOfTables(t *testing.T) {
	// Several tables: the bound holds against the exact law of the sum and
	// exceeds it by at most the total-variation term.
	for _, tc := range []struct {
		m          int
		sigma, eps float64
	}{{3, 3, 0.3}, {5, 4, 0.5}, {8, 6, 0.2}} {
		v := sigma2Down(tc.sigma)
		y := sumPMF(tc.m, v, int(14*tc.sigma))
		want := bruteBranchDelta(y, tc.m, v, tc.eps)
		got := StagedGaussian{Branches: []GaussianBranch{{Tables: tc.m, Sigma: tc.sigma}}}.Delta(tc.eps)
		slack := branchTV(tc.m, v) * (1 + math.Exp(tc.eps))
		if got < want*(1-1e-12) || got > want+slack+1e-12 {
			t.Errorf("Delta(%d tables, σ %g, ε %g) = %.12g, want %.12g (+ at most %.3g)", tc.m, tc.sigma, tc.eps, got, want, slack)
		}
	}
}

func TestStagedGaussianCountAndBranches(t *testing.T) {
	// A count, then one of two branches chosen by the count's noise at a
	// threshold: the bound is at least every such release's exact δ, and
	// equals the composition when the branches coincide.
	const sc, eps = 2.5, 0.4
	br := []GaussianBranch{{Tables: 1, Sigma: 3}, {Tables: 1, Sigma: 2.2}}
	r := newStagedRelease(sc, br)
	bound := StagedGaussian{CountSigma: sc, Branches: br}.Delta(eps)
	for _, thr := range []int{-100, -3, 0, 2, 100} {
		for _, flip := range []bool{false, true} {
			pick := func(x int) int {
				if (x >= thr) != flip {
					return 1
				}
				return 0
			}
			if e := r.exact(eps, pick); bound < e*(1-1e-12) {
				t.Errorf("threshold %d (flip %v): bound %.10g below the release's δ %.10g", thr, flip, bound, e)
			}
		}
	}
	one := StagedGaussian{CountSigma: sc, Branches: br[1:]}.Delta(eps)
	if e := r.exact(eps, func(int) int { return 1 }); math.Abs(one-e) > 1e-9*e {
		t.Errorf("one branch: Delta = %.12g, want the composition's %.12g", one, e)
	}
}

// gdpDelta is the δ(ε) of μ-GDP (Dong, Roth and Su).
func gdpDelta(mu, eps float64) float64 {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	return phi(-eps/mu+mu/2) - math.Exp(eps)*phi(-eps/mu-mu/2)
}

func TestStagedGaussianLargeSigmaIsGDP(t *testing.T) {
	// At the suite's scales the lattice is invisible: the bound matches the
	// continuous Gaussian's exact δ, and sits below the zCDP conversion's.
	for _, tc := range []struct {
		sc     float64
		tables int
		sigma  float64
		eps    float64
	}{{531, 165, 680, 0.1}, {112, 120, 60, 0.5}, {58, 36, 25, 1}} {
		g := StagedGaussian{CountSigma: tc.sc, Branches: []GaussianBranch{{Tables: tc.tables, Sigma: tc.sigma}}}
		got := g.Delta(tc.eps)
		mu := math.Sqrt(1/(tc.sc*tc.sc) + float64(tc.tables)/(tc.sigma*tc.sigma))
		want := gdpDelta(mu, tc.eps)
		if math.Abs(got-want) > 0.02*want {
			t.Errorf("%+v: Delta = %.6g, GDP's δ %.6g", tc, got, want)
		}
		if z := RhoToDelta(mu*mu/2, tc.eps); got > z {
			t.Errorf("%+v: Delta = %.6g above the zCDP conversion's %.6g", tc, got, z)
		}
	}
}

func ExampleStagedGaussian() {
	// A noisy record count (σ = 531) and then one of two sets of tables,
	// chosen by the count: 165 tables at σ = 680 or 45 at σ = 355 (the same
	// zCDP ρ). At ε = 0.1 the bound is below the δ the zCDP conversion
	// gives the same ρ.
	g := StagedGaussian{CountSigma: 531, Branches: []GaussianBranch{{Tables: 165, Sigma: 680}, {Tables: 45, Sigma: 355}}}
	rho := 1/(2*531.0*531) + 165/(2*680.0*680)
	fmt.Printf("exact %.2e, zCDP %.2e\n", g.Delta(0.1), RhoToDelta(rho, 0.1))
	// Output:
	// exact 2.48e-10, zCDP 1.29e-09
}

func TestTailSumBrackets(t *testing.T) {
	// The Gaussian-integral bracket holds the exact suffix sum and is
	// narrow where Delta reads it (4–7 standard deviations out) at the
	// scales where it replaces the table (σ above 2,500).
	for _, v := range []float64{2.5, 900, 4e6} {
		d := newDGTail(v)
		if d.suffix == nil {
			t.Fatalf("v = %g: no table", v)
		}
		sd := math.Sqrt(v)
		for _, k := range []float64{0, 1, math.Floor(sd / 2), math.Floor(sd), math.Floor(4 * sd), math.Floor(6 * sd), math.Floor(7 * sd)} {
			exact := d.suffix[int(k)] // the table's sum
			lo, hi := tailSum(v, k)
			if lo > exact || hi < exact {
				t.Errorf("tailSum(%g, %g) = [%.15g, %.15g], does not hold %.15g", v, k, lo, hi, exact)
			}
			if k >= 4*sd && v >= 1e6 && hi-lo > 1e-5*exact {
				t.Errorf("tailSum(%g, %g) = [%.15g, %.15g]: wider than 10⁻⁵ of %.15g", v, k, lo, hi, exact)
			}
		}
	}
}

func TestStagedGaussianCountAndSums(t *testing.T) {
	// A count, then 4 tables at σ = 4 or 9 tables at σ = 6, chosen by the
	// count: the bound holds every threshold rule's exact δ (the sums'
	// laws by convolution) and exceeds the worst by at most the
	// total-variation terms.
	const sc, eps = 3.0, 0.6
	br := []GaussianBranch{{Tables: 4, Sigma: 4}, {Tables: 9, Sigma: 6}}
	r := newStagedRelease(sc, br)
	slack := 0.0
	for _, b := range br {
		slack = max(slack, branchTV(b.Tables, sigma2Down(b.Sigma))*(1+math.Exp(eps+14/sc)))
	}
	bound := StagedGaussian{CountSigma: sc, Branches: br}.Delta(eps)
	worst := 0.0
	for _, thr := range []int{-100, -2, 0, 3, 100} {
		for _, flip := range []bool{false, true} {
			e := r.exact(eps, func(x int) int {
				if (x >= thr) != flip {
					return 1
				}
				return 0
			})
			worst = max(worst, e)
			if bound < e*(1-1e-12) {
				t.Errorf("threshold %d (flip %v): bound %.10g below the release's δ %.10g", thr, flip, bound, e)
			}
		}
	}
	// The best rule for an adversary picks, at each x, the worse branch:
	// the bound is that rule's δ up to the total-variation terms.
	if best := r.exact(eps, func(x int) int {
		if r.branchDelta(1, eps-r.loss(x)) > r.branchDelta(0, eps-r.loss(x)) {
			return 1
		}
		return 0
	}); bound > best+slack+1e-12 || best < worst*(1-1e-12) {
		t.Errorf("bound %.10g, the worst rule's δ %.10g (+ at most %.3g), thresholds' worst %.10g", bound, best, slack, worst)
	}
}

func TestStagedGaussianExtremes(t *testing.T) {
	// Budgets far below any use still return (a bound of 1 where the sums
	// cannot be taken), and the block sums bound the term-by-term ones.
	for _, sc := range []float64{1e9, 1e13, 1e200} {
		g := StagedGaussian{CountSigma: sc, Branches: []GaussianBranch{{Tables: 10, Sigma: sc}}}
		if d := g.Delta(1e-30); !(d >= 0 && d <= 1) {
			t.Errorf("σ %g: Delta = %v", sc, d)
		}
	}
	for _, tc := range []struct {
		v    float64
		a, b int64
	}{{1e8, -30000, 29000}, {1e8, 5000, 9000}, {1e8, -9000, -5000}, {4e6, 100, 2000}} {
		exact := 0.0
		for x := tc.a; x <= tc.b; x++ {
			exact += math.Exp(-float64(x*x) / (2 * tc.v))
		}
		if got := blockMass(tc.v, tc.a, tc.b); got < exact*(1-1e-12) || got > exact*1.001 {
			t.Errorf("blockMass(%g, %d, %d) = %.12g, want %.12g or a little more", tc.v, tc.a, tc.b, got, exact)
		}
	}
}
