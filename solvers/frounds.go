package solvers

import (
	"fmt"
	"math"
	"math/big"

	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/universe"
)

// The steps of one adaptive round of the factored project solver: select
// a candidate (selectRound), measure it (measureRound), and after the fit,
// how far the measurement moved the model (selected.moved).

// selectArgs is what a round's selection reads: which candidates are in
// the running and which are covered by measured sets, the coarse pairs, and
// the exponential mechanism over a set of them (choose: indices into the
// candidates, then the coarse pairs; -1 when the cap test accepts none).
type selectArgs struct {
	active     [][]float64
	covered    []bool
	coarseDone []bool
	coarse     []coarsePair
	choose     func(idx []int) int
}

// selectRound selects the round's candidate: by the exponential mechanism
// among the candidates in the running that no measured set covers, and
// the coarse pairs, restricted to those the cap test accepts; if it accepts
// none of them, among every candidate in the running (measured sets
// compete again). It returns the candidate and, for a coarse pair, the
// pair.
//
// Privacy: one exponential mechanism (rounds.choose) over a set of
// candidates fixed by public quantities (the measured sets, the cap): the
// caller charges it.
func (s *Project) selectRound(fp *factoredPlan, a selectArgs) (int, *coarsePair, error) {
	L := len(fp.cands)
	idx := make([]int, 0, L)
	for i := range fp.cands {
		if a.active[i] != nil && !a.covered[i] {
			idx = append(idx, i)
		}
	}
	// The coarse pairs compete in the same draw: a record moves a grouped
	// table's L1 distance by at most what it moves the full table's, so
	// scoreSens bounds their scores too.
	for q := range a.coarse {
		k := &a.coarse[q]
		if a.active[k.base] == nil || a.covered[k.base] || a.coarseDone[k.base] {
			continue
		}
		idx = append(idx, L+q)
	}
	sel := -1
	if len(idx) > 0 {
		sel = a.choose(idx)
	}
	if sel < 0 {
		// Nothing new fits the cap: the measured sets compete again.
		idx = idx[:0]
		for i := range fp.cands {
			if a.active[i] != nil {
				idx = append(idx, i)
			}
		}
		if len(idx) > 0 {
			sel = a.choose(idx)
		}
	}
	if sel < 0 {
		return 0, nil, fmt.Errorf("solvers: project: no candidate set fits the model cap of %s; raise --max-model-size: %w", universe.FormatBytes(new(big.Int).SetUint64(fp.cap)), ErrModelTooLarge)
	}
	if sel >= L {
		cp := &a.coarse[sel-L]
		return cp.base, cp, nil
	}
	return sel, nil, nil
}

// measureRound measures candidate sel's table tab with discrete Gaussian
// noise σ = sigma counts: on its groups when it is a coarse pair cp or is
// grouped on the supports (candScan.groupsOf), else cell by cell.
//
// A measurement on groups is returned on gv's grouping variables
// (groupVars.measurement).
//
// Privacy: a Gaussian mechanism on one marginal table (ℓ2 sensitivity
// fp.sens2's root; grouping does not raise it: a record is in one group):
// the caller charges it.
func (s *Project) measureRound(p *Problem, scan *candScan, gv *groupVars, sel int, cp *coarsePair, tab []int64, sigma, nHat float64) (fmeas, error) {
	c := scan.cands[sel]
	g := scan.groupsOf(sel)
	if cp != nil {
		g = cp.supportGroups
	}
	if g == nil {
		y := make([]float64, len(tab))
		if err := noisyTable(p, tab, sigma, y); err != nil {
			return fmeas{}, err
		}
		return toMeas(c, y, sigma, nHat), nil
	}
	gm := g.cellGroups()
	gt := make([]int64, g.n)
	for k, v := range tab {
		gt[gm[k]] += v
	}
	gy := make([]float64, len(gt))
	if err := noisyTable(p, gt, sigma, gy); err != nil {
		return fmeas{}, err
	}
	// The grouped measurement: the fit matches the model's group sums to
	// it.
	return gv.measurement(c, g, gm, toMeas(c, gy, sigma, nHat)), nil
}

// selected is one selection of a batch: the candidate, its coarse pair if
// any, its measurement, the model's marginal on it before the fit, and the
// round's σ and ε0.
type selected struct {
	index      int
	coarse     *coarsePair
	meas       fmeas
	before     []float64
	onGroups   bool // before is the groups' table (on meas.gset's radix), not the full table's
	sigma, eps float64
}

// moved returns how far the fit moved the model's table of the selection
// (L1, counts; on the groups for a grouped measurement) and the noise
// allowance it is tested against: the move expected of a fit that follows
// the measurement where the model was already right, Σ cellAllowance over
// the cells (or the groups) at the model's counts before the fit; allowUp
// is the same allowance at twice the measurement's σ, the σ before an
// annealing step (rounds.anneal). The model's table before the fit is
// b.before: the full table's, or the groups' when the selection was
// scored on its grouping variables (onGroups); after it, the full table
// of set is read from cur and summed onto the groups.
func (b *selected) moved(cur *model.Model, set []int, nHat float64) (moved, allow, allowUp float64, err error) {
	cells := len(b.before)
	if b.onGroups {
		cells = len(b.meas.cells)
	}
	after := make([]float64, cells)
	if err := cur.Marginal(set, after); err != nil {
		return 0, 0, 0, err
	}
	n := math.Abs(nHat)
	if gm := b.meas.cells; gm != nil {
		d := make([]float64, len(b.meas.y))
		m := make([]float64, len(b.meas.y))
		for k := range after {
			d[gm[k]] += after[k]
			if !b.onGroups {
				d[gm[k]] -= b.before[k]
				m[gm[k]] += b.before[k]
			}
		}
		if b.onGroups {
			for g, v := range b.before {
				d[g] -= v
				m[g] = v
			}
		}
		for g, v := range d {
			moved += math.Abs(v) * nHat
			allow += cellAllowance(m[g]*n, b.sigma)
			allowUp += cellAllowance(m[g]*n, 2*b.sigma)
		}
		return moved, allow, allowUp, nil
	}
	for k := range after {
		moved += math.Abs(after[k]-b.before[k]) * nHat
		allow += cellAllowance(b.before[k]*n, b.sigma)
		allowUp += cellAllowance(b.before[k]*n, 2*b.sigma)
	}
	return moved, allow, allowUp, nil
}

// cellAllowance is the expected move E|max(m+z, 0) − m| of a cell of model
// count m under a fit that follows a measurement of it with noise z ~ N(0,
// σ²) when the model is already right there: σ·(√(2/π) − φ(a) + a·Φ(−a)),
// a = m/σ. Where the mass is large it is AIM's allowance, √(2/π)·σ, the
// noise's mean absolute value; where it is 0 it is half that, σ/√(2π): a
// fit cannot move a count below zero, so on a sparse table AIM's allowance
// would call a wrong model right (and anneal) whenever the measurement's
// few large cells agreed with it.
func cellAllowance(m, sigma float64) float64 {
	a := max(m, 0) / sigma
	phi := math.Exp(-a*a/2) / math.Sqrt(2*math.Pi)
	return sigma * (math.Sqrt(2/math.Pi) - phi + a*0.5*math.Erfc(a/math.Sqrt2))
}
