package draft

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/dpsynth/synth/privacy"
)

// appearProb is the public miss probability behind the stated "appears"
// threshold T of partition selection: a value held by at least T units
// appears with probability at least 1 − appearProb.
const appearProb = 1e-9

// dgTail returns an upper bound on P(Z >= t) for Z discrete Gaussian
// N_Z(0, σ²) and t >= 0:
//
//	P(Z >= t) <= ½·erfc(t/(σ√2)) + e^{−t²/(2σ²)}/(σ√(2π)).
//
// Proof: the weights w(z) = e^{−z²/(2σ²)} decrease on z >= 0, so
// Σ_{z>=t} w(z) <= w(t) + ∫_t^∞ w = w(t) + σ√(π/2)·erfc(t/(σ√2)); and the
// normaliser Σ_z w(z) = σ√(2π)·Σ_k e^{−2π²σ²k²} >= σ√(2π) (Poisson
// summation). The result is raised by a relative 1e-9 for floating point.
func dgTail(t, sigma float64) float64 {
	if t <= 0 {
		return 1
	}
	b := 0.5*math.Erfc(t/(sigma*math.Sqrt2)) + math.Exp(-t*t/(2*sigma*sigma))/(sigma*math.Sqrt(2*math.Pi))
	return min(1, b*(1+1e-9))
}

// smallestTail returns the smallest integer t >= 0 with dgTail(t, σ) <= p.
func smallestTail(sigma, p float64) int64 {
	lo, hi := int64(0), int64(math.Ceil(sigma*(math.Sqrt(2*math.Log(1/p))+2)))+2
	for dgTail(float64(hi), sigma) > p {
		hi *= 2
	}
	for lo < hi { // dgTail(hi) <= p
		mid := lo + (hi-lo)/2
		if dgTail(float64(mid), sigma) <= p {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

// selection is the public calibration of a column's partition selection.
type selection struct {
	sigma   float64
	tau     int64   // a value is kept when its noisy count is >= tau
	appear  int64   // a value held by >= appear units appears w.p. >= 1 − appearProb
	pSingle float64 // bound on the probability that a value held by one unit appears
	delta   float64 // the δ this selection adds
}

// newSelection calibrates the threshold: τ is the smallest integer with
// K·P(1 + Z >= τ) <= δ, Z the noise, so that the K values (at most) that
// only the added unit holds all stay out but with probability at most δ.
func newSelection(sigma float64, k int, delta float64) selection {
	tail := smallestTail(sigma, delta/float64(k)) // P(Z >= tail) <= δ/K
	s := selection{sigma: sigma, tau: tail + 1, delta: delta}
	s.pSingle = dgTail(float64(s.tau-1), sigma)
	s.appear = s.tau - 1 + smallestTail(sigma, appearProb)
	return s
}

// newSelectionNoise calibrates a column's partition selection to ρ and δ:
// the discrete Gaussian of smallest σ whose cost at ℓ2 sensitivity √K (see
// selectCategories) is at most ρ, its threshold, and its cost: that zCDP
// cost, K/(2σ²), and δ (ApproxCost(0, δ), composed with the zCDP total as
// approximate zCDP).
func newSelectionNoise(k int, rho, delta float64) (*privacy.DiscreteGaussian, selection, privacy.Cost, privacy.Cost, error) {
	l2 := math.Sqrt(float64(k))
	g, err := gaussianFor(l2, rho)
	if err != nil {
		return nil, selection{}, privacy.Cost{}, privacy.Cost{}, err
	}
	return g, newSelection(g.Sigma(), k, delta), g.Cost(l2), privacy.ApproxCost(0, delta), nil
}

// selectCategories proposes a text column's categories by differentially
// private partition selection (Gaussian thresholding): it counts, for each
// value present in the kept rows, the units that hold it (a unit counts
// once per value), adds discrete Gaussian noise to each count, keeps the
// values whose noisy count is at least τ, then the MaxCategories largest
// of those, sorted by text.
//
// Privacy: let D' be D with one unit u added (at most K kept rows, hence at
// most K distinct values). Every value's count moves by at most 1, and at
// most K counts move: on the values present in both D and D', the counts
// differ by at most √K in ℓ2 (and 1 in ℓ∞), and the discrete Gaussian of
// variance σ² makes their release K/(2σ²)-zCDP. A value present only in D'
// is held by u alone: its count is 1, and it is released only when
// 1 + Z >= τ, which τ makes happen with probability at most δ_sel/K per
// value, δ_sel for all (the event E that none does). Conditioned on E,
// the output on D' is that of the values present in both, so the selection
// is δ_sel-approximately K/(2σ²)-zCDP (approximate zCDP: Bun and Steinke
// 2016, Section 8; this is the usual argument for Gaussian thresholding, as
// in Google's differential-privacy library). Approximate zCDP composes by
// adding ρ and δ, which is how the ledger adds the column's δ_sel charge to
// the zCDP total converted at the δ left. Which values are kept,
// their order and the top-MaxCategories cut are functions of the noisy
// counts: post-processing. The noisy counts themselves are not written.
func selectCategories(c *column, cp *colPlan, v *vote, rows []int32, groups [][]int32, st *settings, r *privacy.Rand) ([]string, []string) {
	counts := unitCounts(c, v.null, rows, groups)
	// Noise in sorted order, so that a seeded draft is reproducible.
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	type kept struct {
		v string
		n int64
	}
	var out []kept
	sel := cp.sel
	for _, k := range keys {
		n := counts[k] + cp.ps.Sample(r)
		if n >= sel.tau {
			out = append(out, kept{k, n})
		}
	}
	var notes []string
	notes = append(notes, fmt.Sprintf("column %q: categories by DP partition selection: a value appears when its noisy count of units is at least τ = %d (discrete Gaussian, σ = %.3g): a value held by fewer than about %d units is unlikely to appear, one held by at least %d units appears with probability at least 1 − %g, and one held by a single unit with probability at most %.2g",
		c.name, sel.tau, sel.sigma, sel.tau, sel.appear, appearProb, sel.pSingle))
	if len(out) > st.MaxCategories {
		slices.SortStableFunc(out, func(a, b kept) int { return cmp.Compare(b.n, a.n) })
		notes = append(notes, fmt.Sprintf("column %q: %d values passed the threshold; the %d with the largest noisy counts are kept (add the others you know of, or use an \"other\" value)", c.name, len(out), st.MaxCategories))
		out = out[:st.MaxCategories]
	}
	vals := make([]string, len(out))
	for i, o := range out {
		vals[i] = o.v
	}
	slices.Sort(vals)
	if len(vals) == 0 {
		notes = append(notes, fmt.Sprintf("column %q: no value passed the threshold: the placeholder %q must be replaced by the column's categories (from a code book), or the column excluded", c.name, NoneFound))
		return []string{NoneFound}, notes
	}
	notes = append(notes, fmt.Sprintf("column %q: rare values are missing from the list: they go to the declared other value %q with --unknown-to-other (a release without it fails on them); or add the values you know of", c.name, OtherValue))
	return vals, notes
}

// unitCounts returns, for each value of a text column in the kept rows
// (typed nulls and the null token left out), the number of units that hold
// it: a unit counts once per value. Internal: only noisy counts compared
// with τ leave selectCategories.
func unitCounts(c *column, null *string, rows []int32, groups [][]int32) map[string]int64 {
	counts := map[string]int64{}
	skip := func(i int32) bool { return c.isNull(i) || (null != nil && c.text[i] == *null) }
	if groups == nil {
		for _, i := range rows {
			if !skip(i) {
				counts[c.text[i]]++
			}
		}
		return counts
	}
	var seen []string
	for _, g := range groups {
		seen = seen[:0]
		for _, i := range g {
			if skip(i) || slices.Contains(seen, c.text[i]) {
				continue
			}
			seen = append(seen, c.text[i])
			counts[c.text[i]]++
		}
	}
	return counts
}
