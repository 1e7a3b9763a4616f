//go:build !amd64 || purego

package model

var useAVX = false

// divBy divides every element of x by s.
func divBy(x []float64, s float64) {
	for i := range x {
		x[i] /= s
	}
}
