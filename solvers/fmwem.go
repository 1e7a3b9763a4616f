package solvers

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/dpsynth/synth/model"
)

// Defaults of MWEM's fit on the factored model.
const (
	mwemFactoredSteps = 25   // mirror-descent steps per round
	mwemFactoredFinal = 10   // the last round's fit takes this many times more
	mwemFactoredTol   = 1e-7 // relative loss decrease over 10 steps that stops a fit
)

// solveFactored runs MWEM on the factored model: the same plan, charges,
// selections (over the queries whose set fits the model cap: fiterate.go,
// Privacy) and measurements as on the explicit model. The fit is the
// least-squares fit of every measurement so far, warm-started each round:
// at most FitSteps steps of entropic mirror descent where each measured
// cell's potential moves by its own residual (factoredFit with per-cell
// weights: a cell measured r times has the average of its measurements as
// target and weight r/σ²). It is post-processing of the measurements.
func (s *MWEM) solveFactored(ctx context.Context, p *Problem, run *mwemRun) (*Result, error) {
	w := newFWork(&p.Shape)
	settings := &model.Settings{}
	fit := newFactoredFit(settings)
	defer fit.close()
	t0, err := model.NewTree(w.sizes, nil)
	if err != nil {
		return nil, err
	}
	fit.add(t0)
	st := &fmwemState{run: run, p: p, w: w, fit: fit, meas: make([]int, len(w.sets)), steps: s.FitSteps,
		score: make([]float64, p.Workload.M()), start: time.Now(),
		res: &Result{Plan: run.plan, Trace: make([]Step, 0, run.T)}}
	if st.steps == 0 {
		st.steps = mwemFactoredSteps
	}
	for d := range st.meas {
		st.meas[d] = -1
	}
	n := float64(p.N)
	for j, a := range p.Answers {
		_, _, wt := w.query(j)
		if wt == 0 {
			continue
		}
		if c := a * n / wt; math.Abs(c-math.Round(c)) > 1e-6*max(1, math.Round(c)) {
			return nil, fmt.Errorf("mwem: answer %d (%v) is not a count over n = %d", j, a, p.N)
		}
	}
	st.scale = 1
	if s.underNoise > 0 {
		st.scale = s.underNoise
	}
	for t := 1; t <= run.T; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := st.step(ctx, t); err != nil {
			return nil, err
		}
	}
	if err := fit.run(ctx, st.steps*mwemFactoredFinal, mwemFactoredTol); err != nil {
		return nil, err
	}
	if err := w.answer(fit.cur); err == nil && len(st.res.Trace) > 0 {
		st.res.Trace[len(st.res.Trace)-1].MaxError = st.maxErr()
	}
	res := st.res
	res.Model = fit.cur
	fit.cur = nil
	fit.try.Close()
	fit.try = nil
	res.Cliques = fit.tree.Cliques()
	res.Bounds = run.bounds(p.N)
	run.plan.Params["fit_steps"] = float64(fit.iters)
	run.plan.Params["model_bytes_final"] = float64(fit.tree.Bytes())
	return res, nil
}

// fmwemState is one MWEM run on the factored model.
type fmwemState struct {
	run   *mwemRun
	p     *Problem
	w     *fWork
	fit   *factoredFit
	meas  []int       // distinct set → its measurement in fit.meas, -1
	sums  [][]float64 // per measurement: Σ of the measured fractions per cell
	score []float64
	steps int
	scale float64 // ε0 multiplier (test hook)
	em    expSelect
	start time.Time
	res   *Result
}

// maxErr is the workload max error of the answers in w.ans (internal).
func (st *fmwemState) maxErr() float64 {
	e := 0.0
	for i, mg := range st.w.margs {
		if !st.w.avail[st.w.setOf[i]] {
			continue
		}
		for j := mg.Offset; j < mg.Offset+mg.Cells; j++ {
			e = max(e, math.Abs(st.p.Answers[j]-st.w.ans[j]))
		}
	}
	return e
}

func (st *fmwemState) choose(sc []float64) int {
	if st.p.noPrivacy {
		return argmax(sc)
	}
	return st.em.draw(st.p.Rand, sc, st.run.eps0*st.scale, st.run.sens)
}

// step runs round t (1-based).
func (st *fmwemState) step(ctx context.Context, t int) error {
	p, run, w, fit := st.p, st.run, st.w, st.fit
	if err := w.answer(fit.cur); err != nil {
		return err
	}
	worst := 0.0
	for i, mg := range w.margs {
		if !w.avail[w.setOf[i]] {
			continue
		}
		for j := mg.Offset; j < mg.Offset+mg.Cells; j++ {
			st.score[j] = math.Abs(p.Answers[j] - w.ans[j])
			worst = max(worst, st.score[j])
		}
	}
	if t > 1 && len(st.res.Trace) > 0 {
		st.res.Trace[len(st.res.Trace)-1].MaxError = worst
	}
	w.filter(fit.tree, fit.sets)
	j := w.pick(st.score, st.score, 1, st)
	if j < 0 {
		return w.errNoSelectable("mwem")
	}
	d, cell, wt := w.query(j)
	// Measure the count of query j.
	noisy := 0.0
	if wt != 0 {
		noisy = math.Round(p.Answers[j] * float64(p.N) / wt)
	}
	if !p.noPrivacy {
		if run.gauss != nil {
			noisy += float64(run.gauss.Sample(p.Rand))
		} else {
			noisy += float64(run.lap.Sample(p.Rand))
		}
	}
	// In the model's units (a marginal cell's probability): the count over
	// n, with noise σ/n.
	frac := noisy / float64(p.N)
	// The averaged measurement, clamped to a probability (post-processing).
	var target float64
	if k := st.meas[d]; k >= 0 {
		m := &fit.meas[k]
		st.sums[k][cell] += frac
		m.cw[cell]++
		target = min(max(st.sums[k][cell]/m.cw[cell], 0), 1)
		m.y[cell] = target
		fit.add(fit.tree) // the new loss and first step
	} else {
		set := w.sets[d]
		tree := fit.tree
		if tree.Covering(set) < 0 {
			var err error
			if tree, err = model.NewTree(w.sizes, append(fit.sets[:len(fit.sets):len(fit.sets)], set)); err != nil {
				return fmt.Errorf("solvers: internal error: mwem: no tree with %v: %w", set, err)
			}
		}
		cells := len(w.outs[d])
		sig := run.noiseCount / float64(p.N)
		ms := fmeas{set: set, y: make([]float64, cells), w: 1 / (sig * sig), sigma: run.noiseCount, cw: make([]float64, cells)}
		sum := make([]float64, cells)
		sum[cell], ms.cw[cell] = frac, 1
		target = min(max(frac, 0), 1)
		ms.y[cell] = target
		st.meas[d] = len(fit.meas)
		st.sums = append(st.sums, sum)
		w.noteTouched(set)
		fit.add(tree, ms)
	}
	before := math.Abs(target*wt - w.ans[j])
	if err := fit.run(ctx, st.steps, mwemFactoredTol); err != nil {
		return err
	}
	if len(st.res.Trace) < cap(st.res.Trace) {
		st.res.Trace = append(st.res.Trace, Step{Iter: t, Selected: j, MaxError: math.NaN(), Elapsed: time.Since(st.start)})
	}
	if p.Progress != nil {
		p.Progress(Progress{Iter: t, Total: run.T, Objective: before, Elapsed: time.Since(st.start)})
	}
	return nil
}
