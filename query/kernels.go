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

// streamCopy copies src into dst without reading dst's cache lines first
// (non-temporal stores where available): for an output much larger than
// the caches, written once, this saves the read that an ordinary store
// makes of every line it writes.
func streamCopy(dst, src []float64) {
	if useAVX2 {
		ntCopyAVX2(dst[:len(src)], src)
		return
	}
	copy(dst, src)
}

// fill sets every element of dst to v.
func fill(dst []float64, v float64) {
	for i := range dst {
		dst[i] = v
	}
}

// reduceSet sums out the middle axis of src, an O × n × s array, into dst,
// an O × s array: dst[o·s+i] = Σ_c src[(o·n+c)·s+i].
func reduceSet(dst, src []float64, O, n, s int) {
	dst = dst[:O*s]
	src = src[:O*n*s]
	switch {
	case n == 1:
		copy(dst, src)
	case s == 1:
		reduceLast(dst, src, n)
	case s >= 4 && useAVX2:
		reduceSetAVX2(dst, src, O, n, s)
	default:
		for o := range O {
			d := dst[o*s : (o+1)*s]
			row := src[o*n*s : (o+1)*n*s]
			copy(d, row[:s])
			for c := s; c < len(row); c += s {
				for i, v := range row[c : c+s] {
					d[i] += v
				}
			}
		}
	}
}

// reduceLast sums groups of n consecutive elements of src: dst[o] =
// Σ_c src[o·n+c].
func reduceLast(dst, src []float64, n int) {
	if useAVX2 && n >= 4 && len(dst) >= 4 {
		o4 := len(dst) &^ 3
		reduceLastAVX2(dst[:o4], src[:o4*n], n)
		dst, src = dst[o4:], src[o4*n:]
	}
	switch n {
	case 2:
		for o := range dst {
			dst[o] = src[2*o] + src[2*o+1]
		}
	case 3:
		for o := range dst {
			r := src[3*o : 3*o+3]
			dst[o] = r[0] + r[1] + r[2]
		}
	default:
		for o := range dst {
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
			dst[o] = a0 + a1
		}
	}
}

// broadcast is the adjoint of reduceSet: dst[(o·n+c)·s+i] = src[o·s+i]
// (add false) or += (add true), for dst an O × n × s array and src an O × s
// array.
func broadcast(dst, src []float64, O, n, s int, add bool) {
	dst = dst[:O*n*s]
	src = src[:O*s]
	switch {
	case s >= 4 && useAVX2:
		broadcastAVX2(dst, src, O, n, s, add)
	case s == 1 && n >= 4 && useAVX2:
		broadcastLastAVX2(dst, src, n, add)
	case s == 1:
		for o, v := range src {
			if add {
				addConst(dst[o*n:(o+1)*n], v)
			} else {
				fill(dst[o*n:(o+1)*n], v)
			}
		}
	case s >= 16:
		for o := range O {
			sv := src[o*s : (o+1)*s]
			for c := range n {
				if add {
					addTo(dst[(o*n+c)*s:(o*n+c+1)*s], sv)
				} else {
					copy(dst[(o*n+c)*s:(o*n+c+1)*s], sv)
				}
			}
		}
	default:
		for o := range O {
			sv := src[o*s : (o+1)*s]
			row := dst[o*n*s : (o+1)*n*s]
			for c := 0; c < len(row); c += s {
				r := row[c : c+s]
				if add {
					for i, v := range sv {
						r[i] += v
					}
				} else {
					copy(r, sv)
				}
			}
		}
	}
}
