package privacy

import (
	"math"
	"math/big"
	"testing"
)

func bigRat(num, den string) (*big.Int, *big.Int) {
	n, _ := new(big.Int).SetString(num, 10)
	d, _ := new(big.Int).SetString(den, 10)
	return n, d
}

// TestBernoulliExp checks P[Bernoulli(exp(−γ))] for γ on the 64-bit and
// the big-integer paths: a two-sided z-test on N = 200,000 draws (quick) or
// 10^7 (long), false-failure rate 1e-6 per γ.
func TestBernoulliExp(t *testing.T) {
	r := testRand(t, 21)
	n := size(200_000, 10_000_000)
	z := zTwoSided(falseFailure, 1)
	tests := []struct{ num, den string }{
		{"0", "1"},
		{"3", "10"},
		{"1", "1"},
		{"5", "2"},
		{"7", "1"},
		{"1", "3"},
		// den near 2^63: den·K overflows 64 bits at K = 2.
		{"4611686018427387904", "9223372036854775807"},
		// Beyond 64 bits: γ = 1.5 and γ ≈ 0.75.
		{"1901475900342344102245054808064", "1267650600228229401496703205376"},
		{"950737950171172051122527404033", "1267650600228229401496703205377"},
	}
	var e exact
	for _, tt := range tests {
		num, den := bigRat(tt.num, tt.den)
		g, _ := new(big.Rat).SetFrac(num, den).Float64()
		p := math.Exp(-g)
		hits := 0
		for range n {
			if e.bernoulliExp(r, num, den) {
				hits++
			}
		}
		got := float64(hits) / float64(n)
		tol := z * math.Sqrt(p*(1-p)/float64(n))
		if math.Abs(got-p) > tol {
			t.Errorf("Bernoulli(exp(−%s/%s)) frequency = %.5f, want %.5f ± %.5f", tt.num, tt.den, got, p, tol)
		}
	}
}

// TestUniformBelowBig checks the big-integer uniform: range, and a χ² over
// the residues mod 7 of draws below 7·2^70 (exactly uniform).
func TestUniformBelowBig(t *testing.T) {
	r := testRand(t, 22)
	n := new(big.Int).Lsh(big.NewInt(7), 70)
	var e exact
	counts := make([]int, 7)
	draws := size(70_000, 7_000_000)
	var m big.Int
	for range draws {
		u := e.uniformBelow(r, n)
		if u.Sign() < 0 || u.Cmp(n) >= 0 {
			t.Fatalf("uniformBelow(%s) = %s", n, u)
		}
		counts[m.Mod(u, big.NewInt(7)).Int64()]++
	}
	probs := []float64{1. / 7, 1. / 7, 1. / 7, 1. / 7, 1. / 7, 1. / 7, 1. / 7}
	stat, df := chiSquare(counts, probs, draws, 5)
	if th := chi2Threshold(df, falseFailure); stat > th {
		t.Errorf("uniformBelow residues: χ² = %.1f > %.1f (df %d)", stat, th, df)
	}
}
