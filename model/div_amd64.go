//go:build amd64 && !purego

package model

import "golang.org/x/sys/cpu"

// useAVX selects divAVX; tests turn it off to check the Go loop.
var useAVX = cpu.X86.HasAVX

// divAVX divides every element of x by s (len(x) a multiple of 8), four
// lanes per instruction: the same bits as x[i] /= s.
//
//go:noescape
func divAVX(x []float64, s float64)

// divBy divides every element of x by s.
func divBy(x []float64, s float64) {
	n := 0
	if useAVX {
		n = len(x) &^ 7
		if n > 0 {
			divAVX(x[:n], s)
		}
	}
	for i := n; i < len(x); i++ {
		x[i] /= s
	}
}
