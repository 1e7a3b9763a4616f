package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// expRef is math.Exp, except above 709 where math.Exp on amd64 returns
// +Inf early; there it is e^(x−1)·e (two roundings, below 3e-16).
func expRef(x float64) float64 {
	if x > 709 {
		return math.Exp(x-1) * math.E
	}
	return math.Exp(x)
}

// forPaths runs f with the assembly kernels (when this machine and build
// have them) and with the Go bodies.
func forPaths(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	s2, s5 := useAVX2, useAVX512
	defer func() { useAVX2, useAVX512 = s2, s5 }()
	if s5 {
		t.Run("avx512", f)
	}
	useAVX512 = false
	if s2 {
		t.Run("avx2", f)
	}
	useAVX2 = false
	t.Run("go", f)
}

// TestExpShiftSumAccuracy checks every value of ExpShiftSum against
// math.Exp over the whole finite range: 2·10^6 random points (uniform over
// [−708.3, 709.7], and over [−40, 40] where the solvers' log-weights
// live), relative error at most 1e-15. The vector kernel's bound: the
// reduction r = x − k·ln2 is exact to about 2^−53·|r| with the two-part
// ln2 and FMA, the degree-13 Taylor polynomial truncates below 5e-18 on
// |r| <= ln2/2, and Horner's rounding adds at most about one unit in the
// last place (2.2e-16). The worst case found is about 4e-16 for both
// paths, the reference's own rounding included.
func TestExpShiftSumAccuracy(t *testing.T) {
	forPaths(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		src := make([]float64, 1<<20)
		dst := make([]float64, len(src))
		worst, at := 0.0, 0.0
		for round := range 2 {
			for i := range src {
				if round == 0 {
					src[i] = -708.3 + r.Float64()*(709.7+708.3)
				} else {
					src[i] = -40 + 80*r.Float64()
				}
			}
			ExpShiftSum(dst, src, 0)
			for i, x := range src {
				if e := relErr(dst[i], expRef(x)); e > worst {
					worst, at = e, x
				}
			}
		}
		if worst > 1e-15 {
			t.Errorf("ExpShiftSum relative error %.3g at x = %v, want <= 1e-15", worst, at)
		}
		t.Logf("worst relative error %.3g at x = %v", worst, at)
	})
}

func TestExpShiftSumSpecial(t *testing.T) {
	inf := math.Inf(1)
	// Each special value is placed at every position of a 19-element slice
	// (two vector blocks and a tail) among ordinary values.
	tests := []struct {
		x, shift, want float64
	}{
		{math.Inf(-1), 0, 0},
		{-800, 0, 0},
		{-708.39, 0, 0},
		{-1e300, 0, 0},
		{0, 900, 0},
		{800, 0, inf},
		{inf, 0, inf},
		{709.79, 0, inf},
		{709.5, 0, expRef(709.5)},
		{709.08, 0, expRef(709.08)},
		{-708.3, 0, math.Exp(-708.3)},
		{0, 0, 1},
		{1e-300, 0, 1},
		{math.NaN(), 0, math.NaN()},
		{1, math.NaN(), math.NaN()},
	}
	forPaths(t, func(t *testing.T) {
		for _, tt := range tests {
			for pos := range 19 {
				src := make([]float64, 19)
				for i := range src {
					src[i] = float64(i)/7 - 1 + tt.shift
				}
				src[pos] = tt.x
				dst := make([]float64, len(src))
				sum := ExpShiftSum(dst, src, tt.shift)
				want := 0.0
				for i, x := range src {
					w := math.Exp(x - tt.shift)
					if i == pos {
						w = tt.want
					}
					want += w
					got := dst[i]
					switch {
					case math.IsNaN(w):
						if !math.IsNaN(got) {
							t.Fatalf("ExpShiftSum(%v, shift %v)[%d] = %v, want NaN", x, tt.shift, i, got)
						}
					case w == 0 || math.IsInf(w, 1):
						if got != w {
							t.Fatalf("ExpShiftSum(%v, shift %v)[%d] = %v, want %v", x, tt.shift, i, got, w)
						}
					case relErr(got, w) > 1e-15:
						t.Fatalf("ExpShiftSum(%v, shift %v)[%d] = %v, want %v", x, tt.shift, i, got, w)
					}
				}
				if !(math.IsNaN(want) && math.IsNaN(sum)) && !(sum == want || relErr(sum, want) <= 1e-14) {
					t.Fatalf("ExpShiftSum with %v at %d: sum = %v, want %v", tt.x, pos, sum, want)
				}
			}
		}
	})
}

// TestKernels checks the small kernels against plain loops for every
// length up to 40 (vector blocks and tails).
func TestKernels(t *testing.T) {
	forPaths(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for n := range 41 {
			x, y := make([]float64, n), make([]float64, n)
			for i := range x {
				x[i], y[i] = r.NormFloat64()*10, r.NormFloat64()
			}
			s := 0.37
			dst := make([]float64, n)
			wantMax := math.Inf(-1)
			for i := range x {
				wantMax = max(wantMax, x[i]-float64(s*y[i]))
			}
			if got := subScaledMax(dst, x, y, s); got != wantMax {
				t.Errorf("n = %d: subScaledMax = %v, want %v", n, got, wantMax)
			}
			for i := range x {
				if want := x[i] - float64(s*y[i]); dst[i] != want {
					t.Fatalf("n = %d: subScaledMax dst[%d] = %v, want %v", n, i, dst[i], want)
				}
			}
			wantMax = math.Inf(-1)
			for _, v := range x {
				wantMax = max(wantMax, v)
			}
			if got := maxOf(x); got != wantMax {
				t.Errorf("n = %d: maxOf = %v, want %v", n, got, wantMax)
			}
			x3 := append([]float64(nil), x...)
			scale := 0.25
			Scale(x3, scale)
			for i := range x {
				if x3[i] != x[i]*scale {
					t.Fatalf("n = %d: scaled [%d] = %v, want %v", n, i, x3[i], x[i]*scale)
				}
			}
		}
	})
}

// BenchmarkExpShiftSumPaths times ExpShiftSum over 4096 values (in L1) on
// each path this machine has, in wall and process CPU time per value.
func BenchmarkExpShiftSumPaths(b *testing.B) {
	x := make([]float64, 4096)
	for i := range x {
		x[i] = -float64(i) / 100
	}
	dst := make([]float64, len(x))
	s2, s5 := useAVX2, useAVX512
	defer func() { useAVX2, useAVX512 = s2, s5 }()
	for _, path := range []struct {
		name     string
		avx2, v5 bool
	}{{"avx512", true, true}, {"avx2", true, false}, {"go", false, false}} {
		if path.avx2 && !s2 || path.v5 && !s5 {
			continue
		}
		b.Run(path.name, func(b *testing.B) {
			useAVX2, useAVX512 = path.avx2, path.v5
			cpu0 := cpuNanos()
			for b.Loop() {
				sink = ExpShiftSum(dst, x, 0)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/exp")
			if c := cpuNanos() - cpu0; c > 0 {
				b.ReportMetric(float64(c)/float64(b.N*len(x)), "cpu-ns/exp")
			}
		})
	}
}
