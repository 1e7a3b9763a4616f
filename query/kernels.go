package query

import "gonum.org/v1/gonum/floats"

// The kernels write into caller-owned slices and allocate nothing.

// simdMin is the run length from which gonum's assembly kernels beat a
// plain loop.
const simdMin = 32

// addTo adds src into dst element-wise (len(dst) >= len(src)).
func addTo(dst, src []float64) {
	dst = dst[:len(src)]
	if useAVX2 && len(src) >= 16 {
		addToAVX2(dst, src)
		return
	}
	if len(src) >= simdMin {
		floats.Add(dst, src)
		return
	}
	for i, v := range src {
		dst[i] += v
	}
}

// addScaled adds a·src into dst element-wise.
func addScaled(dst []float64, a float64, src []float64) {
	dst = dst[:len(src)]
	if len(src) >= simdMin {
		floats.AddScaled(dst, a, src)
		return
	}
	for i, v := range src {
		dst[i] += a * v
	}
}

// addConst adds v to every element of dst.
func addConst(dst []float64, v float64) {
	for i := range dst {
		dst[i] += v
	}
}

// sum returns the sum of s.
func sum(s []float64) float64 {
	if len(s) >= simdMin {
		return floats.Sum(s)
	}
	var a0, a1 float64
	i := 0
	for ; i+2 <= len(s); i += 2 {
		a0 += s[i]
		a1 += s[i+1]
	}
	if i < len(s) {
		a0 += s[i]
	}
	return a0 + a1
}

// reduceBlocks sums out the middle axis of src, an O × n × s array, into
// dst, an O × s array: dst[o·s+i] += Σ_c src[(o·n+c)·s+i].
func reduceBlocks(dst, src []float64, O, n, s int) {
	switch {
	case s == 1 && n >= simdMin:
		src = src[:O*n]
		for o := range dst[:O] {
			dst[o] += floats.Sum(src[o*n : (o+1)*n])
		}
	case s == 1 && n == 2:
		src = src[:2*O]
		for o := range dst[:O] {
			dst[o] += src[2*o] + src[2*o+1]
		}
	case s == 1:
		src = src[:O*n]
		for o := range dst[:O] {
			row := src[o*n : (o+1)*n]
			var a0, a1 float64
			c := 0
			for ; c+2 <= len(row); c += 2 {
				a0 += row[c]
				a1 += row[c+1]
			}
			if c < len(row) {
				a0 += row[c]
			}
			dst[o] += a0 + a1
		}
	case s >= 16:
		for o := range O {
			d := dst[o*s : (o+1)*s]
			base := o * n * s
			for c := range n {
				addTo(d, src[base+c*s:base+(c+1)*s])
			}
		}
	case s >= n: // short rows: inline adds, no calls
		for o := range O {
			d := dst[o*s : (o+1)*s]
			row := src[o*n*s : (o+1)*n*s]
			for c := 0; c < len(row); c += s {
				for i, v := range row[c : c+s] {
					d[i] += v
				}
			}
		}
	default: // short rows, more of them than their length: strided sums
		for o := range O {
			row := src[o*n*s : (o+1)*n*s]
			d := dst[o*s : (o+1)*s]
			for i := range d {
				acc := 0.0
				for c := i; c < len(row); c += s {
					acc += row[c]
				}
				d[i] += acc
			}
		}
	}
}

// broadcastBlocks is the adjoint of reduceBlocks: dst[(o·n+c)·s+i] +=
// src[o·s+i] for dst an O × n × s array and src an O × s array.
func broadcastBlocks(dst, src []float64, O, n, s int) {
	if s == 1 {
		dst = dst[:O*n]
		for o, v := range src[:O] {
			addConst(dst[o*n:(o+1)*n], v)
		}
		return
	}
	if s < 16 {
		for o := range O {
			sv := src[o*s : (o+1)*s]
			row := dst[o*n*s : (o+1)*n*s]
			for c := 0; c < len(row); c += s {
				r := row[c : c+s]
				for i, v := range sv {
					r[i] += v
				}
			}
		}
		return
	}
	for o := range O {
		sv := src[o*s : (o+1)*s]
		base := o * n * s
		for c := range n {
			addTo(dst[base+c*s:base+(c+1)*s], sv)
		}
	}
}
