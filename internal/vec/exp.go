package vec

import "math"

// expTable[j] = 2^(j/64).
var expTable [64]float64

func init() {
	for j := range expTable {
		expTable[j] = math.Exp2(float64(j) / 64)
	}
}

const (
	expLo = -708.39 // below: 0 (no subnormals)
	expHi = 709.78  // above: +Inf

	// expHiFast bounds the vector kernel's range: above it, round(x/ln2)
	// reaches 1024 and 2^k no longer fits the exponent field.
	expHiFast = 709.08

	// ln2 = ln2Hi + ln2Lo, ln2Hi the float64 nearest to ln 2 (for the
	// FMA-based reduction of the vector kernel).
	ln2Hi = 0.6931471805599453
	ln2Lo = 2.3190468138462996e-17

	expKLen = 21 // rows of expK: 7 constants and 14 coefficients
)

// Exp returns e^x for x in the range the solvers use. It agrees with
// math.Exp to a few units in the last place (tested: relative error below
// 1e-15 over [-708, 709]); it returns 0 below -708.39 (no subnormals) and
// +Inf above 709.78.
//
// math.Exp costs about 6 ns here, as much as twenty sequential reads of a
// float64; the softmax of a 10^7-cell vector runs one exponential per cell
// every iteration. This is the table-driven reduction of the usual libm
// designs: x = (64e + j)·ln2/64 + r with |r| <= ln2/128, so
// e^x = 2^e · 2^(j/64) · e^r, and e^r needs only a degree-5 polynomial
// (truncation error below 4e-17).
func Exp(x float64) float64 {
	if !(x > expLo) {
		if x != x {
			return x
		}
		return 0
	}
	if x > expHi {
		return math.Inf(1)
	}
	return expCore(x)
}

// expCore is Exp for expLo < x <= expHi.
func expCore(x float64) float64 {
	const (
		invL  = 64 / math.Ln2
		l1    = 1.083042469326756e-02  // ln2/64 rounded to 32 significant bits, so kf*l1 is exact
		l2    = 2.9815858269852933e-12 // ln2/64 - l1, from a 60-digit ln2
		round = 6755399441055744.0     // 1.5·2^52: adding it rounds to an integer
	)
	kf := x*invL + round
	k := int64(math.Float64bits(kf)<<32) >> 32 // the integer, sign-extended
	kf -= round
	r := (x - kf*l1) - kf*l2
	r2 := r * r
	p := 1 + r + r2*((0.5+r*(1.0/6))+r2*(1.0/24+r*(1.0/120)))
	e := k >> 6
	t := expTable[k&63]
	if e > 1000 { // 2^e would overflow the exponent field at e = 1024
		return p * t * math.Float64frombits(uint64(e-1+1023)<<52) * 2
	}
	return p * t * math.Float64frombits(uint64(e+1023)<<52)
}
