package vec

import "math"

// The kernels below write into caller-owned slices and allocate nothing.
// Each has a portable Go body; on amd64 with AVX2 and FMA the bulk of the
// slice (a multiple of 8 elements) goes to an assembly kernel that handles
// 4 float64 per instruction (kernels_amd64.s), and the Go body takes the
// tail. Build with the purego tag to use the Go bodies only.

// ExpShiftSum writes dst[i] = e^(src[i]−shift) for i < len(src) and returns
// their sum; dst and src may be the same slice. Each value agrees with Exp
// (relative error at most 1e-15 against math.Exp, 0 below −708.39, +Inf
// above 709.78, NaN for NaN); the sum is accumulated in a different order
// on the vector path.
//
// On amd64 with AVX-512 it evaluates 16 exponentials per loop iteration
// (8 per instruction) by the same method with VRNDSCALEPD and VSCALEFPD;
// with AVX2 and FMA, 8 exponentials per loop iteration: x = k·ln2 + r with |r| <= ln2/2 (two FMAs against a two-part
// ln2), e^r by its degree-13 Taylor polynomial in Horner form (truncation
// error below 5e-18), and 2^k built in the exponent field. A block of 8
// holding a NaN or a value above 709.08 (where 2^k would overflow the
// exponent field) is handed to the scalar Exp.
func ExpShiftSum(dst, src []float64, shift float64) float64 {
	dst = dst[:len(src)]
	sum, i := 0.0, 0
	if useAVX512 {
		n16 := len(src) &^ 15
		for i < n16 {
			n, s := expShiftSumAVX512(dst[i:n16], src[i:n16], shift)
			sum += s
			i += n
			if i < n16 {
				sum += expShiftSumGo(dst[i:i+16], src[i:i+16], shift)
				i += 16
			}
		}
	}
	if useAVX2 {
		n8 := i + (len(src)-i)&^7
		for i < n8 {
			n, s := expShiftSumAVX2(dst[i:n8], src[i:n8], shift)
			sum += s
			i += n
			if i < n8 {
				sum += expShiftSumGo(dst[i:i+8], src[i:i+8], shift)
				i += 8
			}
		}
	}
	return sum + expShiftSumGo(dst[i:], src[i:], shift)
}

// expShiftSumGo is ExpShiftSum in Go, with Exp inlined so that two
// independent evaluations overlap.
func expShiftSumGo(dst, src []float64, shift float64) float64 {
	dst = dst[:len(src)]
	var s0, s1 float64
	i := 0
	for ; i+1 < len(src); i += 2 {
		x0, x1 := src[i]-shift, src[i+1]-shift
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
		e := Exp(src[i] - shift)
		dst[i] = e
		s0 += e
	}
	return s0 + s1
}

// subScaledMax writes dst[i] = x[i] − s·y[i] (the product rounded before
// the subtraction) and returns the largest dst[i], or −Inf for empty
// slices. A NaN in dst may or may not show in the maximum.
func subScaledMax(dst, x, y []float64, s float64) float64 {
	dst = dst[:len(x)]
	y = y[:len(x)]
	m, i := math.Inf(-1), 0
	if useAVX2 {
		if n8 := len(x) &^ 7; n8 > 0 {
			m = subScaledMaxAVX2(dst[:n8], x[:n8], y[:n8], s)
			i = n8
		}
	}
	for ; i < len(x); i++ {
		v := x[i] - float64(s*y[i])
		dst[i] = v
		m = max(m, v)
	}
	return m
}

// maxOf returns the largest element of x, or −Inf for an empty slice. A
// NaN may or may not show in the result.
func maxOf(x []float64) float64 {
	m, i := math.Inf(-1), 0
	if useAVX2 {
		if n8 := len(x) &^ 7; n8 > 0 {
			m = maxAVX2(x[:n8])
			i = n8
		}
	}
	for _, v := range x[i:] {
		m = max(m, v)
	}
	return m
}

// Scale multiplies x by a in place.
func Scale(x []float64, a float64) {
	i := 0
	if useAVX2 {
		if n8 := len(x) &^ 7; n8 > 0 {
			scaleAVX2(x[:n8], a)
			i = n8
		}
	}
	for j := i; j < len(x); j++ {
		x[j] *= a
	}
}
