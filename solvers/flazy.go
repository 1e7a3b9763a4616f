package solvers

import (
	"errors"
	"math"
	"slices"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/privacy"
)

// The rounds' scores, computed lazily. A candidate's score is
// w·(‖t − n̂·p‖₁ − √(2/π)·σ·cells) (candScan), and its L1 distance is at most
// ‖t‖₁ + |n̂|·‖p‖₁: the bound needs no model marginal. The selection
// (privacy.ExponentialMechanismLazy) draws the Gumbel noise of every
// candidate as before and asks for the exact scores — the model's marginal
// on the candidate and the scan of its table — only of the candidates whose
// bound plus noise can beat the best exact noisy score: tables so large
// that their noise allowance outweighs any distance are never marginalised.
// The choice is the exponential mechanism's over the exact scores, as when
// every score was computed.

// lazyBoundSlack widens the bounds against the rounding of the L1 sums
// (relative error at most cells·2^-53, 1e-10 for 10^6 cells).
const lazyBoundSlack = 1e-7

// bounds writes every candidate's and coarse pair's upper bound on its
// score with the batch's σ (r.scan.sigma, which every score of the batch
// reads) into r.upper and marks every score as not yet
// computed for this model. mass is the model's total probability.
func (r *rounds) bounds(mass float64) {
	L := len(r.fp.cands)
	clear(r.carriedBy)
	n := math.Abs(r.nHat) * mass
	for i := range L {
		r.evaluated[i] = false
		if r.onSample(i) {
			// A bound carried from an exact score does not hold for
			// the sample's.
			r.l1ub[i] = math.Inf(1)
		}
		cells := float64(r.scan.cellsOf(i))
		r.l1ub[i] = min(r.l1ub[i], (r.records+n)*(1+lazyBoundSlack))
		r.upper[i] = r.fp.weights[i] * (r.l1ub[i] - math.Sqrt(2/math.Pi)*r.scan.sigma*cells)
	}
	for q := range r.coarse {
		k := &r.coarse[q]
		if r.onSample(k.base) {
			r.l1ub[L+q] = math.Inf(1)
		}
		r.l1ub[L+q] = min(r.l1ub[L+q], (r.records+n)*(1+lazyBoundSlack))
		r.upper[L+q] = r.fp.weights[k.base] * (r.l1ub[L+q] - math.Sqrt(2/math.Pi)*r.scan.sigma*float64(k.groups()))
	}
}

// drifted carries the L1 bounds over a fit that moved the model to m: a
// candidate's L1 distance ‖t − n̂·p‖₁ moves by at most |n̂| times the L1
// distance between its marginals before and after, which model.Drift
// bounds from the cliques' beliefs; the rounding of both sums is covered
// by the relative and absolute slack. A coarse pair's distance over groups
// moves by no more than its candidate's marginal.
func (r *rounds) drifted(m *model.Model) {
	r.drift.Measure(r.before, m)
	L := len(r.fp.cands)
	n := math.Abs(r.nHat)
	for i, c := range r.fp.cands {
		if math.IsInf(r.l1ub[i], 1) {
			continue
		}
		r.l1ub[i] = (r.l1ub[i]+n*r.drift.Bound(c))*(1+lazyBoundSlack) + n*driftSlack
	}
	for q := range r.coarse {
		if i := L + q; !math.IsInf(r.l1ub[i], 1) {
			r.l1ub[i] = (r.l1ub[i]+n*r.drift.Bound(r.fp.cands[r.coarse[q].base]))*(1+lazyBoundSlack) + n*driftSlack
		}
	}
}

// driftSlack is the absolute slack of a carried bound, as a share of n̂:
// the marginals and beliefs of the two models are sums of up to 10^7
// rounded terms each.
const driftSlack = 1e-9

// modelMass is the model's total probability (1 up to rounding), read off
// its smallest one-way marginal.
func modelMass(m *model.Model, sizes []int) (float64, error) {
	a := 0
	for i, s := range sizes {
		if s < sizes[a] {
			a = i
		}
	}
	buf := make([]float64, sizes[a])
	if err := m.Marginal([]int{a}, buf); err != nil {
		return 0, err
	}
	s := 0.0
	for _, v := range buf {
		s += v
	}
	return s, nil
}

// evaluate computes the scores of the candidates and coarse pairs in idx
// (indices into r.scoresAll) not yet computed on this model: one Marginals
// batch for their tables, except the candidates scored on a sample of the
// model (sampledScores: the sample's tables), then the scan. A candidate
// the model
// cannot marginalise leaves the running (r.active nil, score −Inf). The
// first error is kept in r.evalErr.
func (r *rounds) evaluate(m *model.Model, idx []int) {
	L := len(r.fp.cands)
	todo := r.todo[:0]
	for _, i := range idx {
		if i >= L {
			i = r.coarse[i-L].base
		}
		if !r.evaluated[i] && r.active[i] != nil && r.outs[i] == nil {
			r.outs[i] = r.bufOf(i)
			todo = append(todo, i)
		}
	}
	// The candidates scored on a sample of the model (fsampled.go).
	var sampled []int
	if r.sampledOn() {
		todo, sampled = r.sampled.split(todo)
		for _, i := range sampled {
			r.outs[i] = nil
		}
	}
	// A carried set's marginal costs a pass of its carried attribute
	// through the tree, which could answer the other sets of its carry
	// group for the cost of their read-outs. A group often holds many sets
	// that never come near winning, but the walk may come back to it for
	// a few more at a time: once the passes paid for on this model reach
	// the cost of the whole group, the whole group is computed (the
	// break-even rule: no group costs more than about twice its whole),
	// and at once when the whole costs at most three passes: the pairs of
	// a wide table (about 2.5 passes) are then carried once per fit, as
	// when every candidate was scored (wide128-2way seed 1: 84 s, against
	// 109 s at two passes and 91 s with every score computed), while the
	// triples of full ADULT (many read-outs per pass) still wait.
	if len(todo) > 0 {
		of, groups := m.CarryGroups(r.qsets)
		if len(r.carriedBy) != len(groups) {
			r.carriedBy = make([]float64, len(groups))
			r.carryCall = make([]int, len(groups))
		}
		r.calls++
		for _, i := range todo[:len(todo):len(todo)] {
			g := of[i]
			if g < 0 || r.carryCall[g] == r.calls {
				continue
			}
			r.carryCall[g] = r.calls
			cg := &groups[g]
			if r.carriedBy[g]+cg.Pass < cg.Whole && 3*cg.Pass < cg.Whole {
				r.carriedBy[g] += cg.Pass
				continue
			}
			for _, j := range cg.Sets {
				if !r.evaluated[j] && r.active[j] != nil && r.outs[j] == nil && !r.onSample(j) {
					r.outs[j] = r.bufOf(j)
					todo = append(todo, j)
				}
			}
		}
	}
	r.todo = todo
	if len(todo) > 0 && r.evalErr == nil {
		if err := m.Marginals(r.qsets, r.outs); err != nil {
			var me *model.MarginalsError
			if !errors.As(err, &me) {
				r.evalErr = err
			} else {
				for _, i := range me.Index {
					r.active[i] = nil
				}
			}
		}
	}
	if len(sampled) > 0 && r.evalErr == nil {
		if r.evalErr = r.sampled.draw(r.ctx, m, r.rnd); r.evalErr == nil {
			r.sampled.tables(r.team, r.fp.cands, sampled, r.bufs)
		}
		todo = append(todo, sampled...)
	}
	if len(todo) > 0 && r.evalErr == nil {
		r.scan.runSubset(r.team, todo)
	}
	r.record(idx, todo)
}

// record keeps the scores of todo that evaluate computed (and their L1
// distances as the bounds to carry over the next fit, except those from
// a sample) and computes the coarse pairs' of idx from their candidates'
// marginals.
func (r *rounds) record(idx, todo []int) {
	L := len(r.fp.cands)
	for _, i := range todo {
		r.outs[i] = nil
		r.evaluated[i] = true
		if r.active[i] == nil || r.evalErr != nil {
			r.scoresAll[i] = math.Inf(-1)
			continue
		}
		r.l1ub[i] = r.scan.l1[i]
		if r.onSample(i) {
			r.l1ub[i] = math.Inf(1)
		}
	}
	for _, i := range idx {
		if i < L {
			continue
		}
		k := &r.coarse[i-L]
		if r.active[k.base] == nil || r.evalErr != nil {
			r.scoresAll[i] = math.Inf(-1)
			continue
		}
		var l1, extra float64
		l1, r.gscratch = k.l1(r.tabs[k.base], r.bufs[k.base], r.nHat, r.gscratch)
		r.l1ub[i] = l1
		if r.onSample(k.base) {
			r.l1ub[i] = math.Inf(1)
			r.gscratch = k.sums(r.bufs[k.base], r.gscratch)
			extra = sampledAllowance(r.gscratch, r.nHat, r.sampled.rows)
		}
		// The batch's σ, as the candidates' scores (candScan) and the
		// bounds: a batch's last spend may recalibrate r.sigma.
		r.scoresAll[i] = r.fp.weights[k.base] * (l1 - math.Sqrt(2/math.Pi)*r.scan.sigma*float64(k.groups()) - extra)
	}
}

// choose returns the index in idx (into r.scoresAll) that the exponential
// mechanism (ε0 = r.eps, sensitivity fp.scoreSens) selects among those
// fits accepts, computing only the scores that can decide it (evaluate),
// or -1 if fits accepts none. Without privacy it computes every score and
// returns the first best that fits.
//
// Privacy: the exponential mechanism over the candidates of idx that the
// model can marginalise and fits accepts (public), as selectFeasible.
func (r *rounds) choose(p *Problem, m *model.Model, idx []int, fits func(int) bool) int {
	if p.noPrivacy {
		r.evaluate(m, idx)
		idx = slices.DeleteFunc(slices.Clone(idx), func(i int) bool { return math.IsInf(r.scoresAll[i], -1) })
		if len(idx) == 0 {
			return -1
		}
		return selectFeasible(p, r.scoresAll, idx, r.tmp, r.eps, r.fp.scoreSens, fits)
	}
	upper := r.tmp[:0]
	for _, i := range idx {
		upper = append(upper, r.upper[i])
	}
	exact := func(ks []int, out []float64) {
		sub := r.sub[:0]
		for _, k := range ks {
			sub = append(sub, idx[k])
		}
		r.sub = sub
		r.evaluate(m, sub)
		for j, i := range sub {
			out[j] = r.scoresAll[i]
		}
	}
	k := privacy.ExponentialMechanismLazy(p.Rand, upper, r.eps, r.fp.scoreSens, exact, func(k int) bool { return fits(idx[k]) }, &r.lazy)
	if k < 0 {
		return -1
	}
	return idx[k]
}

// runSubset scores the candidates idx (scoreOne), split over the team by
// their cells.
func (j *candScan) runSubset(team *par.Team, idx []int) {
	j.sub = idx
	j.subOff = slices.Grow(j.subOff[:0], len(idx)+1)[:len(idx)+1]
	j.subOff[0] = 0
	for k, i := range idx {
		j.subOff[k+1] = j.subOff[k] + len(j.tabs[i])
	}
	j.growScratch(team)
	team.For(j.subOff[len(idx)], 1, subsetScan{j})
	j.sub = nil
}

// subsetScan is runSubset's work: the candidates of j.sub whose cells start
// in [lo, hi).
type subsetScan struct{ j *candScan }

func (s subsetScan) Run(w, lo, hi int) {
	j := s.j
	k, _ := slices.BinarySearch(j.subOff[:len(j.sub)], lo)
	for ; k < len(j.sub) && j.subOff[k] < hi; k++ {
		if i := j.sub[k]; j.active[i] != nil {
			j.scoreOne(w, i)
		}
	}
}
