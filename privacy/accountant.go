package privacy

import (
	"errors"
	"fmt"
	"math"
)

// Conversion chooses how a zCDP guarantee ρ becomes an (ε, δ) statement.
// The zero value is Tight.
type Conversion int

const (
	// Tight is the optimal conversion of Canonne, Kamath and Steinke 2020,
	// Proposition 12 (Steinke's cdp_delta / cdp_eps / cdp_rho, as used by
	// AIM and OpenDP): ρ-zCDP implies (ε, δ)-DP for
	//
	//	δ(ε) = min over α > 1 of exp((α−1)(αρ−ε) + α·ln(1−1/α)) / (α−1).
	//
	// For the same (ε, δ) it allows more ρ than Standard.
	Tight Conversion = iota
	// Standard is ε = ρ + 2√(ρ ln(1/δ)) (Bun and Steinke 2016,
	// Proposition 1.3).
	Standard
)

// String returns "tight" or "standard".
func (c Conversion) String() string {
	switch c {
	case Tight:
		return "tight"
	case Standard:
		return "standard"
	}
	return fmt.Sprintf("Conversion(%d)", int(c))
}

// deltaMargin inflates the computed δ of the tight conversion to cover the
// floating-point error of evaluating its formula (relative error of order
// 1e-14 for exponents up to a few hundred).
const deltaMargin = 1 + 1e-10

// RhoToDelta returns a δ such that ρ-zCDP implies (ε, δ)-DP, by the tight
// conversion. Any α > 1 gives a valid bound, so the search for the best α
// can only err towards a larger δ; the result is then raised by a relative
// 1e-10 for floating-point error. It panics on negative or non-finite
// arguments.
func RhoToDelta(rho, eps float64) float64 {
	checkParam("rho", rho)
	checkParam("eps", eps)
	if rho == 0 {
		return 0
	}
	// The optimal α is at least (1 + ε/ρ)/2; α near 1 is numerically
	// delicate and only matters when ε <= ρ, where δ is large anyway.
	lo, hi := 1.01, (eps+1)/(2*rho)+2
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		// Derivative of the log of the bound in α, up to a positive factor.
		if (2*mid-1)*rho-eps+math.Log1p(-1/mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	a := lo + (hi-lo)/2
	d := math.Exp((a-1)*(a*rho-eps)+a*math.Log1p(-1/a)) / (a - 1) * deltaMargin
	return min(d, 1)
}

// RhoToEps returns the smallest ε (within the search's precision, always
// rounded up) such that ρ-zCDP implies (ε, δ)-DP, for 0 < δ < 1.
func RhoToEps(rho, delta float64, c Conversion) float64 {
	checkParam("rho", rho)
	if !(delta > 0 && delta < 1) {
		panic(fmt.Sprintf("privacy: RhoToEps with delta = %v: must be in (0, 1)", delta))
	}
	if rho == 0 {
		return 0
	}
	l := math.Log(1 / delta)
	std := up(rho + 2*math.Sqrt(rho*l))
	if c == Standard {
		return std
	}
	// Invariant: RhoToDelta(rho, hi) <= delta < RhoToDelta(rho, lo).
	lo, hi := 0.0, std
	for RhoToDelta(rho, hi) > delta {
		hi *= 2 // not expected: tight is never worse than standard
	}
	// Up to 2,200 halvings: enough to resolve any float64 (from 1e308 down
	// to the smallest subnormal), so that a tiny ρ converts to a tiny ε
	// rather than to the search's floor; the loop stops as soon as the
	// bracket cannot shrink.
	for range 2200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if RhoToDelta(rho, mid) <= delta {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// EpsToRho returns the largest ρ (within the search's precision, always
// rounded down) such that ρ-zCDP implies (ε, δ)-DP, for ε > 0, 0 < δ < 1.
func EpsToRho(eps, delta float64, c Conversion) float64 {
	if !(eps > 0) || math.IsInf(eps, 0) {
		panic(fmt.Sprintf("privacy: EpsToRho with eps = %v: must be finite and positive", eps))
	}
	if !(delta > 0 && delta < 1) {
		panic(fmt.Sprintf("privacy: EpsToRho with delta = %v: must be in (0, 1)", delta))
	}
	l := math.Log(1 / delta)
	if c == Standard {
		s := math.Sqrt(l+eps) - math.Sqrt(l)
		rho := s * s
		for rho > 0 && rho+2*math.Sqrt(rho*l) > eps {
			rho = math.Nextafter(rho, 0)
		}
		return rho
	}
	// Invariant: RhoToDelta(lo, eps) <= delta < RhoToDelta(hi, eps).
	lo, hi := 0.0, eps+1
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if RhoToDelta(mid, eps) <= delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// AdvancedComposition returns ε such that the adaptive composition of k
// mechanisms, each ε0-DP, is (ε, δ')-DP (Dwork, Rothblum and Vadhan 2010,
// Theorem III.3):
//
//	ε = ε0·√(2k·ln(1/δ')) + k·ε0·(e^ε0 − 1).
//
// The result is rounded up.
func AdvancedComposition(eps0 float64, k int, deltaPrime float64) float64 {
	checkParam("eps0", eps0)
	if k < 0 {
		panic(fmt.Sprintf("privacy: AdvancedComposition with k = %d", k))
	}
	if !(deltaPrime > 0 && deltaPrime < 1) {
		panic(fmt.Sprintf("privacy: AdvancedComposition with delta = %v: must be in (0, 1)", deltaPrime))
	}
	f := float64(k)
	return up(eps0*math.Sqrt(2*f*math.Log(1/deltaPrime)) + f*eps0*math.Expm1(eps0))
}

// ErrPaperCondition reports that the seeds' composition bound does not apply.
var ErrPaperCondition = errors.New("privacy: the paper's composition bound needs ln(1/δ) >= ε̃²·T")

// PaperComposition returns the seeds' "paper" bound for T-fold composition
// of ε̃-DP steps (seed 001, line 561, citing DRV10): (4ε̃√(2T ln(1/δ)), δ),
// valid when ln(1/δ) >= ε̃²T (ErrPaperCondition otherwise). It is cruder than
// AdvancedComposition (about 4× on the seeds' settings) and exists so that
// the "paper" settings can be reproduced; label charges made with it
// "paper".
func PaperComposition(epsTilde float64, T int, delta float64) (float64, error) {
	checkParam("eps", epsTilde)
	if T < 0 {
		panic(fmt.Sprintf("privacy: PaperComposition with T = %d", T))
	}
	if !(delta > 0 && delta < 1) {
		panic(fmt.Sprintf("privacy: PaperComposition with delta = %v: must be in (0, 1)", delta))
	}
	l := math.Log(1 / delta)
	f := float64(T)
	if epsTilde*epsTilde*f > l {
		return 0, ErrPaperCondition
	}
	return up(4 * epsTilde * math.Sqrt(2*f*l)), nil
}

// Calibration tolerance. Every Calibrate function returns a parameter whose
// total cost, computed the way Cost.Times and the Ledger compute it, lies
// between (1 − 2·10⁻⁹) and (1 − 10⁻⁹) of the target: never above it, and with
// enough room (10⁻⁹ relative) that summing up to 10⁶ per-step charges in
// floating point in a Ledger stays within the target too.
const (
	calSlack = 1e-9
	calTol   = 1e-9
)

// largest returns the largest x in [0, hi] with f(x) <= target·(1−calSlack),
// to a relative precision of calTol, for f increasing with f(0) <= target.
func largest(f func(float64) float64, target, hi float64) float64 {
	goal := target * (1 - calSlack)
	lo := 0.0
	for f(hi) <= goal {
		lo, hi = hi, 2*hi
	}
	for hi-lo > calTol*lo*0.5 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if f(mid) <= goal {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

func checkSteps(steps int) {
	if steps < 1 {
		panic(fmt.Sprintf("privacy: calibration for %d steps", steps))
	}
}

func checkTarget(name string, v float64) {
	if !(v > 0) || math.IsInf(v, 0) {
		panic(fmt.Sprintf("privacy: calibration target %s = %v: must be finite and positive", name, v))
	}
}

// CalibrateExponential returns the per-step ε0 of the exponential mechanism
// such that steps selections cost at most rho in zCDP (steps·ε0²/8 <= ρ).
func CalibrateExponential(rho float64, steps int) float64 {
	checkTarget("rho", rho)
	checkSteps(steps)
	f := float64(steps)
	return largest(func(e float64) float64 { return f * (e * e / 8) }, rho, math.Sqrt(8*rho/f)*2)
}

// CalibratePure returns the per-step ε0 of a pure ε0-DP mechanism counted
// as ε0²/2-zCDP (Laplace report-noisy-max, discrete Laplace) such that
// steps runs cost at most rho.
func CalibratePure(rho float64, steps int) float64 {
	checkTarget("rho", rho)
	checkSteps(steps)
	f := float64(steps)
	return largest(func(e float64) float64 { return f * (e * e / 2) }, rho, math.Sqrt(2*rho/f)*2)
}

// CalibrateGaussian returns the smallest σ (to the calibration tolerance)
// such that steps Gaussian mechanisms of ℓ2 sensitivity l2Sensitivity cost
// at most rho: steps·Δ²/(2σ²) <= ρ.
func CalibrateGaussian(rho float64, steps int, l2Sensitivity float64) float64 {
	checkTarget("rho", rho)
	checkTarget("sensitivity", l2Sensitivity)
	checkSteps(steps)
	// Search over 1/σ, in which the cost is increasing.
	inv := largest(func(v float64) float64 {
		if v == 0 {
			return 0
		}
		return GaussianCost(l2Sensitivity, 1/v).Times(steps).Rho
	}, rho, 2*math.Sqrt(2*rho/float64(steps))/l2Sensitivity)
	s := 1 / inv
	for GaussianCost(l2Sensitivity, s).Times(steps).Rho > rho*(1-calSlack) {
		s = math.Nextafter(s, math.Inf(1)) // 1/inv rounded down
	}
	return s
}

// CalibrateAdvanced returns the per-step ε0 such that steps ε0-DP
// mechanisms are (eps, delta)-DP by AdvancedComposition.
func CalibrateAdvanced(eps, delta float64, steps int) float64 {
	checkTarget("eps", eps)
	checkSteps(steps)
	return largest(func(e float64) float64 { return AdvancedComposition(e, steps, delta) }, eps,
		eps/math.Sqrt(2*float64(steps)*math.Log(1/delta)))
}

// CalibratePaper returns the seeds' per-step ε̃ = ε/(4√(2T ln(1/δ))) (seed
// 001, line 580), lowered by the calibration slack, and checks the bound's
// condition ln(1/δ) >= ε̃²T.
func CalibratePaper(eps, delta float64, steps int) (float64, error) {
	checkTarget("eps", eps)
	checkSteps(steps)
	l := math.Log(1 / delta)
	if e := eps / (4 * math.Sqrt(2*float64(steps)*l)); e*e*float64(steps) > l {
		return 0, ErrPaperCondition
	}
	return largest(func(e float64) float64 {
		v, err := PaperComposition(e, steps, delta)
		if err != nil {
			return math.Inf(1)
		}
		return v
	}, eps, eps/(4*math.Sqrt(2*float64(steps)*l))), nil
}
