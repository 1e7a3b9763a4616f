package privacy

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// ExponentialMechanism returns index i with probability proportional to
// exp(ε0·scores[i]/(2Δ)), Δ = sensitivity, by the Gumbel-max trick: it adds
// an independent standard Gumbel draw to each scaled score and returns the
// argmax. Only the index may be released; the scores and the noise stay
// inside.
//
// It works in log space: scores are shifted by their maximum before
// scaling, so no exponential is ever taken and no score magnitude
// overflows; at ±1e6 after scaling the Gumbel noise is added to values
// within 2e6 of 0, where float64 still resolves 2^-32. It allocates
// nothing. It panics on an empty slice, a NaN or infinite score, or a
// non-positive or non-finite ε0 or Δ (these are programming errors).
//
// Privacy: ε0-DP, and ε0-bounded range, hence ε0²/8-zCDP (see
// ExponentialMechanismCost), when every score has sensitivity at most Δ
// under the neighbouring relation (replace one record, n public, unless
// the caller states otherwise). Scores need not be monotone: the 2Δ in the
// exponent covers scores that move in opposite directions (queries and
// their negations). References: McSherry and Talwar 2007; Gumbel-max
// equivalence, e.g. Durfee and Rogers 2019.
//
// The Gumbel draws are floating point, −ln(−ln U) with U uniform on 2^52
// points in (0, 1): the selection probabilities match the exact softmax
// to within the float resolution of U, but this is not a proof-grade exact
// sampler (Ilvento, "Implementing the Exponential Mechanism with Base-2
// Differential Privacy", CCS 2020, discusses the gap).
func ExponentialMechanism(r *Rand, scores []float64, eps0, sensitivity float64) int {
	checkSelection("ExponentialMechanism", scores, eps0, sensitivity)
	hi := scoresMax(scores)
	c := eps0 / (2 * sensitivity)
	if math.IsInf(c, 0) {
		panic(fmt.Sprintf("privacy: ExponentialMechanism scale ε0/(2Δ) = %v/(2·%v) overflows", eps0, sensitivity))
	}
	best, bestV := 0, math.Inf(-1)
	for i, s := range scores {
		v := c*(s-hi) + gumbel(r)
		if v > bestV {
			best, bestV = i, v
		}
	}
	return best
}

// ExponentialMechanismCost is the cost of one ExponentialMechanism call with
// parameter ε0: ε0-DP, and ε0²/8-zCDP by bounded range.
func ExponentialMechanismCost(eps0 float64) Cost { return BoundedRangeCost(eps0) }

// Monotonicity is a caller's statement about how scores move between
// neighbouring datasets. The zero value is NonMonotone, the safe one.
type Monotonicity int

const (
	// NonMonotone: between neighbours, some scores may go up while others go
	// down. Replace-one neighbours with a query and its negation are always
	// in this case.
	NonMonotone Monotonicity = iota
	// Monotone: between any two neighbours, all scores move in the same
	// direction (for example counting queries under add/remove).
	Monotone
)

// ReportNoisyMaxLaplace returns the argmax of scores[i] + Lap(b) with
// independent Laplace noise of scale b = 2Δ/ε0 for NonMonotone scores and
// b = Δ/ε0 for Monotone ones (Δ = sensitivity). This is the
// report-noisy-max of seed 001, Algorithm 1 (the "paper" setting of DPFW);
// only the index may be released. It allocates nothing and panics on the
// same programming errors as ExponentialMechanism.
//
// Privacy: ε0-DP, hence ε0²/2-zCDP (see ReportNoisyMaxCost), when every score
// has sensitivity at most Δ under the neighbouring relation (replace one
// record, n public, by default) and the monotonicity stated is true (Dwork
// and Roth 2014, Claim 3.9, is for monotone counting queries with Lap(Δ/ε);
// for non-monotone scores Lap(Δ/ε) is only 2ε-DP, hence 2Δ/ε here; seed 001
// digest §3(b)).
//
// The Laplace noise is floating point (inverse CDF of a 53-bit uniform);
// the noisy scores are not released, only their argmax, and the same caveat
// as for ExponentialMechanism applies.
func ReportNoisyMaxLaplace(r *Rand, scores []float64, eps0, sensitivity float64, m Monotonicity) int {
	checkSelection("ReportNoisyMaxLaplace", scores, eps0, sensitivity)
	var b float64
	switch m {
	case NonMonotone:
		b = 2 * sensitivity / eps0
	case Monotone:
		b = sensitivity / eps0
	default:
		panic(fmt.Sprintf("privacy: unknown Monotonicity %d", m))
	}
	if math.IsInf(b, 0) {
		panic(fmt.Sprintf("privacy: ReportNoisyMaxLaplace scale Δ/ε0 = %v/%v overflows", sensitivity, eps0))
	}
	hi := scoresMax(scores)
	best, bestV := 0, math.Inf(-1)
	for i, s := range scores {
		v := (s - hi) + b*laplaceSelect(r)
		if v > bestV {
			best, bestV = i, v
		}
	}
	return best
}

// ReportNoisyMaxCost is the cost of one ReportNoisyMaxLaplace call with
// parameter ε0: ε0-DP, ε0²/2-zCDP.
func ReportNoisyMaxCost(eps0 float64) Cost { return PureCost(eps0) }

func checkSelection(name string, scores []float64, eps0, sensitivity float64) {
	if len(scores) == 0 {
		panic("privacy: " + name + " with no scores")
	}
	if !(eps0 > 0) || math.IsInf(eps0, 0) {
		panic(fmt.Sprintf("privacy: %s with eps0 = %v", name, eps0))
	}
	if !(sensitivity > 0) || math.IsInf(sensitivity, 0) {
		panic(fmt.Sprintf("privacy: %s with sensitivity = %v", name, sensitivity))
	}
}

// scoresMax returns the largest score and panics on NaN or ±Inf.
func scoresMax(scores []float64) float64 {
	hi := math.Inf(-1)
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			panic(fmt.Sprintf("privacy: score %d is %v", i, s))
		}
		hi = max(hi, s)
	}
	return hi
}

// gumbel returns a standard Gumbel draw, −ln(−ln U), U in (0, 1).
//
// privacy:float-ok: selection noise; only the argmax is released.
func gumbel(r *Rand) float64 {
	// U = (k + 0.5)/2^52, k < 2^52, is exact and never 0 or 1, so both
	// logarithms are finite.
	u := (float64(r.Uint64()>>12) + 0.5) * 0x1p-52
	return -math.Log(-math.Log(u))
}

// laplaceSelect returns a standard Laplace draw by the inverse CDF.
//
// privacy:float-ok: selection noise; only the argmax is released.
func laplaceSelect(r *Rand) float64 {
	w := r.Uint64()
	e := -math.Log(float64(w>>11+1) * 0x1p-53) // Exp(1), from a uniform in (0, 1]
	if w&1 != 0 {
		return -e
	}
	return e
}

// ExponentialMechanismWhere is ExponentialMechanism over the indices i for
// which ok(i) holds, testing ok lazily: it draws the same Gumbel noise as
// ExponentialMechanism over every score and walks the indices from the
// largest noisy score down, returning the first one ok accepts, or -1 when
// ok accepts none. With the Gumbel-max trick the argmax over a subset S of
// scores plus independent Gumbel draws is exactly the exponential mechanism
// over S, so the walk returns index i ∈ S with probability proportional to
// exp(ε0·scores[i]/(2Δ)) over S, while ok is called only on the indices that
// outscore the winner (usually one). When ok accepts every index it returns
// what ExponentialMechanism returns from the same source.
//
// scratch must hold at least len(scores) values; the walk past the first
// rejected index allocates the order of the rest. It panics as
// ExponentialMechanism does.
//
// Privacy: as ExponentialMechanism over S = {i : ok(i)} (ε0-DP,
// ε0²/8-zCDP for scores of sensitivity Δ), provided ok depends on public
// quantities only: never on the data, the scores or the noise. Which
// indices were tested and rejected must stay inside, as the noisy scores
// do.
func ExponentialMechanismWhere(r *Rand, scores []float64, eps0, sensitivity float64, ok func(i int) bool, scratch []float64) int {
	checkSelection("ExponentialMechanismWhere", scores, eps0, sensitivity)
	if len(scratch) < len(scores) {
		panic(fmt.Sprintf("privacy: ExponentialMechanismWhere with %d scratch values for %d scores", len(scratch), len(scores)))
	}
	hi := scoresMax(scores)
	c := eps0 / (2 * sensitivity)
	if math.IsInf(c, 0) {
		panic(fmt.Sprintf("privacy: ExponentialMechanismWhere scale ε0/(2Δ) = %v/(2·%v) overflows", eps0, sensitivity))
	}
	v := scratch[:len(scores)]
	best, bestV := 0, math.Inf(-1)
	for i, s := range scores {
		v[i] = c*(s-hi) + gumbel(r)
		if v[i] > bestV {
			best, bestV = i, v[i]
		}
	}
	if ok(best) {
		return best
	}
	order := make([]int, 0, len(scores)-1)
	for i := range scores {
		if i != best {
			order = append(order, i)
		}
	}
	// Largest noisy value first; ties (probability zero) by index.
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(v[b], v[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, i := range order {
		if ok(i) {
			return i
		}
	}
	return -1
}
