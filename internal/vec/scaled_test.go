package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestExpScaleShiftSum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 7, 10001} {
		src := make([]float64, n)
		for i := range src {
			src[i] = -50 + 100*r.Float64()
		}
		if n > 8 {
			src[3] = -1e6 // underflows to 0
			src[4] = 1e-300
		}
		for _, scale := range []float64{1, 0.37, 3e-5} {
			dst := make([]float64, n)
			shift := 2.5
			sum, mx := ExpScaleShiftSum(dst, src, scale, shift)
			want, wantMax := 0.0, math.Inf(-1)
			for i, x := range src {
				w := math.Exp(scale*x - shift)
				want += w
				wantMax = max(wantMax, x)
				if e := relErr(dst[i], w); e > 1e-14 {
					t.Fatalf("n = %d, scale %v: dst[%d] = %v, want %v", n, scale, i, dst[i], w)
				}
			}
			if e := relErr(sum, want); e > 1e-13 || mx != wantMax {
				t.Errorf("n = %d, scale %v: sum %v max %v, want %v %v", n, scale, sum, mx, want, wantMax)
			}
		}
	}
	// In place.
	x := []float64{0, 1, 2}
	s, _ := ExpScaleShiftSum(x, x, 2, 0)
	if relErr(x[2], math.Exp(4)) > 1e-15 || relErr(s, 1+math.Exp(2)+math.Exp(4)) > 1e-15 {
		t.Errorf("in place: %v, sum %v", x, s)
	}
}

func BenchmarkExpScaleShiftSum(b *testing.B) {
	x := make([]float64, 4096)
	for i := range x {
		x[i] = -float64(i) / 100
	}
	dst := make([]float64, len(x))
	for b.Loop() {
		sink, _ = ExpScaleShiftSum(dst, x, 0.5, 0)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/exp")
}
