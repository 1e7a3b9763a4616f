package solvers

import (
	"context"
	"math"

	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
)

// solveFactored runs DPFW on the factored model: the same plan, charges,
// scores and selections as on the explicit model, with the iterate
// D_t = softmax(q_t/α) held as θ = q_t/α, one table per touched workload
// set (fiterate.go). The step q ← (1 − γ)q + γ·s scales every table by
// (1 − γ) (lazily) and adds γ/α·(±weight) to the selected query's cell.
// Every output rule is log-linear (the last or a uniform iterate, or
// softmax of the averaged q̄), so all of them run here. Queries whose set
// does not fit the model cap are left out of the round's selection (see
// fiterate.go, Privacy).
func (s *DPFW) solveFactored(ctx context.Context, p *Problem, plan *Plan, fp *fwPlan) (*Result, error) {
	it, err := newFIterate(&p.Shape)
	if err != nil {
		return nil, err
	}
	defer it.close()
	r := &ffwRun{p: p, fp: fp, it: it, m: fp.geo.m, score: make([]float64, 2*fp.geo.m),
		sel: make([]int, 0, fp.T), gam: make([]float64, 0, fp.T), init: -1}
	noiseScale := s.noiseScale
	if noiseScale == 0 {
		noiseScale = 1
	}
	r.sens = fp.sens * noiseScale
	r.lapSens = fp.lapScale * fp.eps0 / 2 * noiseScale
	if fp.paper {
		// q_0: a vertex drawn uniformly (public randomness).
		r.init = int(p.Rand.Uint64N(uint64(2 * r.m)))
		j, sg := query.Signed(r.init, r.m)
		if err := it.addQuery(j, sg/fp.alpha); err != nil {
			return nil, err
		}
	}
	return runFactoredSteps(ctx, p, plan, fp.T, r)
}

// ffwRun is the state of one DPFW solve on the factored model.
type ffwRun struct {
	p     *Problem
	fp    *fwPlan
	it    *fIterate
	m     int
	score []float64 // 2m signed scores (packed in place when some sets are left out)
	sens  float64
	// lapSens is the sensitivity passed to report-noisy-max (paper).
	lapSens float64
	sel     []int
	gam     []float64
	init    int
	em      expSelect
}

func (r *ffwRun) step(t int) (int, float64, error) {
	p, fp, it, m := r.p, r.fp, r.it, r.m
	it.sync()
	if err := it.answer(it.mod); err != nil {
		return 0, 0, err
	}
	it.filter(it.tree, it.touched)
	maxErr := 0.0
	for i, mg := range it.margs {
		if !it.avail[it.setOf[i]] {
			continue
		}
		for j := mg.Offset; j < mg.Offset+mg.Cells; j++ {
			g := p.Answers[j] - it.ans[j]
			r.score[j], r.score[m+j] = g, -g
			maxErr = max(maxErr, math.Abs(g))
		}
	}
	s := it.pick(r.score, r.score, 2, r)
	if s < 0 {
		return 0, 0, it.errNoSelectable("dpfw")
	}
	g := fwGamma(fp, t)
	r.sel = append(r.sel, s)
	r.gam = append(r.gam, g)
	j, sg := query.Signed(s, m)
	if g >= 1 {
		it.reset()
	} else {
		it.scale(1 - g)
	}
	if err := it.addQuery(j, sg*g/fp.alpha); err != nil {
		return 0, 0, err
	}
	return s, maxErr, nil
}

func (r *ffwRun) choose(sc []float64) int {
	p, fp := r.p, r.fp
	switch {
	case p.noPrivacy:
		return fwArgmax(sc)
	case fp.paper:
		return privacy.ReportNoisyMaxLaplace(p.Rand, sc, fp.eps0, r.lapSens, privacy.NonMonotone)
	default:
		return r.em.draw(p.Rand, sc, fp.eps0, r.sens)
	}
}

// fwGamma returns γ_t of a plan.
func fwGamma(fp *fwPlan, t int) float64 {
	if fp.step == FWStepHarmonic {
		return 2 / float64(t+2)
	}
	return fp.gamma
}

func (r *ffwRun) bound(t int) float64 {
	return (&fwRun{fp: r.fp}).bound(t)
}

// output builds q_out/α from the selections by the output rule (as
// fwRun.combine does) and returns its calibrated model.
func (r *ffwRun) output() (*model.Model, error) {
	it := r.it
	w := fwOutputWeights(r.p, r.fp, len(r.sel))
	y := it.ans // scratch: the coefficient of each query in q_out/α
	fwCoefficients(y, w, r.sel, r.gam, r.init, r.m, r.fp.alpha)
	it.reset()
	for i, mg := range it.margs {
		d := it.setOf[i]
		if it.slot[d] < 0 {
			continue // never selected: y is 0 on its queries
		}
		for c := range mg.Cells {
			if v := y[mg.Offset+c]; v != 0 {
				it.add(d, c, v*mg.Weight)
			}
		}
	}
	it.sync()
	return it.take(), nil
}

// fwOutputWeights are the weights W_t of the iterates q_0..q_T in q_out
// (the output rule; the uniform rule draws U from the run's source).
func fwOutputWeights(p *Problem, fp *fwPlan, T int) []float64 {
	w := make([]float64, T+1)
	switch fp.output {
	case FWOutputAverage:
		for t := 1; t <= T; t++ {
			w[t] = 1 / float64(T)
		}
	case FWOutputUniform:
		w[int(p.Rand.Uint64N(uint64(T)))] = 1
	default:
		w[T] = 1
	}
	return w
}
