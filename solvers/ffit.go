package solvers

import (
	"context"
	"math"

	"github.com/dpsynth/synth/model"
)

// fmeas is one noisy marginal measurement for the factored fit: the table of
// an attribute set as fractions of n̂, and its loss weight 1/σ² (σ as a
// fraction of n̂).
type fmeas struct {
	set   []int
	y     []float64
	w     float64
	sigma float64 // counts
	// cw, when not nil, weights each cell's residual: the loss counts cell
	// i as w·cw[i] (0: not measured). MWEM on the factored model measures
	// single cells of a set; nil is weight 1 everywhere.
	cw []float64
	// gm, when not nil, makes the measurement one of groups of cells:
	// cell i belongs to group gm[i], and the loss is w·Σ_g (Σ_{i∈g} μ_i −
	// gy[g])² (y is then unused). gr is scratch for the groups' residuals.
	gm     []int32
	gy, gr []float64
	// cells, when not nil, marks a measurement made on grouping
	// variables (groupVars.measurement): each cell of its domain set
	// orig's table to its group, a cell of the grouping variables' table
	// on gset. The measurement is in one of two forms (setForm): on gset
	// (set = gset, y the groups' table, gm nil) or on orig (toDomain: set
	// = orig, gm = cells, gy the groups' table).
	orig, gset []int
	cells      []int32
}

// groupResiduals writes Σ_{i∈g} mu_i − gy[g] into m.gr.
func (m *fmeas) groupResiduals(mu []float64) []float64 {
	r := m.gr
	copy(r, m.gy)
	for i := range r {
		r[i] = -r[i]
	}
	for i, v := range mu {
		r[m.gm[i]] += v
	}
	return r
}

// maxCW is the largest per-cell weight of m (1 without per-cell weights).
func (m *fmeas) maxCW() float64 {
	if m.cw == nil {
		return 1
	}
	c := 0.0
	for _, v := range m.cw {
		c = max(c, v)
	}
	return c
}

// factoredFit is lsFit on a junction tree: it minimises
//
//	L(θ) = Σ_j w_j ‖μ_{S_j}(θ) − y_j‖²
//
// over log-linear models D(x) ∝ exp(Σ_j φ_j(x_{S_j})) by entropic mirror
// descent with Armijo backtracking, where μ_S is the model's marginal on S.
// The mirror-descent step on D with gradient Aᵀr moves each potential by its
// own residual: φ_j ← φ_j − s·2w_j(μ_j − y_j), so the iterates stay exactly
// log-linear over the measured sets and every answer comes from the tree.
// It is post-processing: the measurements are already private.
//
// The potentials φ_j are kept per measurement so that the model can be
// rebuilt on a new tree (a new measured set) and warm-started exactly.
type factoredFit struct {
	meas     []fmeas
	sets     [][]int     // the measured sets, meas[j].set
	phi      [][]float64 // per measurement
	grad     [][]float64
	mu, mu2  [][]float64 // marginals of cur and of the trial
	tree     *model.Tree
	cur, try *model.Model
	settings *model.Settings
	step     float64
	loss     float64
	iters    int
	evals    int

	// sure, when set, chooses the stopping step by Stein's unbiased risk
	// estimate, as lsFit's sureState does on the explicit model.
	sure *fsure
	// oneWay, when set, is where the fit started (startOneWay); SURE's
	// shadow starts there from its own measurements.
	oneWay *oneWayStart
	// linkSets and linkTheta are potentials every model of the fit holds
	// and no step moves: the grouping variables' ties to their
	// attributes (groupVars).
	linkSets  [][]int
	linkTheta [][]float64
}

// fsure is SURE for the factored fit: a shadow fit on measurements
// perturbed by δσ·b (b a fixed Gaussian probe) takes the main fit's steps;
//
//	SURE(t) = L(t) − M + 2·Σ b (μ' − μ)/(δσ)
//
// estimates the fitted answers' weighted squared error against the true
// answers from the noisy measurements alone (post-processing), its
// divergence term read with the running maximum (pathDF). The fit keeps
// the potentials of the step with the smallest SURE.
type fsure struct {
	shadow   *factoredFit
	b        [][]float64
	delta    float64
	m        int
	best     float64
	bestIt   int
	bestPhi  [][]float64
	it       int
	patience int
	df       pathDF
	history  []float64
}

// useSURE starts SURE stopping from the current state (call it right after
// add, before run).
func (f *factoredFit) useSURE(norm func() float64, delta float64, patience int) {
	su := &fsure{delta: delta, patience: patience, best: math.Inf(1)}
	sh := newFactoredFit(f.settings)
	sh.linkSets, sh.linkTheta = f.linkSets, f.linkTheta
	var ms []fmeas
	for _, m := range f.meas {
		sig := 1 / math.Sqrt(m.w)
		b := make([]float64, len(m.y))
		y := make([]float64, len(m.y))
		for i := range y {
			b[i] = norm()
			y[i] = m.y[i] + delta*sig*b[i]
		}
		su.b = append(su.b, b)
		su.m += len(y)
		ms = append(ms, fmeas{set: m.set, y: y, w: m.w, sigma: m.sigma})
		su.bestPhi = append(su.bestPhi, make([]float64, len(m.y)))
	}
	sh.add(f.tree, ms...)
	if f.oneWay != nil {
		// The shadow's start from its own perturbed measurements, so
		// that the divergence SURE estimates includes the start's.
		sh.startOneWay(f.oneWay)
	} else {
		for j := range f.phi {
			copy(sh.phi[j], f.phi[j])
		}
		sh.cur.CopyFrom(f.cur)
		sh.cur.Calibrate()
		sh.loss = sh.evaluate(sh.cur, sh.mu)
	}
	su.shadow = sh
	f.sure = su
	su.record(f)
}

// stepShadow advances the shadow by the main fit's accepted step size.
func (su *fsure) stepShadow(f *factoredFit, s float64) {
	sh := su.shadow
	sh.gradient()
	sh.try.CopyThetasFrom(sh.cur)
	sh.try.AddThetas(sh.sets, -s, sh.grad)
	sh.movePotentials(s)
	sh.try.Calibrate()
	sh.loss = sh.evaluate(sh.try, sh.mu)
	sh.cur, sh.try = sh.try, sh.cur
	su.it++
	su.record(f)
}

func (su *fsure) record(f *factoredFit) {
	div := 0.0
	for j, m := range f.meas {
		sig := 1 / math.Sqrt(m.w)
		b, a, a2 := su.b[j], f.mu[j], su.shadow.mu[j]
		for i := range b {
			div += b[i] * (a2[i] - a[i]) / (su.delta * sig)
		}
	}
	v := f.loss - float64(su.m) + 2*su.df.add(div)
	su.history = append(su.history, v)
	if v < su.best {
		su.best, su.bestIt = v, su.it
		for j := range f.phi {
			copy(su.bestPhi[j], f.phi[j])
		}
	}
}

// restoreBest rebuilds the current model from the best step's potentials.
func (f *factoredFit) restoreBest() {
	su := f.sure
	if su == nil {
		return
	}
	su.shadow.close()
	for j := range f.phi {
		copy(f.phi[j], su.bestPhi[j])
	}
	f.rebuild()
}

// startOneWay starts the fit at the product of the one-way tables its
// measurements imply (oneWayStart.potentials), in place of the potentials
// it has: call it right after the first add, before useSURE and run.
// Post-processing.
func (f *factoredFit) startOneWay(o *oneWayStart) {
	f.oneWay = o
	for _, p := range f.phi {
		clear(p)
	}
	o.potentials(f.meas, f.phi)
	f.rebuild()
}

// rebuild makes the current model anew from the potentials.
func (f *factoredFit) rebuild() {
	f.cur.Close()
	f.cur = model.New(f.tree, f.settings)
	f.addLinks()
	f.cur.AddThetas(f.sets, 1, f.phi)
	f.cur.Calibrate()
	f.loss = f.evaluate(f.cur, f.mu)
}

// addLinks adds the links' potentials to the current model.
func (f *factoredFit) addLinks() {
	if len(f.linkSets) > 0 {
		f.cur.AddThetas(f.linkSets, 1, f.linkTheta)
	}
}

func newFactoredFit(s *model.Settings) *factoredFit { return &factoredFit{settings: s} }

// close releases the models' workers.
func (f *factoredFit) close() {
	if f.sure != nil && f.sure.shadow != nil {
		f.sure.shadow.close()
	}
	if f.cur != nil {
		f.cur.Close()
		f.try.Close()
		f.cur, f.try = nil, nil
	}
}

// add appends measurements and rebuilds the model on the tree of every
// measured set, warm-started from the current potentials (new ones start at
// 0). The tree must have been checked against the size cap by the caller.
func (f *factoredFit) add(t *model.Tree, ms ...fmeas) {
	for _, m := range ms {
		f.meas = append(f.meas, m)
		f.sets = append(f.sets, m.set)
		f.phi = append(f.phi, make([]float64, len(m.y)))
		f.grad = append(f.grad, make([]float64, len(m.y)))
		f.mu = append(f.mu, make([]float64, len(m.y)))
		f.mu2 = append(f.mu2, make([]float64, len(m.y)))
	}
	if f.tree != t {
		f.close()
		f.tree = t
		f.cur, f.try = model.New(t, f.settings), model.New(t, f.settings)
		f.addLinks()
		f.cur.AddThetas(f.sets, 1, f.phi)
	}
	// In the ℓ1 geometry a safe first step is the inverse of twice the
	// largest curvature, bounded by 2·Σ_j w_j over every measured cell.
	// Each fit on new measurements starts from it: at the minimum of the
	// last fit the line search accepts ever smaller steps (the loss changes
	// only by rounding), and a step carried from there froze the next fit
	// (the rounds then annealed on a model that had not moved).
	sw := 0.0
	for _, m := range f.meas {
		if m.cw == nil {
			sw += m.w
		} else {
			sw += m.w * m.maxCW()
		}
	}
	f.step = 1 / (2 * sw)
	f.cur.Calibrate()
	f.loss = f.evaluate(f.cur, f.mu)
}

// evaluate writes the model's marginals on the measured sets into mu (one
// Marginals call, the sets split over the model's workers) and returns the
// loss.
func (f *factoredFit) evaluate(m *model.Model, mu [][]float64) float64 {
	f.evals++
	if err := m.Marginals(f.sets, mu); err != nil {
		// Measured sets are inside a clique by construction.
		panic("solvers: factored fit: " + err.Error())
	}
	l := 0.0
	for j, ms := range f.meas {
		if ms.gm != nil {
			for _, r := range ms.groupResiduals(mu[j]) {
				l += ms.w * r * r
			}
			continue
		}
		if ms.cw != nil {
			for i, v := range mu[j] {
				r := v - ms.y[i]
				l += ms.w * ms.cw[i] * r * r
			}
			continue
		}
		for i, v := range mu[j] {
			r := v - ms.y[i]
			l += ms.w * r * r
		}
	}
	return l
}

// run takes up to iters accepted steps, stopping early when the loss's
// relative decrease over 10 steps falls below tol.
func (f *factoredFit) run(ctx context.Context, iters int, tol float64) error {
	var hist [10]float64
	for it := 0; it < iters; it++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !f.stepOnce() {
			break
		}
		f.iters++
		if f.sure != nil && f.sure.it-f.sure.bestIt > f.sure.patience {
			break
		}
		prev := hist[it%len(hist)]
		hist[it%len(hist)] = f.loss
		if it >= len(hist) && prev-f.loss <= tol*prev {
			break
		}
	}
	f.restoreBest()
	return nil
}

// stepOnce takes one accepted step (halving the step until Armijo's test
// passes, at most 60 times).
func (f *factoredFit) stepOnce() bool {
	f.gradient()
	for try := 0; try < 60; try++ {
		s := f.step
		f.try.CopyThetasFrom(f.cur)
		f.try.AddThetas(f.sets, -s, f.grad)
		f.try.Calibrate()
		nl := f.evaluate(f.try, f.mu2)
		dot := 0.0
		for j := range f.meas {
			g, a, b := f.grad[j], f.mu[j], f.mu2[j]
			for i := range g {
				dot += g[i] * (a[i] - b[i])
			}
		}
		if f.loss-nl >= 0.5*dot && !math.IsNaN(nl) {
			f.cur, f.try = f.try, f.cur
			f.mu, f.mu2 = f.mu2, f.mu
			f.loss = nl
			f.movePotentials(s)
			if f.sure != nil {
				f.sure.stepShadow(f, s)
			}
			f.step *= 1.25
			return true
		}
		f.step *= 0.5
	}
	return false
}

// gradient writes each measurement's gradient 2w_j(μ_j − y_j) (times the
// per-cell weights, if any) at the current iterate into grad.
func (f *factoredFit) gradient() {
	for j, m := range f.meas {
		g := f.grad[j]
		if m.gm != nil {
			r := m.groupResiduals(f.mu[j])
			for i := range g {
				g[i] = 2 * m.w * r[m.gm[i]]
			}
			continue
		}
		if m.cw != nil {
			for i, v := range f.mu[j] {
				g[i] = 2 * m.w * m.cw[i] * (v - m.y[i])
			}
			continue
		}
		for i, v := range f.mu[j] {
			g[i] = 2 * m.w * (v - m.y[i])
		}
	}
}

// movePotentials takes the step on the kept potentials: φ_j −= s·grad_j.
func (f *factoredFit) movePotentials(s float64) {
	for j, p := range f.phi {
		g := f.grad[j]
		for i := range p {
			p[i] -= s * g[i]
		}
	}
}
