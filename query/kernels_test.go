package query

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// forKernels runs f with the assembly kernels (when this machine and build
// have them) and with the Go bodies.
func forKernels(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	if saved {
		t.Run("asm", f)
	}
	useAVX2 = false
	t.Run("go", f)
}

// TestReduceBroadcastKernels checks reduceSet, reduceLast and broadcast
// (set and add) against plain loops for every shape O × n × s with O, n up
// to 6 and s up to 37 (every row length modulo 4 and 16, blocks and tails).
func TestReduceBroadcastKernels(t *testing.T) {
	forKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for O := 1; O <= 6; O++ {
			for n := 1; n <= 6; n++ {
				for s := 1; s <= 37; s++ {
					name := fmt.Sprintf("O=%d n=%d s=%d", O, n, s)
					src := make([]float64, O*n*s+3) // spare cells must stay untouched
					for i := range src {
						src[i] = float64(r.IntN(1000))
					}
					dst := make([]float64, O*s+3)
					for i := range dst {
						dst[i] = -1
					}
					reduceSet(dst, src, O, n, s)
					for o := range O {
						for i := range s {
							want := 0.0
							for c := range n {
								want += src[(o*n+c)*s+i]
							}
							if got := dst[o*s+i]; got != want {
								t.Fatalf("%s: reduceSet[%d] = %v, want %v", name, o*s+i, got, want)
							}
						}
					}
					if dst[O*s] != -1 {
						t.Fatalf("%s: reduceSet wrote past the end", name)
					}
					small := dst[:O*s]
					for _, add := range []bool{false, true} {
						big := make([]float64, O*n*s+3)
						for i := range big {
							big[i] = float64(i % 7)
						}
						broadcast(big, small, O, n, s, add)
						for o := range O {
							for c := range n {
								for i := range s {
									j := (o*n+c)*s + i
									want := small[o*s+i]
									if add {
										want += float64(j % 7)
									}
									if big[j] != want {
										t.Fatalf("%s add=%v: broadcast[%d] = %v, want %v", name, add, j, big[j], want)
									}
								}
							}
						}
						for j := O * n * s; j < len(big); j++ {
							if big[j] != float64(j%7) {
								t.Fatalf("%s add=%v: broadcast wrote past the end", name, add)
							}
						}
					}
				}
			}
		}
		// reduceLast with many rows (the 4-row blocks and their remainder).
		for n := 1; n <= 13; n++ {
			for O := 1; O <= 11; O++ {
				src := make([]float64, O*n)
				for i := range src {
					src[i] = float64(r.IntN(1000))
				}
				dst := make([]float64, O)
				reduceLast(dst, src, n)
				for o := range O {
					want := 0.0
					for _, v := range src[o*n : (o+1)*n] {
						want += v
					}
					if dst[o] != want {
						t.Fatalf("reduceLast O=%d n=%d: [%d] = %v, want %v", O, n, o, dst[o], want)
					}
				}
			}
		}
	})
}

// TestStreamCopy checks streamCopy for every length up to 40 at every
// alignment of a float64 within 32 bytes (the scalar head and tail around
// the non-temporal blocks).
func TestStreamCopy(t *testing.T) {
	forKernels(t, func(t *testing.T) {
		buf := make([]float64, 64)
		for off := range 4 {
			for n := range 41 {
				src := make([]float64, n)
				for i := range src {
					src[i] = float64(i + 1)
				}
				clear(buf)
				streamCopy(buf[off:off+n], src)
				for i, v := range buf {
					want := 0.0
					if i >= off && i < off+n {
						want = src[i-off]
					}
					if v != want {
						t.Fatalf("streamCopy(off %d, n %d): [%d] = %v, want %v", off, n, i, v, want)
					}
				}
			}
		}
	})
}
