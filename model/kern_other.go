//go:build !amd64 || purego

package model

var useAVX = false

// divBy divides every element of x by s.
func divBy(x []float64, s float64) {
	for i := range x {
		x[i] /= s
	}
}

// mulVec multiplies d by s elementwise (len(s) at least len(d)).
func mulVec(d, s []float64) {
	s = s[:len(d)]
	for i := range d {
		d[i] *= s[i]
	}
}

// addVec adds s to d elementwise (len(s) at least len(d)).
func addVec(d, s []float64) {
	s = s[:len(d)]
	for i := range d {
		d[i] += s[i]
	}
}
