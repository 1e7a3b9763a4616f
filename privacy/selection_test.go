package privacy

import (
	"fmt"
	"math"
	"testing"
)

func softmax(scores []float64, c float64) []float64 {
	hi := math.Inf(-1)
	for _, s := range scores {
		hi = max(hi, c*s)
	}
	p := make([]float64, len(scores))
	var z float64
	for i, s := range scores {
		p[i] = math.Exp(c*s - hi)
		z += p[i]
	}
	for i := range p {
		p[i] /= z
	}
	return p
}

// TestExponentialMechanismSoftmax: selection frequencies of the Gumbel-max
// exponential mechanism against the softmax probabilities exp(ε0·s/(2Δ))/Z,
// χ² with cells merged to expected counts >= 5 and threshold the 1 − 1e-6
// quantile; N = 200,000 draws (quick) or 10^7 (long) per case. The cases
// include scores of ±1e6 after scaling, where a naive exp would overflow.
func TestExponentialMechanismSoftmax(t *testing.T) {
	n := size(200_000, 10_000_000)
	tests := []struct {
		scores     []float64
		eps0, sens float64
	}{
		{[]float64{0, 0.5, 1, 2, -1}, 2, 1},
		{[]float64{0.01, 0.02, 0.015, 0.0, 0.03, 0.025}, 0.1, 1.0 / 48842},
		{[]float64{1e6, 1e6 - 1, 1e6 - 2.5, -1e6, 0}, 2, 1},
		{[]float64{-1e6, -1e6 + 0.3, -1e6 + 3}, 2, 1},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			r := testRand(t, uint64(400+i))
			counts := make([]int, len(tt.scores))
			for range n {
				counts[ExponentialMechanism(r, tt.scores, tt.eps0, tt.sens)]++
			}
			probs := softmax(tt.scores, tt.eps0/(2*tt.sens))
			stat, df := chiSquare(counts, probs, n, 5)
			if th := chi2Threshold(max(df, 1), falseFailure); stat > th {
				t.Errorf("counts %v for probabilities %v: χ² = %.1f > %.1f (df %d)", counts, probs, stat, th, df)
			}
		})
	}
}

// TestReportNoisyMaxLaplaceTwo checks the Laplace report-noisy-max on two
// scores against the exact probability that b·(L1 − L2) > −d for
// independent standard Laplace L1, L2 and gap d = s1 − s2 >= 0:
// P = 1 − ½e^{−x}(1 + x/2), x = d/b. N = 200,000 (quick) or 10^7 (long),
// two-sided z-test at 1e-6; for both monotonicity statements (scale 2Δ/ε0
// and Δ/ε0).
func TestReportNoisyMaxLaplaceTwo(t *testing.T) {
	n := size(200_000, 10_000_000)
	z := zTwoSided(falseFailure, 1)
	for i, m := range []Monotonicity{NonMonotone, Monotone} {
		r := testRand(t, uint64(450+i))
		scores := []float64{1.3, 0.5}
		eps0, sens := 1.0, 0.4
		b := sens / eps0
		if m == NonMonotone {
			b *= 2
		}
		x := (scores[0] - scores[1]) / b
		p := 1 - 0.5*math.Exp(-x)*(1+x/2)
		hits := 0
		for range n {
			if ReportNoisyMaxLaplace(r, scores, eps0, sens, m) == 0 {
				hits++
			}
		}
		got := float64(hits) / float64(n)
		if tol := z * math.Sqrt(p*(1-p)/float64(n)); math.Abs(got-p) > tol {
			t.Errorf("monotonicity %d: P[first] = %.5f, want %.5f ± %.5f", m, got, p, tol)
		}
	}
}

func TestSelectionExtremeScores(t *testing.T) {
	r := NewSeeded(9)
	scores := make([]float64, 30000)
	for i := range scores {
		scores[i] = -1e6 + float64(i%7)
	}
	scores[12345] = 1e6 // far ahead after scaling: always chosen
	for range 100 {
		if i := ExponentialMechanism(r, scores, 2, 1); i != 12345 {
			t.Fatalf("ExponentialMechanism chose %d, want 12345", i)
		}
		if i := ReportNoisyMaxLaplace(r, scores, 2, 1, NonMonotone); i != 12345 {
			t.Fatalf("ReportNoisyMaxLaplace chose %d, want 12345", i)
		}
	}
}

func TestSelectionPanics(t *testing.T) {
	r := NewSeeded(1)
	cases := []func(){
		func() { ExponentialMechanism(r, nil, 1, 1) },
		func() { ExponentialMechanism(r, []float64{0, math.NaN()}, 1, 1) },
		func() { ExponentialMechanism(r, []float64{0, math.Inf(1)}, 1, 1) },
		func() { ExponentialMechanism(r, []float64{0}, 0, 1) },
		func() { ExponentialMechanism(r, []float64{0}, 1, -1) },
		func() { ReportNoisyMaxLaplace(r, []float64{0}, 1, 1, Monotonicity(7)) },
		func() { ReportNoisyMaxLaplace(r, []float64{0}, math.Inf(1), 1, Monotone) },
		func() { ExponentialMechanism(r, []float64{0}, 1e300, 1e-300) },
		func() { ReportNoisyMaxLaplace(r, []float64{0}, 1e-300, 1e300, Monotone) },
	}
	for i, f := range cases {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("case %d did not panic", i)
				}
			}()
			f()
		}()
	}
}

func TestSelectionAllocs(t *testing.T) {
	r := NewSeeded(1)
	scores := make([]float64, 30000)
	for i := range scores {
		scores[i] = float64(i%100) / 100
	}
	if a := testing.AllocsPerRun(20, func() { ExponentialMechanism(r, scores, 1, 0.01) }); a != 0 {
		t.Errorf("ExponentialMechanism allocates %v times", a)
	}
	if a := testing.AllocsPerRun(20, func() { ReportNoisyMaxLaplace(r, scores, 1, 0.01, NonMonotone) }); a != 0 {
		t.Errorf("ReportNoisyMaxLaplace allocates %v times", a)
	}
}

func TestSelectionCosts(t *testing.T) {
	near := func(got, want float64) bool { return got >= want && got <= want*(1+1e-14) }
	if c := ExponentialMechanismCost(0.4); c.Kind != Pure || c.Eps != 0.4 || !near(c.Rho, 0.02) {
		t.Errorf("ExponentialMechanismCost(0.4) = %+v, want pure ε 0.4, ρ 0.02 (rounded up)", c)
	}
	if c := ReportNoisyMaxCost(0.4); c.Kind != Pure || c.Eps != 0.4 || !near(c.Rho, 0.08) {
		t.Errorf("ReportNoisyMaxCost(0.4) = %+v, want pure ε 0.4, ρ 0.08 (rounded up)", c)
	}
}

// TestExponentialMechanismBlocked: selection frequencies of the two-stage
// exponential mechanism against the softmax, as
// TestExponentialMechanismSoftmax (χ², 1 − 1e-6 quantile, N = 200,000 or
// 10^7), with blocks of 3 and 4 scores so that the block stage matters:
// uneven last blocks, scores of ±1e6 after scaling, and blocks whose
// weights all underflow.
func TestExponentialMechanismBlocked(t *testing.T) {
	n := size(200_000, 10_000_000)
	tests := []struct {
		scores     []float64
		eps0, sens float64
		block      int
	}{
		{[]float64{0, 0.5, 1, 2, -1, 0.3, 1.7}, 2, 1, 3},
		{[]float64{0.01, 0.02, 0.015, 0.0, 0.03, 0.025, -0.01, 0.02, 0.022}, 0.1, 1.0 / 48842, 4},
		{[]float64{1e6, 1e6 - 1, 1e6 - 2.5, -1e6, 0, 1e6 - 0.5}, 2, 1, 3},
		{[]float64{-2000, -1999, -2001, 0, 0.5, -0.5, -3000, -3000}, 2, 1, 3},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			r := testRand(t, uint64(500+i))
			counts := make([]int, len(tt.scores))
			scratch := make([]float64, len(tt.scores)/tt.block+1+tt.block)
			for range n {
				counts[expMechBlocked(r, tt.scores, tt.eps0, tt.sens, tt.block, scratch)]++
			}
			probs := softmax(tt.scores, tt.eps0/(2*tt.sens))
			stat, df := chiSquare(counts, probs, n, 5)
			if th := chi2Threshold(max(df, 1), falseFailure); stat > th {
				t.Errorf("counts %v for probabilities %v: χ² = %.1f > %.1f (df %d)", counts, probs, stat, th, df)
			}
			for k, p := range probs {
				if p == 0 && counts[k] > 0 {
					t.Errorf("score %d (probability 0) selected %d times", k, counts[k])
				}
			}
		})
	}
	// The exported entry point allocates nothing.
	r := testRand(t, 9)
	sc := make([]float64, 5000)
	for i := range sc {
		sc[i] = float64(i%97) / 97
	}
	scratch := make([]float64, BlockedScratch(len(sc)))
	if a := testing.AllocsPerRun(10, func() { ExponentialMechanismBlocked(r, sc, 1, 0.01, scratch) }); a != 0 {
		t.Errorf("ExponentialMechanismBlocked allocates %v times per call", a)
	}
}

// TestExponentialMechanismWhere: selection frequencies of the lazy subset
// walk against the softmax over the accepted indices only (χ² as in
// TestExponentialMechanismSoftmax, threshold the 1 − 1e-6 quantile, N =
// 200,000 draws quick or 10^7 long per case), the cases rejecting the best
// scores so that the walk goes past them; a rejected index is never
// returned; -1 when nothing is accepted; and with every index accepted the
// same index as ExponentialMechanism from the same source.
func TestExponentialMechanismWhere(t *testing.T) {
	n := size(200_000, 10_000_000)
	tests := []struct {
		scores     []float64
		eps0, sens float64
		ok         []bool
	}{
		{[]float64{0, 0.5, 1, 2, -1}, 2, 1, []bool{true, true, true, false, true}},
		{[]float64{3, 2.5, 1, 0.2, 0, -1}, 2, 1, []bool{false, false, true, true, true, true}},
		{[]float64{1e6, 1e6 - 1, 1e6 - 2.5, -1e6, 0}, 2, 1, []bool{false, true, true, true, false}},
		{[]float64{0.01, 0.02, 0.015, 0.0, 0.03}, 0.1, 1.0 / 48842, []bool{true, true, true, true, true}},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			r := testRand(t, uint64(600+i))
			counts := make([]int, len(tt.scores))
			scratch := make([]float64, len(tt.scores))
			ok := func(k int) bool { return tt.ok[k] }
			for range n {
				counts[ExponentialMechanismWhere(r, tt.scores, tt.eps0, tt.sens, ok, scratch)]++
			}
			var sub []float64
			var subCounts []int
			for k, s := range tt.scores {
				if tt.ok[k] {
					sub = append(sub, s)
					subCounts = append(subCounts, counts[k])
				} else if counts[k] > 0 {
					t.Errorf("rejected index %d returned %d times", k, counts[k])
				}
			}
			probs := softmax(sub, tt.eps0/(2*tt.sens))
			stat, df := chiSquare(subCounts, probs, n, 5)
			if th := chi2Threshold(max(df, 1), falseFailure); stat > th {
				t.Errorf("counts %v for probabilities %v: χ² = %.1f > %.1f (df %d)", subCounts, probs, stat, th, df)
			}
		})
	}
	r := testRand(t, 7)
	if got := ExponentialMechanismWhere(r, []float64{1, 2}, 1, 1, func(int) bool { return false }, make([]float64, 2)); got != -1 {
		t.Errorf("ExponentialMechanismWhere(nothing accepted) = %d, want -1", got)
	}
	scores := []float64{0.3, 0.1, 0.9, 0.5, 0.2}
	r1, r2 := testRand(t, 8), testRand(t, 8)
	for range 1000 {
		want := ExponentialMechanism(r1, scores, 1, 0.1)
		if got := ExponentialMechanismWhere(r2, scores, 1, 0.1, func(int) bool { return true }, make([]float64, 5)); got != want {
			t.Fatalf("ExponentialMechanismWhere(all accepted) = %d, want %d (ExponentialMechanism's)", got, want)
		}
	}
}
