//go:build amd64 && !purego

package query

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernel for long runs. gonum's amd64 kernels are
// SSE2 (two float64 per instruction) and bound by stores; the adds of the
// fused pass are the operator's hot loop, so they get a 4-wide kernel here.
var useAVX2 = cpu.X86.HasAVX2

// addToAVX2 adds src into dst element-wise; len(dst) >= len(src).
//
//go:noescape
func addToAVX2(dst, src []float64)

// reduceSetAVX2 is reduceSet for s >= 4: each block of up to 16 lanes of a
// row is summed over c in registers and stored once.
//
//go:noescape
func reduceSetAVX2(dst, src []float64, O, n, s int)
