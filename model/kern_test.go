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

// TestProjKernelsMatchCellByCell checks addFrom, mulFrom and setFrom on
// windows of random projections (sizes 1 to 3 and 17, so that merged
// dimensions, blocks of binary attributes and long runs all occur) against
// a cell-by-cell loop, bit for bit.
func TestProjKernelsMatchCellByCell(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for trial := range 300 {
		n := 1 + r.IntN(5)
		sizes := make([]int, n)
		from := make([]int, n)
		var to []int
		for a := range n {
			sizes[a] = []int{1, 2, 2, 3, 17}[r.IntN(5)]
			from[a] = a
			if r.IntN(2) == 0 {
				to = append(to, a)
			}
		}
		p := newProj(sizes, from, to)
		src := make([]float64, p.tcells)
		for i := range src {
			src[i] = r.NormFloat64()
		}
		// target cell of each source cell, by mixed radix
		target := func(i int) int {
			j, st := 0, 1
			for a := n - 1; a >= 0; a-- {
				x := i % sizes[a]
				i /= sizes[a]
				for _, b := range to {
					if b == a {
						j += x * st
						st *= sizes[a]
					}
				}
			}
			return j
		}
		lo := r.IntN(p.cells)
		hi := lo + 1 + r.IntN(p.cells-lo)
		dig := make([]int, n+1)
		base := make([]float64, p.cells)
		for i := range base {
			base[i] = r.Float64()
		}
		add := append([]float64(nil), base...)
		p.addFrom(add, 0.37, src, lo, hi, dig)
		mul := append([]float64(nil), base[lo:hi]...)
		p.mulFrom(mul, src, lo, hi, dig)
		set := make([]float64, hi-lo)
		p.setFrom(set, src, lo, hi, dig)
		for i := lo; i < hi; i++ {
			v := src[target(i)]
			if want := base[i] + 0.37*v; math.Float64bits(add[i]) != math.Float64bits(want) {
				t.Fatalf("trial %d sizes %v to %v: addFrom cell %d = %v, want %v", trial, sizes, to, i, add[i], want)
			}
			if want := base[i] * v; math.Float64bits(mul[i-lo]) != math.Float64bits(want) {
				t.Fatalf("trial %d sizes %v to %v: mulFrom cell %d = %v, want %v", trial, sizes, to, i, mul[i-lo], want)
			}
			if set[i-lo] != v {
				t.Fatalf("trial %d sizes %v to %v: setFrom cell %d = %v, want %v", trial, sizes, to, i, set[i-lo], v)
			}
		}
	}
}

// TestCondInSubnormal: a separator cell whose mass is subnormal (1/v
// overflows) gets conditional 0, not NaN from 0·Inf; a normal one is
// divided as before; an empty one stays 0.
func TestCondInSubnormal(t *testing.T) {
	sizes := []int{2, 3}
	p := newProj(sizes, []int{0, 1}, []int{1}) // P(A, x_S) over {A: 2, S: 3} onto S
	msg := []float64{
		0, 0.25, 0, // A = 0, S = 0..2
		5e-324, 0.75, 0, // A = 1
	}
	sep := make([]float64, 3)
	dig := make([]int, 2)
	condIn(msg, sep, &p, dig)
	want := []float64{0, 0.25, 0, 0, 0.75, 0}
	for i := range msg {
		if msg[i] != want[i] {
			t.Fatalf("condIn = %v, want %v", msg, want)
		}
	}
	for _, tt := range []struct{ v, want float64 }{{0, 0}, {5e-324, 0}, {0x1p-1023, 0}, {0x1p-1022, 0x1p1022}, {0.5, 2}} {
		if got := reciprocal(tt.v); got != tt.want {
			t.Errorf("reciprocal(%g) = %g, want %g", tt.v, got, tt.want)
		}
	}
}
