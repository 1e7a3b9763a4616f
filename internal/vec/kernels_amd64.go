//go:build amd64 && !purego

package vec

import (
	"math"

	"golang.org/x/sys/cpu"
)

// useAVX2 selects the assembly kernels; tests turn it off to check the Go
// bodies on the same machine.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// useAVX512 selects the AVX-512 exponential (8 lanes per instruction, with
// VSCALEFPD and VRNDSCALEPD) over the AVX2 one; the other kernels are
// AVX2 only (they are bound by memory, not by arithmetic).
var useAVX512 = useAVX2 && cpu.X86.HasAVX512F

// expC holds the constants of expShiftSumAVX512 as scalars (broadcast by
// the instructions): LO, 710, 1/ln2, ln2Hi, ln2Lo, then the Taylor
// coefficients 1/13!, ..., 1/0!.
var expC = func() (c [19]float64) {
	c[0], c[1], c[2], c[3], c[4] = expLo, 710, 1/math.Ln2, ln2Hi, ln2Lo
	for i := range 14 {
		c[5+i] = expK[7+i][0]
	}
	return c
}()

// expK holds the constants of expShiftSumAVX2, each repeated 4 times so
// that the kernel can use them as 256-bit memory operands.
var expK = func() (k [expKLen][4]float64) {
	set := func(i int, v float64) { k[i] = [4]float64{v, v, v, v} }
	set(0, expLo)
	set(1, expHiFast)
	set(2, 1/math.Ln2)
	set(3, 6755399441055744.0) // 1.5·2^52: adding it rounds to an integer
	set(4, ln2Hi)
	set(5, ln2Lo)
	set(6, math.Float64frombits(1023<<52))
	// Taylor coefficients 1/13!, 1/12!, ..., 1/1!, 1/0!.
	f := 1.0
	for n := 1; n <= 13; n++ {
		f *= float64(n)
	}
	for n := 13; n >= 0; n-- {
		set(7+13-n, 1/f)
		if n > 0 {
			f /= float64(n)
		}
	}
	return k
}()

// expShiftSumAVX2 is ExpShiftSum for len(src) a multiple of 8; it stops
// before the first block of 8 holding a NaN or a value above expHiFast
// (after the shift) and returns the number of elements done and their sum.
//
//go:noescape
func expShiftSumAVX2(dst, src []float64, shift float64) (n int, sum float64)

// expShiftSumAVX512 is ExpShiftSum for len(src) a multiple of 16; it
// stops before the first block of 16 holding a NaN (after the shift).
//
//go:noescape
func expShiftSumAVX512(dst, src []float64, shift float64) (n int, sum float64)

// subScaledMaxAVX2 is subScaledMax for len(x) a positive multiple of 8.
//
//go:noescape
func subScaledMaxAVX2(dst, x, y []float64, s float64) float64

// maxAVX2 is maxOf for len(x) a positive multiple of 8.
//
//go:noescape
func maxAVX2(x []float64) float64

// scaleAVX2 is Scale for len(x) a positive multiple of 8.
//
//go:noescape
func scaleAVX2(x []float64, a float64)
