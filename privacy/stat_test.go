package privacy

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// Statistical tests in this package draw from a fixed seed in the default
// run, so CI is deterministic, and from a fresh secure seed (logged, to
// reproduce a failure) under -tags longtest, with larger samples. Each test
// states its sample size and a tolerance chosen so that a correct sampler
// fails it with probability at most falseFailure (from the normal
// approximation of a mean, or the χ² distribution of a goodness-of-fit
// statistic).
const falseFailure = 1e-6

// testRand returns the stream for a statistical test.
func testRand(t testing.TB, seed uint64) *Rand {
	t.Helper()
	if !longTests {
		return NewSeeded(seed)
	}
	s, err := NewSecure()
	if err != nil {
		t.Fatal(err)
	}
	seed = s.Uint64()
	t.Logf("seed %d (rerun with NewSeeded(%d) to reproduce)", seed, seed)
	return NewSeeded(seed)
}

// size returns quick in the default run and long under -tags longtest.
func size(quick, long int) int {
	if longTests {
		return long
	}
	return quick
}

// zTwoSided returns z with P(|Z| > z) = rate/tests for a standard normal Z
// (Bonferroni over tests two-sided checks).
func zTwoSided(rate float64, tests int) float64 {
	return distuv.UnitNormal.Quantile(1 - rate/float64(2*tests))
}

// chi2Threshold returns the (1 − rate) quantile of χ² with df degrees.
func chi2Threshold(df int, rate float64) float64 {
	return distuv.ChiSquared{K: float64(df)}.Quantile(1 - rate)
}

// chiSquare compares observed counts with probabilities (summing to 1)
// after merging neighbouring cells until each expected count is at least
// minExpected; it returns the statistic and the degrees of freedom.
func chiSquare(counts []int, probs []float64, n int, minExpected float64) (stat float64, df int) {
	var obs, exp float64
	var bins []([2]float64)
	for i := range counts {
		obs += float64(counts[i])
		exp += probs[i] * float64(n)
		if exp >= minExpected {
			bins = append(bins, [2]float64{obs, exp})
			obs, exp = 0, 0
		}
	}
	if exp > 0 || obs > 0 {
		if len(bins) == 0 {
			bins = append(bins, [2]float64{obs, exp})
		} else {
			bins[len(bins)-1][0] += obs
			bins[len(bins)-1][1] += exp
		}
	}
	for _, b := range bins {
		d := b[0] - b[1]
		stat += d * d / b[1]
	}
	return stat, len(bins) - 1
}

// pmfTable tabulates an integer distribution from unnormalised weights
// w(x) on [−lim, lim] (the mass outside must be negligible).
func pmfTable(lim int, w func(x int) float64) []float64 {
	p := make([]float64, 2*lim+1)
	var s float64
	for i := range p {
		p[i] = w(i - lim)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// moments returns the mean, variance and fourth central moment of a pmf
// table on [−lim, lim].
func moments(p []float64) (mean, variance, m4 float64) {
	lim := (len(p) - 1) / 2
	for i, q := range p {
		mean += q * float64(i-lim)
	}
	for i, q := range p {
		d := float64(i-lim) - mean
		variance += q * d * d
		m4 += q * d * d * d * d
	}
	return mean, variance, m4
}

// checkMoments tests the sample mean and variance of xs against the exact
// ones (two two-sided z-tests, Bonferroni, total rate falseFailure).
func checkMoments(t *testing.T, xs []float64, mean, variance, m4 float64) {
	t.Helper()
	n := float64(len(xs))
	z := zTwoSided(falseFailure, 2)
	var s float64
	for _, x := range xs {
		s += x
	}
	m := s / n
	var v float64
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	v /= n
	if tol := z * math.Sqrt(variance/n); math.Abs(m-mean) > tol {
		t.Errorf("sample mean = %.6g, want %.6g ± %.3g (n = %d, z = %.3f)", m, mean, tol, len(xs), z)
	}
	if tol := z * math.Sqrt((m4-variance*variance)/n); math.Abs(v-variance) > tol {
		t.Errorf("sample variance = %.6g, want %.6g ± %.3g (n = %d, z = %.3f)", v, variance, tol, len(xs), z)
	}
}

func TestChiSquareHelper(t *testing.T) {
	// Merging: the last small cell joins the previous bin.
	stat, df := chiSquare([]int{50, 50, 1}, []float64{0.5, 0.49, 0.01}, 101, 5)
	if df != 1 {
		t.Errorf("df = %d, want 1", df)
	}
	want := (50-50.5)*(50-50.5)/50.5 + (51-50.5)*(51-50.5)/50.5
	if math.Abs(stat-want) > 1e-12 {
		t.Errorf("stat = %v, want %v", stat, want)
	}
	if th := chi2Threshold(1, 1e-6); math.Abs(th-23.928) > 0.01 {
		t.Errorf("chi2Threshold(1, 1e-6) = %v, want 23.928", th)
	}
}
