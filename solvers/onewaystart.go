package solvers

import (
	"math"

	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// oneWayStart is where the tuned fits' paths start: the product of the
// one-way tables that the noisy marginal tables imply, as log-weights over
// the universe (theta, the explicit fit) or as potentials of the factored
// fit's measurements (potentials, the factored model's measured plan).
//
// The fit is entropic mirror descent stopped early by SURE, and early
// stopping shrinks the fit towards its start. From the uniform
// distribution, the path learns the noise of large tables before it
// reaches the one-way structure the measurements hold in aggregate: at
// ε = 0.1 on a table of 7,425 rows and five attributes (slid), every table
// of C₂ ∪ C₃ is measured at σ ≈ 288 counts a cell, and the fit's marginal
// L1 error (0.60) was worse than that of the product of the exact one-way
// tables (0.41). Each one-way table, though, is the sum of every measured
// table holding its attribute: a table T of c_T cells gives attribute a's
// counts with variance σ_T²·c_T/c_a per value, and their inverse-variance
// mean is precise. Starting at the product of these estimates makes the
// early-stopped path a shrinkage towards independence instead of towards
// uniform (docs/BENCHMARKS.md "The explicit fit starts from the one-way
// tables").
//
// Precise is not smooth, though: at ε = 0.1 on slid the pooled estimate of
// age (17 buckets) still has σ ≈ 0.037 of the rows per value. Each
// estimate is therefore smoothed along its ordered codes (smoothCodes: not
// a categorical attribute's, never the null code) by the triangular
// moving average whose Stein unbiased risk estimate is the lowest
// (smoothOneWay, as the factored rounds' one-way tables); SURE keeps a
// precise profile, or one whose neighbouring values are not alike, as it
// is. On the explicit protocols it changes only the
// noisiest points (slid at 0.1: marginal L1 0.563 → 0.510 over 12 seeds;
// docs/BENCHMARKS.md "Two held-out tables, more seeds, and the explicit
// fit's start smoothed").
//
// The values an estimate does not resolve, below 3 times their noise, are
// then pooled towards their group's mean (unresolved): the floor below
// would otherwise lift the noise of many empty values into mass the
// records do not hold (affairs at ε = 0.1: marginal L1 0.88×, max error
// 0.77× over 18 seeds; docs/BENCHMARKS.md "The one-way start pools the
// values the budget does not resolve").
//
// SURE's shadow fit starts from its own perturbed measurements with the
// same start, at the half-widths and in the groups the main start chose
// (halfWidths, unresolved): with a choice made again, a probe that tips it
// moves the shadow's start by a jump, which SURE reads as a divergence,
// and the running maximum (pathDF) then keeps it for the whole path
// (healthins at ε = 0.1: one release in 540 of the explicit suite
// overfitted so, L1 0.32 against 0.22 with the half-widths kept;
// docs/BENCHMARKS.md).
//
// Each estimated share is floored at half a record (1/(2n̂), a continuity
// correction: a log-weight of −∞ would keep a cell empty whatever the other
// measurements say). An attribute in no measured table starts uniform.
//
// Privacy: it reads only the noisy measurements y (post-processing).
type oneWayStart struct {
	dom     *universe.Domain
	sizes   []int            // dom.Sizes(), kept: Sizes allocates a new slice per call
	tables  []query.Marginal // the measured marginal tables: rows [Offset, Offset+Cells) of y
	nHat    float64
	est     [][]float64 // scratch: per attribute, the weighted sum of its estimates
	weights []float64   // scratch: per attribute, the sum of the weights
	// halfWidths are the smoothing half-widths the first start chose, per
	// attribute (chosen: set after it). SURE's shadow starts again from its
	// perturbed measurements with the same object and the same half-widths:
	// the divergence it reads is then that of one linear smoother, not a
	// jump where the probe tips SURE's choice of a half-width.
	halfWidths []int
	// unresolved are the groups of values the first start found below
	// their noise, per attribute, kept for the shadow as the half-widths.
	unresolved []*unresolved
	chosen     bool
	tmp        []float64
}

// newOneWayStart prepares the start for the marginal tables of mw (nil: no
// marginal tables; the start is then uniform), whose noisy fractions of
// nHat come first in y.
func newOneWayStart(dom *universe.Domain, mw *query.Workload, nHat float64) *oneWayStart {
	sizes := dom.Sizes()
	o := &oneWayStart{dom: dom, sizes: sizes, nHat: nHat, est: make([][]float64, len(sizes)), weights: make([]float64, len(sizes)),
		halfWidths: make([]int, len(sizes)), unresolved: make([]*unresolved, len(sizes))}
	if mw != nil {
		o.tables = mw.Marginals()
	}
	for a, n := range sizes {
		o.est[a] = make([]float64, n)
	}
	return o
}

// theta writes the start's log-weights for the measurements y (weights w =
// 1/σ², both in fractions) into theta, one per universe cell (the last
// attribute fastest).
func (o *oneWayStart) theta(y, w, theta []float64) {
	o.reset()
	for _, t := range o.tables {
		o.add(fmeas{set: t.Attrs, y: y[t.Offset : t.Offset+t.Cells], w: w[t.Offset]})
	}
	// theta over the universe: the product, attribute by attribute, the
	// last fastest (the expansion runs backwards so that it can stay in
	// place).
	theta[0] = 0
	size := 1
	for a, n := range o.sizes {
		lp := o.logShares(a)
		for i := size - 1; i >= 0; i-- {
			base := theta[i]
			for v := n - 1; v >= 0; v-- {
				theta[i*n+v] = base + lp[v]
			}
		}
		size *= n
	}
	if size != len(theta) {
		panic("solvers: oneWayStart: theta is not the universe's size")
	}
	o.chosen = true
}

// potentials writes the start into the factored fit's potentials phi (one
// per measurement of ms, all zero on entry): each attribute's log-shares,
// estimated from ms as theta's, go to the first measurement holding the
// attribute, so that the model exp(Σ_j φ_j) is the product of the one-way
// estimates. An attribute in no measurement starts uniform.
func (o *oneWayStart) potentials(ms []fmeas, phi [][]float64) {
	o.reset()
	for _, m := range ms {
		o.add(m)
	}
	placed := make([]bool, len(o.sizes))
	for j, m := range ms {
		dims := make([]int, len(m.set))
		for k, a := range m.set {
			dims[k] = o.sizes[a]
		}
		for k, a := range m.set {
			if placed[a] {
				continue
			}
			placed[a] = true
			lp := o.logShares(a)
			// Cell c's value of a: its k-th mixed-radix digit (the last
			// attribute fastest).
			stride := 1
			for i := k + 1; i < len(dims); i++ {
				stride *= dims[i]
			}
			for c := range phi[j] {
				phi[j][c] += lp[(c/stride)%dims[k]]
			}
		}
	}
	o.chosen = true
}

// reset clears the estimates.
func (o *oneWayStart) reset() {
	for a := range o.sizes {
		clear(o.est[a])
		o.weights[a] = 0
	}
}

// add adds measurement m's estimate of each of its attributes: m summed
// over its other attributes, a's counts with the summed variance
// σ_m²·c_m/c_a (weight w_m·c_a/c_m). A measurement on groups (the rounds'
// coarse pairs) holds no table in y and adds nothing.
func (o *oneWayStart) add(m fmeas) {
	if m.gm != nil {
		return
	}
	for k, a := range m.set {
		one := sumOut(o.sizes, m, k)
		for v, c := range one.y {
			o.est[a][v] += one.w * c
		}
		o.weights[a] += one.w
	}
}

// logShares turns attribute a's estimate into log-shares (in o.est[a]):
// smoothed at the estimate's noise as the factored rounds' one-way tables
// are (smoothOneWay; after the first start, at the half-width it chose),
// the values it does not resolve pooled (unresolved), each share at least
// half a record, 1/(2n̂), normalised.
func (o *oneWayStart) logShares(a int) []float64 {
	floor := 0.5 / o.nHat
	est := o.est[a]
	if o.weights[a] == 0 {
		clear(est) // in no measured table: uniform
		return est
	}
	for v := range est {
		est[v] /= o.weights[a]
	}
	attr, sigma := o.dom.Attr(a), 1/math.Sqrt(o.weights[a])
	n := smoothCodes(attr)
	if !o.chosen {
		o.halfWidths[a] = smoothOneWay(est, attr, sigma)
		sd := make([]float64, len(est))
		smoothedSD(sd, sigma, o.halfWidths[a], n)
		o.unresolved[a] = newUnresolved(est, sd, n, supportSigmas())
	} else if h := o.halfWidths[a]; h > 0 {
		o.tmp, _ = smoothTri(est[:n], h, o.tmp)
		copy(est, o.tmp)
	}
	o.unresolved[a].shrink(est)
	tot := 0.0
	for v := range est {
		est[v] = max(est[v], floor)
		tot += est[v]
	}
	for v := range est {
		est[v] = math.Log(est[v] / tot)
	}
	return est
}
