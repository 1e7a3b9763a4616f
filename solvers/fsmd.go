package solvers

import (
	"context"
	"math"

	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/query"
)

// solveFactored runs SMD on the factored model: the same plan, charges,
// batches and draws as on the explicit model. The data player's log-weights
// a ← a + τ_x·v_{j_t} are log-linear over the drawn queries, one table per
// touched workload set (fiterate.go); the query player's gradient needs
// A'x^t, the model's answers to every query, and the batches' answers from
// the records (Problem.Counts). The output is the average of the iterates
// as a Mixture (or the last iterate x^{T+1} with Last). Queries whose
// set does not fit the model cap are left out of the round's draw; a set
// whose marginal could not be computed in some round (beyond the
// elimination cap) stays out for good, as its cumulative score S misses
// that round's answers (both rules are public: fiterate.go, Privacy).
func (s *SMD) solveFactored(ctx context.Context, p *Problem, plan *Plan, sp *smdPlan) (*Result, error) {
	it, err := newFIterate(&p.Shape)
	if err != nil {
		return nil, err
	}
	defer it.close()
	noiseScale := s.noiseScale
	if noiseScale == 0 {
		noiseScale = 1
	}
	m := sp.geo.m
	r := &fsmdRun{smd: &smdRun{p: p, sp: sp, m: m, S: make([]float64, 2*m), sens: sp.unitSens() / float64(sp.B) * noiseScale},
		it: it, dead: make([]bool, len(it.sets)), last: s.Last}
	if !p.noPrivacy {
		if err := r.smd.records(p); err != nil {
			return nil, err
		}
	}
	return runFactoredSteps(ctx, p, plan, sp.T, r)
}

// fsmdRun is the state of one SMD solve on the factored model.
type fsmdRun struct {
	smd  *smdRun // S, the records and the plan (its universe vectors unused)
	it   *fIterate
	dead []bool    // sets once unanswered: out of every later draw
	tmp  []float64 // packed scores when some sets are left out
	sel  []int     // the draws (public)
	em   expSelect
	last bool // output x^{T+1} alone
	mix  *Mixture
}

func (r *fsmdRun) step(t int) (int, float64, error) {
	p, sp, it, m, S := r.smd.p, r.smd.sp, r.it, r.smd.m, r.smd.S
	it.sync()
	if err := it.answer(it.mod); err != nil {
		return 0, 0, err
	}
	maxErr := 0.0
	for i, mg := range it.margs {
		d := it.setOf[i]
		if !it.avail[d] {
			r.dead[d] = true
		}
		if r.dead[d] {
			continue
		}
		for j := mg.Offset; j < mg.Offset+mg.Cells; j++ {
			x := it.ans[j]
			maxErr = max(maxErr, math.Abs(p.Answers[j]-x))
			S[j] -= x
			S[m+j] += x
		}
	}
	for d, dead := range r.dead {
		if dead {
			it.avail[d] = false
		}
	}
	if it.filter(it.tree, it.touched) < len(it.sets) && r.tmp == nil {
		r.tmp = make([]float64, 2*m)
	}
	if p.noPrivacy {
		for j, v := range p.Answers {
			S[j] += v
			S[m+j] -= v
		}
	} else {
		r.smd.addBatch(t)
	}
	s := it.pick(S, r.tmp, 2, r)
	if s < 0 {
		return 0, 0, it.errNoSelectable("smd")
	}
	r.sel = append(r.sel, s)
	j, sg := query.Signed(s, m)
	if err := it.addQuery(j, sg*sp.tauX); err != nil {
		return 0, 0, err
	}
	return s, maxErr, nil
}

func (r *fsmdRun) choose(sc []float64) int {
	if r.smd.p.noPrivacy {
		return fwArgmax(sc)
	}
	return r.em.draw(r.smd.p.Rand, sc, r.smd.sp.eps1, r.smd.sens)
}

func (r *fsmdRun) bound(t int) float64 { return r.smd.bound(t) }

// output returns the last iterate x^{T+1}.
func (r *fsmdRun) output() (*model.Model, error) {
	r.it.sync()
	m := r.it.take()
	if !r.last {
		// The average of the iterates: the mixture of x^1..x^{T+1}, whose
		// last component the model holds now.
		r.mix = &Mixture{it: r.it, model: m, sel: r.sel, step: r.smd.sp.tauX, cur: len(r.sel)}
	}
	return m, nil
}

func (r *fsmdRun) mixture() *Mixture { return r.mix }
