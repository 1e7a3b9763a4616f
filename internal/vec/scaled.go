package vec

import "math"

// ExpScaleShiftSum writes dst[i] = e^(scale·src[i] − shift) and returns
// their sum and the largest src[i] (−Inf for empty slices; a NaN in src
// propagates to the sum). It is ExpShiftSum for log-weights kept with a
// lazy scale factor (θ = scale·src), fused with the max that the caller
// needs for the next shift, so one read of src does both. dst may be src.
func ExpScaleShiftSum(dst, src []float64, scale, shift float64) (sum, maxSrc float64) {
	dst = dst[:len(src)]
	var s0, s1 float64
	m0, m1 := math.Inf(-1), math.Inf(-1)
	i := 0
	for ; i+1 < len(src); i += 2 {
		v0, v1 := src[i], src[i+1]
		if v0 > m0 {
			m0 = v0
		}
		if v1 > m1 {
			m1 = v1
		}
		x0, x1 := scale*v0-shift, scale*v1-shift
		var e0, e1 float64
		if x0 > expLo && x0 <= expHi && x1 > expLo && x1 <= expHi {
			e0, e1 = expCore(x0), expCore(x1)
		} else {
			e0, e1 = Exp(x0), Exp(x1)
		}
		dst[i], dst[i+1] = e0, e1
		s0 += e0
		s1 += e1
	}
	for ; i < len(src); i++ {
		v := src[i]
		if v > m0 {
			m0 = v
		}
		e := Exp(scale*v - shift)
		dst[i] = e
		s0 += e
	}
	return s0 + s1, max(m0, m1)
}
