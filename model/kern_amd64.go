//go:build amd64 && !purego

package model

import "golang.org/x/sys/cpu"

// useAVX selects the assembly kernels; tests turn it off to check the Go
// loops.
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

// mulAVX multiplies d by s elementwise (len(d) a multiple of 8, len(s) at
// least len(d)), four lanes per instruction: the same bits as d[i] *= s[i].
//
//go:noescape
func mulAVX(d, s []float64)

// mulVec multiplies d by s elementwise (len(s) at least len(d)).
func mulVec(d, s []float64) {
	n := 0
	if useAVX {
		n = len(d) &^ 7
		if n > 0 {
			mulAVX(d[:n], s[:n])
		}
	}
	s = s[:len(d)]
	for i := n; i < len(d); i++ {
		d[i] *= s[i]
	}
}

// addAVX adds s to d elementwise (len(d) a multiple of 8, len(s) at least
// len(d)), four lanes per instruction: the same bits as d[i] += s[i].
//
//go:noescape
func addAVX(d, s []float64)

// addVec adds s to d elementwise (len(s) at least len(d)).
func addVec(d, s []float64) {
	n := 0
	if useAVX {
		n = len(d) &^ 7
		if n > 0 {
			addAVX(d[:n], s[:n])
		}
	}
	s = s[:len(d)]
	for i := n; i < len(d); i++ {
		d[i] += s[i]
	}
}
