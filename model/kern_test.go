package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDivByMatchesDivision(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{0, 1, 7, 8, 9, 16, 63, 1000} {
		for _, s := range []float64{1, 0.9999999999999998, 3, 1e-300, 7.3e12} {
			x := make([]float64, n)
			for i := range x {
				x[i] = r.Float64() * math.Pow(10, float64(r.IntN(40)-20))
			}
			if n > 2 {
				x[1], x[2] = 0, math.SmallestNonzeroFloat64
			}
			got := append([]float64(nil), x...)
			divBy(got, s)
			for i, v := range x {
				if want := v / s; math.Float64bits(got[i]) != math.Float64bits(want) {
					t.Fatalf("divBy(n=%d, s=%v)[%d] = %v, want %v", n, s, i, got[i], want)
				}
			}
		}
	}
}

func TestMulVecAddVecMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, avx := range []bool{false, useAVX} {
		defer func(v bool) { useAVX = v }(useAVX)
		useAVX = avx
		for _, n := range []int{0, 1, 7, 8, 9, 16, 63, 1000} {
			d := make([]float64, n)
			s := make([]float64, n+3)
			for i := range s {
				s[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
			}
			for i := range d {
				d[i] = r.Float64()
			}
			got := append([]float64(nil), d...)
			mulVec(got, s)
			for i, v := range d {
				if want := v * s[i]; math.Float64bits(got[i]) != math.Float64bits(want) {
					t.Fatalf("avx %v: mulVec(n=%d)[%d] = %v, want %v", avx, n, i, got[i], want)
				}
			}
			got = append(got[:0], d...)
			addVec(got, s)
			for i, v := range d {
				if want := v + s[i]; math.Float64bits(got[i]) != math.Float64bits(want) {
					t.Fatalf("avx %v: addVec(n=%d)[%d] = %v, want %v", avx, n, i, got[i], want)
				}
			}
		}
	}
}
