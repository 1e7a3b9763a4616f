package solvers

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/privacy"
)

// The steps of the factored project solver's adaptive branch
// (solveFactored): the one-way measurements (measureOneWays), then rounds
// that score every candidate (rounds.score), select and measure a batch
// (rounds.selectBatch), re-fit (rounds.fitBatch) and anneal
// (rounds.afterFit).

// measureOneWays measures every one-way table, smooths it, estimates n
// from the noisy tables and fits the model on the tree of the one-way sets
// (fit). tabs are the candidates' true tables (plan.factored.cands); the
// one-way tables are taken from them where the workload holds the
// attribute. It returns n̂ and the measured sets (the one-way sets, in
// attribute order).
//
// Privacy: one discrete Gaussian per one-way table, σ = plan.groups[a].sigma,
// charged by the plan (one charge per table); the smoothing, n̂ and the fit
// are post-processing.
func (s *Project) measureOneWays(ctx context.Context, p *Problem, plan *Plan, fit *factoredFit, tabs [][]int64) (nHat float64, measured [][]int, err error) {
	fp := plan.factored
	dom := p.Workload.Domain()
	// One-way measurements.
	// The one-way tables: candidates' where the workload holds the
	// attribute, else asked for in one more batch.
	d := dom.Len()
	oneway := make([][]int64, d)
	for i, c := range fp.cands {
		if len(c) == 1 {
			oneway[c[0]] = tabs[i]
		}
	}
	var missing [][]int
	for a := range d {
		if oneway[a] == nil {
			missing = append(missing, []int{a})
		}
	}
	if len(missing) > 0 {
		more, err := p.Data.Marginals(ctx, missing)
		if err != nil {
			return 0, nil, err
		}
		for i, set := range missing {
			oneway[set[0]] = more[i]
		}
	}
	noisy := make([][]float64, d)
	for a, cnt := range oneway {
		noisy[a] = make([]float64, len(cnt))
		if err := noisyTable(p, cnt, plan.groups[a].sigma, noisy[a]); err != nil {
			return 0, nil, err
		}
		// Post-processing: the moving average SURE prefers over the ordered
		// codes (none on tables without smooth neighbourhoods).
		if h := smoothOneWay(noisy[a], dom.Attr(a), plan.groups[a].sigma); debugRound != nil && h > 0 {
			debugRound(fmt.Sprintf("one-way %d smoothed, half-width %d", a, h))
		}
	}
	nHat = s.nHat(p, noisy, plan.groups)
	ms := make([]fmeas, d)
	for a := range d {
		ms[a] = toMeas([]int{a}, noisy[a], plan.groups[a].sigma, nHat)
		measured = append(measured, []int{a})
	}
	tree, err := model.NewTree(dom.Sizes(), measured)
	if err != nil {
		return 0, nil, err
	}
	fit.add(tree, ms...)
	if err := fit.run(ctx, s.roundIters(), s.fitTol()); err != nil {
		return 0, nil, err
	}
	return nHat, measured, nil
}

// rounds is the state of the adaptive rounds: the budget (ρ, what is spent,
// the next σ and ε0), the candidates' scoring buffers, the measured sets and
// which candidates they cover, and the counts of rounds and fits.
type rounds struct {
	s     *Project
	fp    *factoredPlan
	sizes []int
	tabs  [][]int64 // the candidates' true tables
	nHat  float64

	rho, used float64 // the rounds' ρ, and what the selections and measurements spent of it
	sigma     float64 // the next measurement's σ (counts)
	annealed  int     // the annealing steps not undone (anneal)
	widened   int     // the widening steps (anneal)
	settled   float64 // the last batch's move on the settled fit (settle), which anneal reads
	batch     int     // selections per fit: fp.batch, raised by widening (anneal)
	eps       float64 // the next selection's ε0
	share     float64 // the selections' share of a round's ρ
	sens      float64 // ℓ2 sensitivity of one marginal table

	coarse    []coarsePair
	scoresAll []float64   // the candidates' scores, then the coarse pairs' (those computed on this model)
	upper     []float64   // bounds on scoresAll (bounds)
	l1ub      []float64   // bounds on the L1 distances of scoresAll on this model (bounds, evaluate, drifted)
	drift     model.Drift // how far the last fit moved the model
	before    []float64   // the model's beliefs before the last fit (fitBatch)
	evaluated []bool      // the candidate's score is computed on this model
	records   float64     // every table's total: the records counted
	outs      [][]float64 // evaluate's Marginals outputs (nil: not asked for)
	todo, sub []int       // evaluate's and choose's scratch
	lazy      privacy.LazySelection
	calls     int         // evaluate's calls
	carriedBy []float64   // per carry group: the cost of its passes run on this model (cleared by bounds)
	carryCall []int       // per carry group: the last call that ran its pass
	evalErr   error       // the first error of evaluate on this model
	tmp       []float64   // the selections' scratch
	bufs      [][]float64 // the model's marginal on each candidate
	active    [][]float64 // bufs of the candidates in the running, nil for the others
	team      *par.Team
	scan      *candScan
	trees     *treeSizes

	// covered: inside a set measured in full; coarseDone: inside a set
	// measured on groups.
	covered, coarseDone []bool
	measured            [][]int
	// gv holds the grouping variables of the measurements on groups
	// (groupVars); msets is each measured set on them (its own set for a
	// measurement of the full table); dtree is the junction tree of
	// measured on the domain's attributes, the released model's, which
	// the model cap bounds, and gtree the tree of msets and gv's links.
	// The fit runs on the one of fewer cells (fitTree).
	gv           *groupVars
	msets        [][]int
	dtree, gtree *model.Tree
	// qsets is each candidate's set the scores ask the model for: its
	// grouping variables' (scan.gq) while the fit is on the grouped tree
	// (scan.gform), else its own.
	qsets       [][]int
	gscratch    []float64
	treeScratch [][]int

	round, fits int

	// sampled scores on a sample of the model the candidates whose exact
	// marginals would cost more than the sample (fsampled.go; nil: never,
	// without randomness or past 16-bit codes).
	sampled *sampledScores
	ctx     context.Context
	rnd     *privacy.Rand
}

// newRounds sets up the rounds after the one-way fit: the budget split of
// the plan, the coarse pairs, the candidates' buffers and scan, their
// groups on the effective supports, and the candidates the one-way sets
// cover. tabs are the candidates' true tables, measured the sets measured
// so far. The caller closes r.team.
//
// Privacy: it reads the plan (public), the true tables only to hand them
// to the scan, and the model fitted to the noisy one-way tables
// (post-processing): nothing is released or charged here.
func (s *Project) newRounds(p *Problem, plan *Plan, fit *factoredFit, tabs [][]int64, nHat float64, measured [][]int) (*rounds, error) {
	fp := plan.factored
	sizes := p.Workload.Domain().Sizes()
	r := &rounds{s: s, fp: fp, sizes: sizes, tabs: tabs, nHat: nHat, measured: measured,
		gv: newGroupVars(sizes), msets: slices.Clone(measured), dtree: fit.tree, gtree: fit.tree}
	r.rho = fp.rhoLeft
	r.sigma = fp.sigmaR
	r.batch = fp.batch
	// The rounds' nominal split, as in the plan.
	perRound := (fp.rho0 + r.rho) / float64(fp.rounds)
	r.share = selectShare()
	r.eps = privacy.CalibrateExponential(r.share*perRound, 1)
	r.sens = math.Sqrt(fp.sens2)
	// The coarse pairs (middle regime) score after the candidates, in the
	// same slice, so that one draw covers both.
	shares, err := oneWayShares(fit.cur, sizes)
	if err != nil {
		return nil, err
	}
	ordered := valueOrder(p.Workload.Domain())
	if share := coarseShare(fp.rho0 + fp.rhoLeft); share > 0 {
		r.coarse = coarsePairs(sizes, fp.cands, coarseGroups(shares, share, ordered))
	}
	r.scoresAll = make([]float64, len(fp.cands)+len(r.coarse))
	r.upper = make([]float64, len(r.scoresAll))
	r.l1ub = make([]float64, len(r.scoresAll))
	for i := range r.l1ub {
		r.l1ub[i] = math.Inf(1)
	}
	r.evaluated = make([]bool, len(fp.cands))
	r.outs = make([][]float64, len(fp.cands))
	scores := r.scoresAll[:len(fp.cands)]
	r.tmp = make([]float64, 0, len(r.scoresAll))
	r.bufs = make([][]float64, len(fp.cands))
	r.active = make([][]float64, len(fp.cands))
	for i := range fp.cands {
		r.bufs[i] = make([]float64, len(tabs[i]))
	}
	r.team = par.NewTeam(0)
	r.scan = newCandScan(fp.cands, tabs, r.bufs, r.active, scores, fp.weights, nHat)
	r.trees = newTreeSizes(sizes, len(fp.cands))
	if kappa := supportSigmas(); kappa > 0 {
		support := oneWaySupports(shares, nHat, kappa, plan.groups)
		runs := supportRuns(shares, nHat, kappa, plan.groups, support, ordered)
		r.scan.groups = candidateGroups(sizes, fp.cands, support, runs)
		// Every grouped candidate's grouping variables are in the grouped
		// tree from the start, so that it can be scored on them
		// (setQueries).
		for i, sg := range r.scan.groups {
			for j, a := range fp.cands[i] {
				if sg != nil {
					r.gv.varOf(a, sg.digits[j], sg.radix[j])
				}
			}
		}
	}
	for _, v := range tabs[0] {
		r.records += float64(v)
	}
	// Candidates inside a set measured in full are left out (covered):
	// their tables are already measured, so their scores only restate the
	// noise, and the many such near-zero scores took the exponential
	// mechanism's draws from the useful ones (docs/BENCHMARKS.md). A coarse
	// pair inside a set measured on groups is left out too (coarseDone).
	r.covered = make([]bool, len(fp.cands))
	r.coarseDone = make([]bool, len(fp.cands))
	for _, set := range measured {
		r.markInside(r.covered, set)
	}
	r.gscratch = make([]float64, 0, 64)
	if p.Rand != nil {
		r.sampled = newSampledScores(sizes, len(fp.cands), nHat)
		r.scan.sampled = r.sampled
		r.rnd = p.Rand
	}
	return r, nil
}

// markInside marks in done the candidates inside set.
func (r *rounds) markInside(done []bool, set []int) {
	for i, c := range r.fp.cands {
		if !done[i] && len(c) <= len(set) && isSubset(c, set) {
			done[i] = true
		}
	}
}

// spend charges the next selection and its measurement against the
// rounds' ρ; the last one spends what is left, split as every round.
//
// Privacy: this is the rounds' accounting: every selection (exponential
// mechanism, ε0 = r.eps) and measurement (discrete Gaussian, σ = r.sigma)
// is paid for here, and the total never exceeds r.rho (the plan's one
// charge for the rounds); an overspend is an internal error.
func (r *rounds) spend() (last bool, err error) {
	cost := r.roundCost()
	if r.rho-r.used < 2*cost {
		left := r.rho - r.used
		r.sigma = privacy.CalibrateGaussian((1-r.share)*left, 1, r.sens)
		r.eps = privacy.CalibrateExponential(r.share*left, 1)
		cost = r.roundCost()
		last = true
	}
	if r.used+cost > r.rho {
		return false, fmt.Errorf("solvers: internal error: adaptive rounds would spend ρ %.6g of %.6g", r.used+cost, r.rho)
	}
	r.used += cost
	return last, nil
}

// score prepares the selections from the model fitted last: it charges the
// batch's first selection and measurement (spend) and bounds every
// candidate's score with that measurement's σ (bounds); the selections
// compute the scores they need (choose). It returns whether that selection
// is the last.
//
// Privacy: the bounds and the scores read the true tables; they are
// released only through the exponential mechanism of selectBatch, which
// spend charges.
func (r *rounds) score(ctx context.Context, fit *factoredFit) (last bool, err error) {
	// Every candidate is in the running but those the model cannot
	// marginalise (a public property of the tree); whether a candidate keeps the model
	// under the cap is tested only for the ones a selection reaches
	// (feasible, in selectBatch).
	for i := range r.active {
		r.active[i] = r.bufs[i]
	}
	r.ctx = ctx
	r.setQueries(fit.tree != r.dtree)
	for _, i := range fit.cur.Unanswerable(r.qsets) {
		r.active[i] = nil
	}
	if r.sampled != nil {
		r.sampled.reset(fit.cur, r.qsets)
	}
	r.evalErr = nil
	mass, err := modelMass(fit.cur, r.sizes)
	if err != nil {
		return false, err
	}
	// The batch's selections, one after the other from this model,
	// scored with the noise of the batch's first measurement.
	if last, err = r.spend(); err != nil {
		return false, err
	}
	r.scan.sigma = r.sigma
	r.bounds(mass)
	return last, ctx.Err()
}

// setQueries sets the candidates' sets the scores ask the model for: on
// the grouped tree (gform), a grouped candidate's grouping variables, else
// its own attributes.
func (r *rounds) setQueries(gform bool) {
	r.scan.gform = gform
	if gform && r.scan.gq == nil && r.scan.groups != nil {
		// The grouped candidates' scoring on their grouping variables
		// (groupedCand), made at the first fit on the grouped tree; a
		// coarse pair's base is left out, as its coarse pair's score
		// reads its full table.
		base := make([]bool, len(r.fp.cands))
		for _, k := range r.coarse {
			base[k.base] = true
		}
		r.scan.gq = groupedCands(r.gv, r.scan.groups, r.tabs, r.fp.cands, base)
	}
	if r.qsets == nil {
		r.qsets = make([][]int, len(r.fp.cands))
	}
	for i, c := range r.fp.cands {
		r.qsets[i] = c
		if gform && r.scan.gq != nil && r.scan.gq[i] != nil {
			r.qsets[i] = r.scan.gq[i].set
		}
	}
}

// bufOf returns the buffer of candidate i's marginal on this model: its
// groups' (candScan.onGroups) or its full table's.
func (r *rounds) bufOf(i int) []float64 {
	if r.scan.onGroups(i) {
		return r.scan.gq[i].buf
	}
	return r.bufs[i]
}

// selectBatch selects and measures the batch's candidates, one after the
// other from the scores of score, charging each after the first (spend),
// and records them as measured. final says whether score's charge was the
// last. It returns the batch, the tree of every measured set the next fit
// runs on (fitTree) and whether the batch ends the rounds.
//
// Privacy: each selection is an exponential mechanism (selectRound) and
// each measurement a discrete Gaussian (measureRound), at the σ and ε0
// that spend charged for them.
func (r *rounds) selectBatch(p *Problem, fit *factoredFit, final bool) (batch []selected, t *model.Tree, last bool, err error) {
	s, fp := r.s, r.fp
	for k := 0; ; k++ {
		if k > 0 {
			if final, err = r.spend(); err != nil {
				return nil, nil, false, err
			}
		}
		// Candidates whose model stays under the cap, which grows with
		// the budget spent (AIM's rule: early rounds keep the model
		// small).
		limit := float64(fp.cap) * (fp.rho0 + r.used) / (fp.rho0 + r.rho)
		feasible := func(i int) bool {
			if i >= len(fp.cands) {
				i = r.coarse[i-len(fp.cands)].base
			}
			c := fp.cands[i]
			if r.dtree.Covering(c) >= 0 {
				return true
			}
			var b uint64
			b, r.treeScratch = r.trees.bytesWith(i, c, r.measured, r.treeScratch)
			return float64(b) <= limit
		}
		choose := func(idx []int) int { return r.choose(p, fit.cur, idx, feasible) }
		sel, cp, err := s.selectRound(fp, selectArgs{active: r.active, covered: r.covered, coarseDone: r.coarseDone, coarse: r.coarse, choose: choose})
		if err == nil {
			err = r.evalErr
		}
		if err != nil {
			return nil, nil, false, err
		}
		c := fp.cands[sel]
		if r.onSample(sel) {
			// The model's exact marginal, for the annealing test.
			if err := fit.cur.Marginal(c, r.bufs[sel]); err != nil {
				return nil, nil, false, err
			}
		}
		m, err := s.measureRound(p, r.scan, r.gv, sel, cp, r.tabs[sel], r.sigma, r.nHat)
		if err != nil {
			return nil, nil, false, err
		}
		batch = append(batch, selected{index: sel, coarse: cp, meas: m, before: slices.Clone(r.bufOf(sel)), onGroups: r.scan.onGroups(sel), sigma: r.sigma, eps: r.eps})
		r.measured = append(r.measured, c)
		if cp != nil {
			r.markInside(r.coarseDone, c)
		} else {
			r.markInside(r.covered, c)
		}
		r.trees.note(c)
		if err := r.growTrees(c, m.set); err != nil {
			return nil, nil, false, err
		}
		if final || k == r.batch-1 {
			return batch, r.fitTree(), final, nil
		}
	}
}

// growTrees adds a measured set, c on the domain and mset on the grouping
// variables, to the trees: each is rebuilt when none of its cliques covers
// the new set (the domain's as the rounds always did, so that the released
// model's tree is theirs).
func (r *rounds) growTrees(c, mset []int) error {
	var err error
	if r.dtree.Covering(c) < 0 {
		if r.dtree, err = model.NewTree(r.sizes, r.measured); err != nil {
			return fmt.Errorf("solvers: internal error: no tree for %v: %w", r.measured, err)
		}
	}
	r.msets = append(r.msets, mset)
	if !r.gv.grouped() {
		r.gtree = r.dtree
	} else if r.gtree.Covering(mset) < 0 {
		if r.gtree, err = model.NewTree(r.gv.sizes, append(slices.Clone(r.msets), r.gv.links...)); err != nil {
			return fmt.Errorf("solvers: internal error: no tree for %v: %w", r.msets, err)
		}
	}
	return nil
}

// fitTree returns the tree the next fit runs on: gtree when it has fewer
// cells than dtree, else dtree. Both trees depend only on the measured
// sets and the public groupings.
func (r *rounds) fitTree() *model.Tree {
	if r.gtree != r.dtree && r.gtree.TotalCells() < r.dtree.TotalCells() {
		return r.gtree
	}
	return r.dtree
}

// fitBatch adds the batch's measurements to the fit on tree t and re-fits,
// warm-started: roundIters steps, FitIters on the final round when set;
// before any other round's annealing test, it settles the batch's move
// (settle). Post-processing.
func (r *rounds) fitBatch(ctx context.Context, fit *factoredFit, t *model.Tree, batch []selected, final bool) error {
	s := r.s
	grouped := t != r.dtree
	if debugRound != nil {
		form := "domain's"
		if grouped {
			form = "grouped"
		}
		debugRound(fmt.Sprintf("fit %d on the %s tree: %.0f cells (grouped %.0f, domain %.0f)", r.fits, form, t.TotalCells(), r.gtree.TotalCells(), r.dtree.TotalCells()))
	}
	fit.setForm(grouped, r.gv)
	ms := make([]fmeas, len(batch))
	for k, b := range batch {
		ms[k] = b.meas
		if !grouped && b.meas.cells != nil {
			ms[k], _ = toDomain(b.meas, make([]float64, len(b.meas.y)))
		}
	}
	fit.add(t, ms...)
	iters := s.roundIters()
	if final && s.FitIters > 0 {
		iters = s.FitIters
	}
	// The model on the new tree before the fit is the one the batch was
	// selected from (the new measurements' potentials are 0).
	r.before = fit.cur.BeliefsTo(r.before[:0])
	if err := fit.run(ctx, iters, s.fitTol()); err != nil {
		return err
	}
	if !final {
		if err := r.settle(ctx, fit, batch); err != nil {
			return err
		}
	}
	r.drifted(fit.cur)
	return nil
}

// afterFit records the batch after its fit: a trace step (and a debugRound
// line) per selection, the progress callback, and the annealing test on how
// far the batch moved the model, read on the settled fit (settle, anneal).
// Post-processing.
func (r *rounds) afterFit(p *Problem, res *Result, fit *factoredFit, batch []selected, final bool, start time.Time) error {
	// Annealing: the batch's measurements barely moved the model (in
	// all, against their noise); spend more per round.
	allow, allowUp := 0.0, 0.0
	for _, b := range batch {
		mv, al, up, err := b.moved(fit.cur, r.fp.cands[b.index], r.nHat)
		if err != nil {
			return err
		}
		allow, allowUp = allow+al, allowUp+up
		res.Trace = append(res.Trace, Step{Iter: r.round, Selected: b.index, Objective: fit.loss, MaxError: math.NaN(), Elapsed: time.Since(start)})
		if debugRound != nil {
			kind, cells := "table", len(b.meas.y)
			if b.meas.cells != nil {
				kind, cells = fmt.Sprintf("on the supports, %d groups", len(b.meas.y)), len(b.meas.cells)
				if b.coarse != nil {
					kind = fmt.Sprintf("coarse, %d groups", len(b.meas.y))
				}
			}
			debugRound(fmt.Sprintf("round %d set %v (%s) cells %d sigma %.1f eps %.4g moved %.0f allow %.0f used %.3g/%.3g", r.round, r.fp.cands[b.index], kind, cells, b.sigma, b.eps, mv, al, r.used, r.rho))
		}
		r.round++
	}
	if p.Progress != nil {
		// The budget spent is the true measure of progress (annealing
		// makes the number of rounds unknown in advance).
		total := r.round
		if !final {
			total = max(r.round+1, int(math.Ceil(float64(r.round)*r.rho/r.used)))
		}
		p.Progress(Progress{Iter: r.round, Total: total, Objective: fit.loss, Elapsed: time.Since(start)})
	}
	r.anneal(r.settled, allow, allowUp, final)
	return nil
}

// anneal halves σ and doubles ε0 for the next rounds when the batch moved
// the model by at most its noise allowance (times annealFactor), the move
// read on a settled fit (settle): its measurements barely changed the
// model, so the rounds spend more each.
//
// It undoes one such step (σ × 2, ε0 / 2) when the batch moved the model
// by more than allowUp, its allowance at the σ before that step: the test
// that annealed would not have annealed on this batch, so the model is
// still off by more than the noise the rounds had, and the costlier rounds
// would spend what is left on a few tables. A single large table's
// move within its allowance (a test of little power: its allowance holds
// most of the move) would otherwise end the rounds early (wide16-3way at
// ε = 0.5 ended 7 runs of 16 with a max error of 0.03 against 0.004;
// docs/BENCHMARKS.md).
//
// With no step to undo, it widens σ by √2 (ε0 / √2) when the rounds have
// more tables to measure than their budget affords (widens): the rounds
// left double, each at half the cost.
//
// Never after the final round. The next spend charges the new σ and ε0.
// It reads only the noisy measurements' effect on the model and public
// quantities: post-processing.
func (r *rounds) anneal(moved, allow, allowUp float64, final bool) {
	switch {
	case final:
	case moved <= annealFactor()*allow:
		r.sigma /= 2
		r.eps *= 2
		r.annealed++
	case r.annealed > 0 && moved > allowUp:
		r.sigma *= 2
		r.eps /= 2
		r.annealed--
	case r.annealed == 0 && r.widens(moved, allow):
		r.sigma *= math.Sqrt2
		r.eps /= math.Sqrt2
		r.widened++
		// The fits left stay as many as before: batchSize of the
		// count the rounds now expect.
		r.batch = max(r.batch, batchSize(r.round+int(math.Ceil(r.roundsLeft()))))
	}
}

// widens reports whether the rounds should widen σ after a batch that
// moved the model by moved counts against its noise allowance allow: when
// both
//   - moved > widenMoves·allow: the batch's tables are off by more than
//     (2√2 − 1) allowances beyond their noise (a fit that follows a
//     measurement moves a table by at most its error plus its noise); and
//   - the rounds run are at least widenRun times the rounds left at the
//     current σ and ε0 (roundsLeft).
//
// The rounds left, K, measure K tables at σ, each left with about its
// allowance A of error; at √2σ they measure 2K, each left with √2·A, for
// the same ρ. The wider rounds win when the tables K+1..2K are off, on
// average, by more than (2√2 − 1)·A: if the next tables are off as the
// batch's, its move above 2√2·A says so. The run so far says how many
// tables are off: the rounds found k of them, one after the other, and
// with nothing else known the median guess of the total is twice what was
// seen (k more to come); the wider rounds need 2K of them, so k ≥ 2K.
// Each widening doubles K, so it needs a third more rounds run before the
// next, and it stops where the moves fall within 2√2 allowances at the
// wider σ: the count follows the number of tables the model gets wrong,
// where a fixed count either runs out with strongly dependent sets never
// measured (wide32-2way at ε = 0.5: max error 3.5× AIM's) or spends its
// budget on tables within the noise (titanic at every ε). On the suite
// (docs/BENCHMARKS.md "The rounds' count from the moves") 2 and 4
// allowances, and 1 and 3 times the rounds left, give the same picture.
//
// It reads only the moves of noisy measurements and the budget:
// post-processing.
func (r *rounds) widens(moved, allow float64) bool {
	w, k := widenTest()
	return moved > w*allow && float64(r.round) >= k*r.roundsLeft()
}

// The widening test's constants (widens).
const (
	widenMoves = 2 * math.Sqrt2 // a batch's move, in allowances
	widenRun   = 2.0            // the rounds run, in rounds left
)

// widenTest returns the widening test's move (in allowances) and rounds run
// (in rounds left): widenMoves and widenRun (the evidence harness may set
// others).
func widenTest() (moves, run float64) {
	moves, run = widenMoves, widenRun
	if v := variant; v != nil {
		if v.widenMoves > 0 {
			moves = v.widenMoves
		}
		if v.widenRun > 0 {
			run = v.widenRun
		}
	}
	return moves, run
}

// roundCost is the ρ of one round at the current σ and ε0: its
// measurement (discrete Gaussian) and its selection (exponential
// mechanism).
func (r *rounds) roundCost() float64 {
	return privacy.GaussianCost(r.sens, r.sigma).Rho + privacy.ExponentialMechanismCost(r.eps).Rho
}

// roundsLeft is the number of rounds the budget left affords at the
// current σ and ε0 (fractional).
func (r *rounds) roundsLeft() float64 { return (r.rho - r.used) / r.roundCost() }
