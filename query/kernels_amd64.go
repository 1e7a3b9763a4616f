//go:build amd64 && !purego

package query

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernels of kernels_amd64.s. gonum's amd64
// kernels are SSE2 (two float64 per instruction) and cover whole-slice
// operations only; the operator's hot loops are reductions and broadcasts
// over the middle axis of small O × n × s arrays in the cache, which need
// their own 4-wide kernels (sums kept in registers across the n rows, one
// store per output). A variable so that tests can check the Go bodies on
// the same machine.
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

// tailMask[r] selects the first r lanes of a 4-lane vector.
var tailMask = [4][4]uint64{{}, {^uint64(0)}, {^uint64(0), ^uint64(0)}, {^uint64(0), ^uint64(0), ^uint64(0)}}

// reduceLastAVX2 is reduceLast for n >= 4 and len(dst) a multiple of 4.
//
//go:noescape
func reduceLastAVX2(dst, src []float64, n int)

// broadcastAVX2 is broadcast for s >= 4.
//
//go:noescape
func broadcastAVX2(dst, src []float64, O, n, s int, add bool)

// broadcastLastAVX2 is broadcast for s = 1 and n >= 4.
//
//go:noescape
func broadcastLastAVX2(dst, src []float64, n int, add bool)

// ntCopyAVX2 copies src into dst (same length) with non-temporal stores.
//
//go:noescape
func ntCopyAVX2(dst, src []float64)
