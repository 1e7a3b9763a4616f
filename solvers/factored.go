package solvers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// ModelKind is the representation of the synthetic distribution D.
type ModelKind int

const (
	// Explicit: D is a dense vector over the whole universe.
	Explicit ModelKind = iota
	// Factored: D is a log-linear model on a junction tree over the
	// measured attribute sets (package model); its cost follows the
	// workload's structure, not the universe's size.
	Factored
)

// String returns "explicit" or "factored".
func (k ModelKind) String() string {
	if k == Factored {
		return "factored"
	}
	return "explicit"
}

// DefaultMaxModelBytes is the default cap on a factored model's memory
// (Shape.MaxModelBytes = 0). AIM caps its model at 80 MB. The rounds'
// models on the accuracy suite stay under 16 MiB (full ADULT's near
// 3 MiB), and on the width benchmark's 64- to 200-column tables 32 MiB gave
// lower max errors than 128 MiB in a half to a quarter of the time
// (docs/BENCHMARKS.md, "The model cap").
const DefaultMaxModelBytes = 32 << 20

// Data serves the private data to the measurement-based solvers as count
// tables of attribute sets: the one seam through which every source (files,
// pre-aggregated counts, SQL engines) reaches them. *universe.Counts
// implements it.
type Data interface {
	// Marginals returns the count table of each set (attribute positions,
	// increasing), in the set's mixed radix (last attribute fastest).
	Marginals(ctx context.Context, sets [][]int) ([][]int64, error)
}

var _ Data = (*universe.Counts)(nil)

// ErrModelTooLarge reports a factored model over its memory cap.
var ErrModelTooLarge = errors.New("the model exceeds its memory cap")

// factoredPlan is what the factored project solver will do.
type factoredPlan struct {
	adaptive bool
	// Adaptive: the candidate sets (the workload's downward closure), their
	// weights, the one-way σ (counts) and the rounds' total ρ.
	cands   [][]int
	weights []float64
	// scoreSens is the selection scores' sensitivity (public: the weights,
	// the relation and K).
	scoreSens float64
	sigmaR    float64 // the rounds' first σ (counts)
	rho0      float64 // the one-way tables' ρ
	rhoLeft   float64
	rounds    int
	batch     int     // selections per fit (batchSize)
	sens2     float64 // squared ℓ2 sensitivity of one marginal table
	cap       uint64
	// Non-adaptive: the measured groups (as for the explicit model).
	tree *model.Tree
	// selectSets: every group is measured, and the fit uses those that fit
	// the cap, chosen from the noisy tables.
	selectSets bool
}

func (sh *Shape) maxModelBytes() uint64 {
	if sh.MaxModelBytes > 0 {
		return sh.MaxModelBytes
	}
	return DefaultMaxModelBytes
}

// planFactored plans the project solver on the factored model. When every
// set the tuned rule measures fits one junction tree under the cap, it
// measures them all at once (the same charges as on the explicit model).
// Otherwise it runs select–measure–fit rounds in the spirit of AIM
// (McKenna, Mullins, Sheldon and Miklau 2022): the one-way marginals first,
// then rounds that each select a candidate set by the exponential mechanism
// (score: weighted L1 error of the current model minus the expected noise),
// measure it with the discrete Gaussian and re-fit, warm-started, with budget
// annealing and widening (rounds.anneal). The rounds' total is charged up
// front as one charge, so the ledger holds the whole plan before any record
// is read.
//
// Privacy: the plan reads the budget, the workload, the domain, the
// neighbouring relation and the cap, and n only where it is public
// (replace-one; smallData): public inputs only.
func (s *Project) planFactored(sh *Shape, plan *Plan, rho float64) error {
	w := sh.Workload
	dom := w.Domain()
	for _, fam := range w.Families() {
		if fam.Kind != query.Marginals {
			return fmt.Errorf("project on the factored model: workload family %s is not a marginal family; ranges, prefixes and predicates need --model explicit: %w", fam.Description, ErrUnsupported)
		}
	}
	top := 0
	for _, m := range w.Marginals() {
		top = max(top, len(m.Attrs))
	}
	if top == 0 {
		return fmt.Errorf("solvers: project: the workload has no queries")
	}
	// The evidence harness's overrides (none: the rules below).
	var ex experiment
	if variant != nil {
		ex = *variant
	}
	capB := sh.maxModelBytes()
	if ex.capBytes > 0 {
		capB = ex.capBytes
	}
	fp := &factoredPlan{sens2: marginalSens2(sh), cap: capB}
	plan.factored = fp
	plan.Params["max_model_bytes"] = float64(capB)
	if s.Setting == Tuned && !ex.adaptive && s.planMeasured(sh, plan, ex, top, rho) {
		return nil
	}
	// Adaptive rounds.
	fp.adaptive = true
	fp.rounds = s.Rounds
	if fp.rounds <= 0 && ex.perAttr > 0 {
		fp.rounds = ex.perAttr * dom.Len()
	}
	if fp.rounds <= 0 {
		fp.rounds = tunedRounds(dom.Len(), rho)
	}
	fp.candidates(sh, top)
	// Every workload set is a candidate, and the workload is marginals only
	// (refused above otherwise): the solve reads every workload table.
	plan.ReadsWorkloadTables = true
	plan.Params["score_sensitivity"] = fp.scoreSens
	if err := s.planOneWays(w, plan, rho); err != nil {
		return err
	}
	cells := 0.0
	for _, c := range fp.cands {
		cells += float64(cellsOf(dom, c))
	}
	plan.Params["candidate_cells"] = cells
	plan.Params["score_sample_bytes"] = float64(sampledBytes(dom.Sizes(), fp.cap))
	plan.Params["rounds_nominal"] = float64(fp.rounds)
	fp.batch = batchSize(fp.rounds)
	plan.Params["batch"] = float64(fp.batch)
	plan.Params["candidates"] = float64(len(fp.cands))
	return nil
}

// planMeasured plans the factored model's non-adaptive paths and reports
// whether one applies: every set of the tuned rule (C_{R−1} ∪ C_R) measured
// when they fit one junction tree under the cap, or, on small data
// (smallData; the evidence harness's pairs mode), every set of the order
// below the workload's measured and the fit on those that fit the cap,
// chosen from the noisy tables (post-processing).
func (s *Project) planMeasured(sh *Shape, plan *Plan, ex experiment, top int, rho float64) bool {
	w, fp := sh.Workload, plan.factored
	orders := s.Orders
	if orders == nil {
		orders = []int{max(top-1, 1), top}
		if top == 1 {
			orders = []int{1}
		}
	}
	var sets [][]int
	for _, r := range orders {
		sets = append(sets, downwardClosure(w, r)...)
	}
	t, err := model.NewTree(w.Domain().Sizes(), sets)
	if err == nil && t.Bytes() <= fp.cap {
		fp.tree = t
		s.measureAll(plan, w, sets, fp.sens2, rho)
		plan.Params["model_bytes"] = float64(t.Bytes())
		return true
	}
	if ex.pairsMode || s.smallData(sh, top, rho) {
		s.measureAll(plan, w, downwardClosure(w, max(top-1, 1)), fp.sens2, rho)
		fp.selectSets = true
		// The chosen sets' model stays small: the fit's cost follows it,
		// and on small data the largest cliques add noise, not signal.
		fp.cap = min(fp.cap, selectCap)
		return true
	}
	return false
}

// candidates sets the adaptive rounds' candidate sets (every r-subset of a
// workload marginal, r = 1 … top), their weights and the selection score's
// sensitivity.
//
// A candidate's weight is Σ over the workload's marginals m of w_m·|c ∩ m|
// (AIM's), summed per attribute: Σ_{a ∈ c} Σ_{m ∋ a} w_m, in time linear in
// the candidates and the marginals rather than their product. Its score is
// its weight times the L1 distance of its table (over any fixed subset of
// cells) from the model's: a record leaving one cell and entering another
// moves that distance by at most 2, a unit of up to K records added or
// removed by at most K.
func (fp *factoredPlan) candidates(sh *Shape, top int) {
	w := sh.Workload
	for r := 1; r <= top; r++ {
		fp.cands = append(fp.cands, downwardClosure(w, r)...)
	}
	perAttr := make([]float64, w.Domain().Len())
	for _, m := range w.Marginals() {
		for _, a := range m.Attrs {
			perAttr[a] += m.Weight
		}
	}
	for _, c := range fp.cands {
		wt := 0.0
		for _, a := range c {
			wt += perAttr[a]
		}
		fp.weights = append(fp.weights, wt)
		fp.scoreSens = max(fp.scoreSens, wt)
	}
	if sh.Neighbours == ReplaceOne {
		fp.scoreSens *= 2
	} else {
		fp.scoreSens *= float64(sh.Unit())
	}
}

// planOneWays splits ρ between the one-way tables and the rounds and writes
// the plan's charges: one per one-way table (each states its σ), then the
// rounds' total. Each round's selection gets selectShare of ρ/rounds (0.15)
// and its measurement the rest, at σ_R. The one-way tables together cost
// what d rounds' measurements would (times oneWayScale), split so that
// σ_a ∝ cells_a^(−p) (p = oneWayPower): an attribute's table adds about
// √(2/π)·σ_a·cells_a to the L1 error of every marginal holding it, so the
// larger tables get the smaller noise.
func (s *Project) planOneWays(w *query.Workload, plan *Plan, rho float64) error {
	fp, dom := plan.factored, w.Domain()
	d := dom.Len()
	perRound := rho / float64(fp.rounds)
	fp.sigmaR = privacy.CalibrateGaussian((1-selectShare())*perRound, 1, math.Sqrt(fp.sens2))
	sig := make([]float64, d)
	target := float64(d) * privacy.GaussianCost(math.Sqrt(fp.sens2), fp.sigmaR).Rho
	target *= oneWayScale(rho)
	inv2 := 0.0
	for a := range d {
		sig[a] = math.Pow(float64(dom.Sizes()[a]), -oneWayPower())
		inv2 += 1 / (sig[a] * sig[a])
	}
	scale := math.Sqrt(fp.sens2*inv2/(2*target)) * (1 + 1e-9) // Σ_a sens2/(2σ_a²) = target
	rho0 := 0.0
	var oneway []group
	for a := range d {
		g := group{attrs: []int{a}, sens2: fp.sens2, sigma: sig[a] * scale}
		oneway = append(oneway, g)
		rho0 += privacy.GaussianCost(math.Sqrt(g.sens2), g.sigma).Rho
	}
	if rho0 >= rho {
		return fmt.Errorf("project on the factored model: the one-way marginals alone need ρ = %.4g of %.4g", rho0, rho)
	}
	fp.rho0 = rho0
	fp.rhoLeft = (rho - rho0) * (1 - 1e-9)
	plan.groups = oneway
	plan.Charges = nil
	for _, g := range oneway {
		plan.Charges = append(plan.Charges, privacy.Charge{
			Label: fmt.Sprintf("%s: discrete Gaussian on %s (ℓ2 sensitivity %.4g counts, σ = %.4g counts)", s.Name(), g.label(w), math.Sqrt(g.sens2), g.sigma),
			Cost:  privacy.ZCDPCost(privacy.GaussianCost(math.Sqrt(g.sens2), g.sigma).Rho),
		})
	}
	coarseNote := ""
	if coarseShare(rho) > 0 {
		coarseNote = " and coarse variants of the pairs with a large attribute"
	}
	plan.Charges = append(plan.Charges, privacy.Charge{
		Label: fmt.Sprintf("%s: adaptive rounds on the factored model (each: exponential-mechanism selection among %d candidate sets%s, then a discrete Gaussian measurement of the selected marginal; σ annealed or widened by the fits' moves; total at most this ρ)", s.Name(), len(fp.cands), coarseNote),
		Cost:  privacy.ZCDPCost(fp.rhoLeft),
	})
	return nil
}

// The tuned rules' budget regimes: 4 nominal rounds per attribute from
// fourRoundsRho; from midRho below it, the middle regime (midBudget).
const (
	midRho        = 1e-3 // ε ≈ 0.3 at δ = 10^-9
	fourRoundsRho = 5e-3 // ε ≈ 0.65 at δ = 10^-9
)

// tunedRounds is the nominal number of rounds of the tuned setting, rising
// with the budget: 2 per attribute when ρ < 10^-3 (ε below about 0.3 at
// δ = 10^-9), 3 in the middle regime (midBudget), 4 from ρ = 5·10^-3 (ε
// above about 0.65). AIM uses 16 per attribute; under replace-one
// neighbours every round costs twice AIM's for the same noise, and fewer,
// less noisy rounds were better on full ADULT (all 3-way marginals, ε
// 0.1–1, seeds 1–2). On the accuracy suite's six protocols with rounds
// (docs/BENCHMARKS.md "Three rounds per attribute in the middle regime"),
// 3 in the middle regime cut max error at ε = 0.5 by 12% on geometric mean
// over 9 seeds (titanic 0.81×, wide32-2way 0.78×) for 1% of L1, while 3 at
// ε = 0.1 or at ε = 1 lost; on nine tables the choice never saw (the
// rounds forced, ε 0.25 and 0.5) it cut max error by 13%. It sets the
// rounds' first σ: annealing halves it where the model already fits, and
// widening (rounds.widens) raises it where the moves say more tables are
// off than the count affords. It reads only public quantities.
func tunedRounds(d int, rho float64) int {
	switch {
	case rho >= fourRoundsRho:
		return 4 * d
	case midBudget(rho):
		return 3 * d
	}
	return 2 * d
}

// maxFits bounds the model fits of the adaptive rounds: past maxFits
// nominal rounds, the selections come in batches (batchSize).
const maxFits = 64

// batchSize is the number of selections between two fits of the model:
// ⌈rounds/maxFits⌉, 1 up to 64 nominal rounds (16 attributes at 4 rounds
// each, full ADULT's 56 included). Every round's marginals of every
// candidate and its fit cost time that grows with the model, while the
// number of candidates grows with the square or cube of the width: a
// 200-column table's 800 nominal rounds would compute 19,900 pair
// marginals 800 times. In a batch the selections are made one after the
// other from the same model (each without the sets already chosen and
// those they cover), measured, and fitted once; each selection is still
// one exponential mechanism and one Gaussian measurement, charged as a
// round. On wide tables a batch's selections mostly fall in distant parts
// of the model, where a fit in between would not have changed the scores
// much (docs/BENCHMARKS.md "Wide tables"). It reads only public quantities.
func batchSize(rounds int) int { return max(1, (rounds+maxFits-1)/maxFits) }

// annealFactor scales the annealing test's noise allowance: 1 (the
// evidence harness may set another).
func annealFactor() float64 {
	if v := variant; v != nil && v.anneal > 0 {
		return v.anneal
	}
	return 1
}

// supportSigmas is κ of the effective supports: an attribute's value is in
// its support when its fitted one-way count is at least κ times that
// one-way table's σ, and a candidate's score (its L1 error and the noise
// allowance), its measurement, its fit and the annealing test read its
// table grouped on the supports: each attribute's rare values merged into
// one (supportGroups). Large, sparse tables (capital-gain × income: 200
// cells, 23 values of capital-gain used, most of them rare) then compete on
// the groups that carry mass, and a table whose records lie mostly in rare
// values (titanic's ages and fares) still measures them. κ = 3 at every
// budget: where the one-way noise is large the supports shrink (capital-loss
// to one value at ε = 0.1) and a table's rare values become one group, which
// keeps their records. On the suite's four protocols with rounds, κ = 2
// and 4 gave max error 1.035 and 1.018 on geometric mean (L1 within 1%);
// on the fifteen factored protocols of both workloads, 1.034 and 1.002
// (docs/BENCHMARKS.md "The rounds' constants on the 2-way workload"); and
// the supports at ε = 0.1, once off there, cut ADULT's max error by a
// third (docs/BENCHMARKS.md). The fits' one-way start reads the same κ for
// the values it pools (unresolved). It reads only public quantities.
func supportSigmas() float64 {
	if v := variant; v != nil && v.supportK != 0 {
		return max(v.supportK, 0)
	}
	return 3
}

// oneWayPower is p in the one-way tables' noise split σ_a ∝ cells_a^(−p):
// 1/3, the split that minimises the one-way noise's L1 error summed over
// the tables, Σ_a √(2/π)·σ_a·cells_a, at a fixed total ρ = Σ_a Δ²/(2σ_a²)
// (the Lagrange condition cells_a ∝ σ_a^(−3)). On the accuracy suite's
// adaptive protocols (6 seeds) it gave 1.8% lower L1 than the 1/2 fitted on
// full ADULT alone and 2.4% lower max error (leaving out a point whose runs
// fail by luck either way), with ADULT's and titanic's max error 0.88–1.00×
// at every ε (docs/BENCHMARKS.md "The accuracy suite"). On the fifteen
// factored protocols of both workloads, the equal split (p = 0) and p = 1/6
// lost L1 (4.1%, 1.8%) for max error within 0.4% (docs/BENCHMARKS.md "The
// rounds' constants on the 2-way workload"). It reads only public quantities.
func oneWayPower() float64 {
	if v := variant; v != nil && v.oneAlloc != 0 {
		return max(v.oneAlloc, 0)
	}
	return 1.0 / 3
}

// aimSelectShare is AIM's share of a round's ρ on the selection; smallData's
// threshold was set with it.
const aimSelectShare = 0.1

// selectShare is the share of each round's ρ spent on the selection: 0.15
// at every budget, AIM's 0.1 × 1.5. A sharper selection picks the few
// tables whose large cells the model misses more often than the many
// near-zero scores: on full ADULT over 32 seeds at ε = 0.5 the max error
// fell 8% for 1% of L1; on the suite's four protocols with rounds, 0.1 at
// ε ≥ 0.3 raised max error 9% on geometric mean, and 0.15 at ε = 0.1 (AIM's
// 0.1 was the rule there before the supports were on at every budget)
// lowered it 7% over 6 seeds with L1 unchanged (docs/BENCHMARKS.md). It
// reads only public quantities.
func selectShare() float64 {
	if v := variant; v != nil && v.selShare > 0 {
		return v.selShare
	}
	return 0.15
}

// midBudget reports the middle regime of the tuned rules: 10^-3 ≤ ρ <
// 5·10^-3, ε from about 0.3 to 0.65 at δ = 10^-9 (3 nominal rounds per
// attribute, tunedRounds).
func midBudget(rho float64) bool { return rho >= midRho && rho < fourRoundsRho }

// oneWayScale scales the one-way tables' ρ (d rounds' measurements): 0.8 in
// the middle regime, where the rounds' measurements are worth more than the
// one-way tables' last fifth; 1 elsewhere (0.8 was worse at ε = 0.1 and 1;
// docs/BENCHMARKS.md). More one-way ρ (1.3, 1.8) bought 2% of L1 for 7–17%
// of max error on both workloads ("The rounds' constants on the 2-way
// workload"). It reads only public quantities.
func oneWayScale(rho float64) float64 {
	if v := variant; v != nil && v.oneScale > 0 {
		return v.oneScale
	}
	if midBudget(rho) {
		return 0.8
	}
	return 1
}

// coarseShare is the one-way share at or above which a large attribute's
// value keeps its own group in the coarse pair candidates (coarsePair):
// 0.02 in the middle regime, off elsewhere (at ε = 1 they grow the model
// and slow the release 3×; at ε = 0.1 they cost L1). It reads only public
// quantities.
func coarseShare(rho float64) float64 {
	if v := variant; v != nil && v.coarse != 0 {
		return max(v.coarse, 0)
	}
	if midBudget(rho) {
		return 0.02
	}
	return 0
}

// smoothWidth is the largest half-width of the one-way tables' smoothing.
func smoothWidth() int {
	if v := variant; v != nil && v.smoothMax != 0 {
		return max(v.smoothMax, 0)
	}
	return 4
}

// measureAll plans one discrete Gaussian measurement of every set, with
// equal shares of ρ (the sets' sensitivities are equal).
func (s *Project) measureAll(plan *Plan, w *query.Workload, sets [][]int, sens2, rho float64) {
	groups := make([]group, len(sets))
	share := make([]float64, len(sets))
	for i, set := range sets {
		groups[i] = group{attrs: set, sens2: sens2}
		share[i] = 1
	}
	plan.Charges = calibrate(groups, share, rho, w, s.Name())
	plan.groups = groups
	plan.Params["groups"] = float64(len(groups))
}

// noisyTable adds discrete Gaussian noise to a count table.
func noisyTable(p *Problem, cnt []int64, sigma float64, out []float64) error {
	dg, err := privacy.NewDiscreteGaussian(sigma)
	if err != nil {
		return err
	}
	for i, c := range cnt {
		if p.noPrivacy {
			out[i] = float64(c)
			continue
		}
		out[i] = float64(c + dg.Sample(p.Rand))
	}
	return nil
}

// solveFactored runs the plan on the factored model: the non-adaptive plan
// in one step (solveMeasured); the adaptive one as the one-way
// measurements (measureOneWays), then rounds of scoring, selecting and
// measuring a batch, fitting and annealing (rounds, fadaptive.go) until
// the rounds' ρ is spent.
func (s *Project) solveFactored(ctx context.Context, p *Problem, plan *Plan) (*Result, error) {
	fp := plan.factored
	if p.Data == nil {
		return nil, errors.New("solvers: project on the factored model: no data source")
	}
	start := time.Now()
	// Done lets an interrupt stop the candidates' marginals, which take
	// minutes on wide tables.
	settings := &model.Settings{Done: ctx.Done()}
	fit := newFactoredFit(settings)
	defer fit.close()
	res := &Result{Plan: plan}

	if !fp.adaptive {
		return s.solveMeasured(ctx, p, plan, fit, res, start)
	}

	// Adaptive. The true tables of every candidate, in one batch (a SQL
	// source answers them with one GROUPING SETS query).
	tabs, err := p.Data.Marginals(ctx, fp.cands)
	if err != nil {
		return nil, err
	}
	nHat, measured, err := s.measureOneWays(ctx, p, plan, fit, tabs)
	if err != nil {
		return nil, err
	}
	r, err := s.newRounds(p, plan, fit, tabs, nHat, measured)
	if err != nil {
		return nil, err
	}
	defer r.team.Close()
	for final := false; !final; r.fits++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if final, err = r.score(ctx, fit); err != nil {
			return nil, err
		}
		var batch []selected
		var t *model.Tree
		if batch, t, final, err = r.selectBatch(p, fit, final); err != nil {
			return nil, err
		}
		if err := r.fitBatch(ctx, fit, t, batch, final); err != nil {
			return nil, err
		}
		if err := r.afterFit(p, res, fit, batch, final, start); err != nil {
			return nil, err
		}
	}
	plan.Params["fits"] = float64(r.fits)
	plan.Params["rounds"] = float64(r.round)
	// How the moves set the rounds' σ (rounds.anneal): post-processing of
	// the noisy measurements, as the count of rounds is.
	plan.Params["annealing_steps"] = float64(r.annealed)
	plan.Params["widenings"] = float64(r.widened)
	plan.Params["batch_last"] = float64(r.batch)
	if debugMeasured != nil {
		debugMeasured(r.measured)
	}
	plan.Params["rho_rounds_spent"] = r.used
	if fit.tree != r.dtree {
		// The released model is on the domain's attributes.
		fit.setForm(false, r.gv)
		fit.add(r.dtree)
	}
	return s.factoredResult(p, plan, res, fit, nHat)
}

// solveMeasured runs the non-adaptive plan: one discrete Gaussian
// measurement of every planned group, n̂, and one fit on the plan's tree
// (or, with selectSets, on the sets chosen from the noisy tables), started
// at the product of the one-way tables the measurements imply and stopped
// by SURE in the tuned setting, as the explicit fit.
//
// Privacy: the measurements are the plan's charges (one per group); the
// choice of sets, n̂ and the fit are post-processing.
func (s *Project) solveMeasured(ctx context.Context, p *Problem, plan *Plan, fit *factoredFit, res *Result, start time.Time) (*Result, error) {
	fp := plan.factored
	dom := p.Workload.Domain()
	sets := make([][]int, len(plan.groups))
	for i, g := range plan.groups {
		sets[i] = g.attrs
	}
	tabs, err := p.Data.Marginals(ctx, sets)
	if err != nil {
		return nil, err
	}
	noisy := make([][]float64, len(sets))
	for i, g := range plan.groups {
		noisy[i] = make([]float64, len(tabs[i]))
		if err := noisyTable(p, tabs[i], g.sigma, noisy[i]); err != nil {
			return nil, err
		}
	}
	nHat := s.nHat(p, noisy, plan.groups)
	ms := make([]fmeas, len(sets))
	for i, g := range plan.groups {
		ms[i] = toMeas(g.attrs, noisy[i], g.sigma, nHat)
	}
	tree := fp.tree
	if fp.selectSets {
		if tree, ms, err = chooseMeasured(dom.Sizes(), ms, fp.cap); err != nil {
			return nil, err
		}
		plan.Params["sets_fitted"] = float64(len(ms))
	}
	fit.add(tree, ms...)
	if s.Setting == Tuned {
		// The explicit fit's start (oneWayStart): SURE's early stop
		// shrinks towards it.
		fit.startOneWay(newOneWayStart(dom, nil, nHat))
	}
	if s.Setting == Tuned && !s.Converge {
		fit.useSURE(p.Rand.NormFloat64, 0.01, 25)
	}
	if err := fit.run(ctx, s.fitIters(), s.fitTol()); err != nil {
		return nil, err
	}
	res.Trace = append(res.Trace, Step{Iter: fit.iters, Selected: -1, Objective: fit.loss, MaxError: math.NaN(), Elapsed: time.Since(start)})
	return s.factoredResult(p, plan, res, fit, nHat)
}

// Hooks of the evidence harness (factored_evidence_test.go, build tag
// evidence): a line per adaptive round, and the measured sets at the end.
// Nil in every other build.
var (
	debugRound    func(string)
	debugMeasured func([][]int)
)

// candScan scores the candidates of an adaptive round over a team, each
// candidate on one worker (so each result has the same bits as a serial
// loop's), a candidate's work weighted by its cells.
type candScan struct {
	cands   [][]int
	tabs    [][]int64
	bufs    [][]float64
	active  [][]float64 // bufs[i] for a candidate in the running, else nil
	scores  []float64
	l1      []float64 // each scored candidate's L1 distance
	weights []float64
	nHat    float64

	groups  []*supportGroups // per candidate, its grouping on the supports (nil: none)
	scratch [][]float64      // per worker, the grouped distances
	gq      []*groupedCand   // per candidate, its scoring on grouping variables (rounds.gq)
	gform   bool             // the model is on the grouped tree: gq's scores apply

	sigma float64 // set per round

	sampled *sampledScores // the candidates scored on a sample (nil: none)

	off []int // each candidate's start in the work

	sub, subOff []int // runSubset's candidates and their starts in its work
}

func newCandScan(cands [][]int, tabs [][]int64, bufs, active [][]float64, scores, weights []float64, nHat float64) *candScan {
	j := &candScan{cands: cands, tabs: tabs, bufs: bufs, active: active, scores: scores, l1: make([]float64, len(cands)), weights: weights, nHat: nHat, off: make([]int, len(cands)+1)}
	for i := range cands {
		j.off[i+1] = j.off[i] + len(tabs[i])
	}
	return j
}

func (j *candScan) run(team *par.Team) {
	j.growScratch(team)
	team.For(j.off[len(j.cands)], 1, j)
}

// growScratch gives every worker of team its scratch slot.
func (j *candScan) growScratch(team *par.Team) {
	for len(j.scratch) < team.Workers() {
		j.scratch = append(j.scratch, nil)
	}
}

func (j *candScan) Run(w, lo, hi int) {
	// The candidates whose work starts in [lo, hi).
	i, _ := slices.BinarySearch(j.off[:len(j.cands)], lo)
	for ; i < len(j.cands) && j.off[i] < hi; i++ {
		if j.active[i] != nil {
			j.scoreOne(w, i)
		}
	}
}

// scoreOne writes candidate i's score: its weight times the L1 distance
// between its table (its groups' sums when it is grouped on the supports)
// and n̂ times the model's marginal (bufs[i]), less the distance the
// measurement's noise alone would give, and the sample's when bufs[i] is
// from a sample of the model (fsampled.go). w is the worker's index, for
// its scratch.
func (j *candScan) scoreOne(w, i int) {
	l1, buf := 0.0, j.bufs[i]
	cells := float64(len(j.tabs[i]))
	g := j.groupsOf(i)
	if j.onGroups(i) {
		// The groups' table on the grouping variables.
		gc := j.gq[i]
		for k, t := range gc.tab {
			l1 += math.Abs(t - j.nHat*gc.buf[k])
		}
		cells = float64(len(gc.tab))
	} else if g != nil {
		l1, j.scratch[w] = g.l1(j.tabs[i], buf, j.nHat, j.scratch[w])
		cells = float64(g.n)
	} else {
		for k, v := range j.tabs[i] {
			l1 += math.Abs(float64(v) - j.nHat*buf[k])
		}
	}
	bias := math.Sqrt(2/math.Pi) * j.sigma * cells
	if j.sampled.onSample(i) {
		p := buf
		if g != nil {
			j.scratch[w] = g.sums(buf, j.scratch[w])
			p = j.scratch[w]
		}
		bias += sampledAllowance(p, j.nHat, j.sampled.rows)
	}
	j.l1[i] = l1
	j.scores[i] = j.weights[i] * (l1 - bias)
}

// onGroups reports whether candidate i is scored on its grouping
// variables on this model: the model is on the grouped tree (gform), the
// candidate has a groupedCand and is not scored on a sample of the model.
func (j *candScan) onGroups(i int) bool {
	return j.gform && j.gq != nil && j.gq[i] != nil && !j.sampled.onSample(i)
}

// groupsOf returns candidate i's grouping on the supports, nil when it has
// none (its table is scored and measured cell by cell).
func (j *candScan) groupsOf(i int) *supportGroups {
	if j.groups == nil {
		return nil
	}
	return j.groups[i]
}

// cellsOf returns the cells (or groups) that candidate i's score and
// measurement count.
func (j *candScan) cellsOf(i int) int {
	if g := j.groupsOf(i); g != nil {
		return g.n
	}
	return len(j.tabs[i])
}

// oneWayShares returns each attribute's one-way marginal in m (the model
// fitted to the noisy one-way tables), which the supports, their runs and
// the coarse groups read.
func oneWayShares(m *model.Model, sizes []int) ([][]float64, error) {
	shares := make([][]float64, len(sizes))
	for a, size := range sizes {
		shares[a] = make([]float64, size)
		if err := m.Marginal([]int{a}, shares[a]); err != nil {
			return nil, err
		}
	}
	return shares, nil
}

// oneWaySupports returns each attribute's effective support: the values
// whose one-way count (shares[a] of the model fitted to the noisy one-way
// tables, times nHat) is at least kappa times that one-way table's σ
// (groups[a].sigma), and always the most frequent value. Post-processing.
func oneWaySupports(shares [][]float64, nHat, kappa float64, groups []group) [][]bool {
	support := make([][]bool, len(shares))
	for a, mo := range shares {
		support[a] = make([]bool, len(mo))
		best := 0
		for v, p := range mo {
			support[a][v] = p*nHat >= kappa*groups[a].sigma
			if p > mo[best] {
				best = v
			}
		}
		support[a][best] = true
	}
	return support
}

// supportRuns returns, per attribute with ordered codes (ordered[a] > 0),
// its resolved runs of unsupported values (resolvedRuns): a run of m
// values whose total count (shares[a] times nHat) is at least κ·σ·√m, the
// noise of the run's total in its one-way table.
func supportRuns(shares [][]float64, nHat, kappa float64, groups []group, support [][]bool, ordered []int) [][]int {
	if ordered == nil {
		return nil
	}
	runs := make([][]int, len(shares))
	for a, mo := range shares {
		if ordered[a] == 0 {
			continue
		}
		sigma := groups[a].sigma
		runs[a] = resolvedRuns(mo, func(v int) bool { return !support[a][v] }, ordered[a], func(total float64, k int) bool {
			return total*nHat >= kappa*sigma*math.Sqrt(float64(k))
		})
	}
	return runs
}

// selectIndex runs the exponential mechanism over the candidates in idx
// (those still in the running: a public property of the model's size) and
// returns the chosen candidate.
// selectFeasible returns the index in idx that the exponential mechanism
// (ε0 = eps, sensitivity sens) selects from scores[idx] among the indices
// fits accepts, or -1 if it accepts none; fits is called only on the indices
// whose noisy scores beat the winner's (privacy.ExponentialMechanismWhere).
// fits must depend on public quantities only. Without privacy it returns
// the first best score that fits.
func selectFeasible(p *Problem, scores []float64, idx []int, tmp []float64, eps, sens float64, fits func(int) bool) int {
	tmp = tmp[:0]
	for _, i := range idx {
		tmp = append(tmp, scores[i])
	}
	ok := func(k int) bool { return fits(idx[k]) }
	if p.noPrivacy {
		order := make([]int, len(tmp))
		for k := range order {
			order[k] = k
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(tmp[b], tmp[a]) })
		for _, k := range order {
			if ok(k) {
				return idx[k]
			}
		}
		return -1
	}
	k := privacy.ExponentialMechanismWhere(p.Rand, tmp, eps, sens, ok, make([]float64, len(tmp)))
	if k < 0 {
		return -1
	}
	return idx[k]
}

func toMeas(set []int, noisy []float64, sigma, nHat float64) fmeas {
	y := make([]float64, len(noisy))
	for i, v := range noisy {
		y[i] = v / nHat
	}
	s := sigma / nHat
	return fmeas{set: set, y: y, w: 1 / (s * s), sigma: sigma}
}

// nHat is n under replace-one, else the estimate of n from the noisy
// tables' totals (estimateN); noisy[i] was measured by groups[i].
func (s *Project) nHat(p *Problem, noisy [][]float64, groups []group) float64 {
	if p.Neighbours != AddRemove {
		return float64(p.N)
	}
	sums, vars := make([]float64, len(noisy)), make([]float64, len(noisy))
	for i, t := range noisy {
		for _, v := range t {
			sums[i] += v
		}
		vars[i] = float64(len(t)) * groups[i].sigma * groups[i].sigma
	}
	return estimateN(sums, vars)
}

// groupsNSE is the standard error of n̂ estimated from the noisy totals of
// the marginal groups (estimateNSE), with any other unbiased estimates of
// n of the given variances (the staged plan's count): a table of c cells
// measured at σ has a total of variance c·σ². It reads the plan only.
func groupsNSE(dom *universe.Domain, groups []group, extra ...float64) float64 {
	vars := append([]float64(nil), extra...)
	for _, g := range groups {
		if g.attrs != nil {
			vars = append(vars, float64(cellsOf(dom, g.attrs))*g.sigma*g.sigma)
		}
	}
	return estimateNSE(vars)
}

// factoredResult finishes a factored solve.
func (s *Project) factoredResult(p *Problem, plan *Plan, res *Result, fit *factoredFit, nHat float64) (*Result, error) {
	plan.Params["fit_steps"] = float64(fit.iters)
	plan.Params["fit_evals"] = float64(fit.evals)
	plan.Params["fit_loss"] = fit.loss
	plan.Params["model_bytes"] = float64(fit.tree.Bytes())
	if p.Neighbours == AddRemove {
		recordNHat(plan, nHat)
	}
	res.Model = fit.cur
	fit.cur = nil // kept by the result
	fit.try.Close()
	fit.try = nil
	res.Cliques = fit.tree.Cliques()
	for _, m := range fit.meas {
		res.Bounds = append(res.Bounds, Bound{
			Scope: "marginal", Name: setLabel(p.Workload, m.set), Queries: len(m.y),
			Value: 1.959963984540054 * m.sigma / nHat, Confidence: 0.95,
			Method: fmt.Sprintf("noise of each measured count: discrete Gaussian, σ = %.3g (fraction of rows), two-sided 95%% per query; the released answers are fitted to these measurements, and the fit's bias is not covered", m.sigma/nHat),
		})
	}
	return res, nil
}

func setLabel(w *query.Workload, set []int) string {
	g := group{attrs: set}
	return g.label(w)
}

// selectCap caps the model of the sets chosen from a measured order.
const selectCap = 16 << 20

// smallData is the tuned rule's choice between the adaptive rounds and
// measuring every set of the order below the workload's (then fitting those
// that fit): the latter when n is public and one adaptive round's noise, as
// a fraction of n, would exceed 0.02 — a small table, where every round's
// noise swamps all but the smallest marginals (titanic, n = 1,304: 0.05 at
// ε = 1, 0.3 at ε = 0.1; full ADULT: 0.0015 at ε = 1, 0.01 at ε = 0.1).
// Evidence in docs/BENCHMARKS.md.
func (s *Project) smallData(sh *Shape, top int, rho float64) bool {
	if sh.N <= 0 || sh.Neighbours != ReplaceOne || top < 2 {
		return false
	}
	d := sh.Workload.Domain().Len()
	rounds := s.Rounds
	if rounds <= 0 {
		rounds = tunedRounds(d, rho)
	}
	sigma := privacy.CalibrateGaussian((1-aimSelectShare)*rho/float64(rounds), 1, math.Sqrt(marginalSens2(sh)))
	return sigma/float64(sh.N) > 0.02
}

// chooseMeasured picks, from noisy measurements, the sets the model fits:
// in decreasing order of their noisy dependence (the L1 distance between a
// table and the product of its own margins, less the noise's expected L1),
// each set whose addition keeps the junction tree under the cap. Attributes
// left out get their one-way table summed from a measurement that holds
// them. It reads only noisy measurements: post-processing.
func chooseMeasured(sizes []int, ms []fmeas, capB uint64) (*model.Tree, []fmeas, error) {
	type cand struct {
		i     int
		score float64
	}
	var cs []cand
	for i, m := range ms {
		cs = append(cs, cand{i, dependence(sizes, m)})
	}
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].score > cs[b].score })
	var chosen []fmeas
	var sets [][]int
	for _, c := range cs {
		trial := append(sets[:len(sets):len(sets)], ms[c.i].set)
		t, err := model.NewTree(sizes, trial)
		if err != nil || t.Bytes() > capB {
			continue
		}
		sets = trial
		chosen = append(chosen, ms[c.i])
	}
	covered := make([]bool, len(sizes))
	for _, set := range sets {
		for _, a := range set {
			covered[a] = true
		}
	}
	for a := range sizes {
		if covered[a] {
			continue
		}
		for _, m := range ms {
			if k := slices.Index(m.set, a); k >= 0 {
				chosen = append(chosen, sumOut(sizes, m, k))
				sets = append(sets, []int{a})
				covered[a] = true
				break
			}
		}
	}
	t, err := model.NewTree(sizes, sets)
	if err != nil {
		return nil, nil, err
	}
	return t, chosen, nil
}

// dependence scores a measured table: the L1 distance between it and the
// product of its one-way margins, less the noise's expected L1 (√(2/π)·σ
// per cell), in fractions.
func dependence(sizes []int, m fmeas) float64 {
	if len(m.set) < 2 {
		return math.Inf(-1)
	}
	dims := make([]int, len(m.set))
	for i, a := range m.set {
		dims[i] = sizes[a]
	}
	margins := make([][]float64, len(dims))
	for i := range margins {
		margins[i] = make([]float64, dims[i])
	}
	total := 0.0
	idx := make([]int, len(dims))
	for c, v := range m.y {
		v = max(v, 0)
		total += v
		rem := c
		for i := len(dims) - 1; i >= 0; i-- {
			idx[i] = rem % dims[i]
			rem /= dims[i]
		}
		for i := range dims {
			margins[i][idx[i]] += v
		}
	}
	if total <= 0 {
		return math.Inf(-1)
	}
	l1 := 0.0
	for c, v := range m.y {
		rem := c
		prod := total
		for i := len(dims) - 1; i >= 0; i-- {
			prod *= margins[i][rem%dims[i]] / total
			rem /= dims[i]
		}
		l1 += math.Abs(max(v, 0) - prod)
	}
	return l1 - math.Sqrt(2/math.Pi)*float64(len(m.y))/math.Sqrt(m.w)
}

// sumOut returns the one-way measurement of attribute set[k] summed from m
// (its variance adds up over the summed cells).
func sumOut(sizes []int, m fmeas, k int) fmeas {
	dims := make([]int, len(m.set))
	for i, a := range m.set {
		dims[i] = sizes[a]
	}
	y := make([]float64, dims[k])
	for c, v := range m.y {
		rem := c
		for i := len(dims) - 1; i >= 0; i-- {
			if i == k {
				y[rem%dims[i]] += v
			}
			rem /= dims[i]
		}
	}
	summed := float64(len(m.y) / dims[k])
	return fmeas{set: []int{m.set[k]}, y: y, w: m.w / summed, sigma: m.sigma * math.Sqrt(summed)}
}

// smoothCodes is the number of leading codes of attr that the one-way
// smoothing may average together: every code of an ordered attribute
// (integer, numeric, encoded, date) but its null code, which is the last
// and stands outside the order; none of a categorical or boolean one, whose
// code order means nothing.
func smoothCodes(attr *universe.Attribute) int {
	if !attr.Ordered() {
		return 0
	}
	if c, ok := attr.NullCode(); ok {
		return c
	}
	return attr.Size()
}

// valueOrder is every attribute's number of codes ordered by value: its
// ordered codes (smoothCodes) where the domain orders its values (integer,
// numeric and date attributes), 0 for a categorical or boolean attribute
// and for an encoded one, whose codes' order is the encoder's, not one of
// values. The supports' and coarse pairs' rare values are merged by runs
// of neighbours along it (supportRuns, coarseGroups).
func valueOrder(dom *universe.Domain) []int {
	ordered := make([]int, dom.Len())
	for a := range ordered {
		if attr := dom.Attr(a); attr.Kind != universe.Encoded {
			ordered[a] = smoothCodes(attr)
		}
	}
	return ordered
}

// smoothOneWay is the one-way smoothing both fits' starts share (the
// rounds' one-way tables, the explicit and measured fits' pooled one-way
// estimates): smoothSURE over attr's ordered codes (smoothCodes), half-width
// at most smoothWidth, at the noise sigma of y's values. It returns the
// half-width chosen (0: y as it was). Post-processing.
func smoothOneWay(y []float64, attr *universe.Attribute, sigma float64) int {
	hmax := smoothWidth()
	if hmax <= 0 {
		return 0
	}
	return smoothSURE(y[:smoothCodes(attr)], sigma, hmax)
}

// smoothSURE replaces the noisy table y (noise σ per cell) by the
// triangular moving average of half-width h ≤ hmax whose Stein unbiased
// estimate of the squared error, ‖y − S_h y‖² + 2σ²·tr(S_h) − cells·σ², is
// the lowest (h = 0 leaves y as it is), and returns h. The moving average
// runs along the value codes; on a table whose neighbouring codes are not
// alike the residual term dominates and SURE keeps h = 0. Post-processing.
func smoothSURE(y []float64, sigma float64, hmax int) int {
	best, bestH := 2*sigma*sigma*float64(len(y)), 0 // h = 0: no residual, trace = cells (−cells·σ² dropped)
	var z, bestZ []float64
	for h := 1; h <= hmax && 2*h < len(y); h++ {
		var tr float64
		z, tr = smoothTri(y, h, z)
		rss := 0.0
		for i := range y {
			r := y[i] - z[i]
			rss += r * r
		}
		if v := rss + 2*sigma*sigma*tr; v < best {
			best, bestH = v, h
			bestZ = append(bestZ[:0], z...)
		}
	}
	if bestH > 0 {
		copy(y, bestZ)
	}
	return bestH
}

// smoothTri writes the triangular moving average of half-width h of y
// (weights h+1−|i−j|, renormalised at the ends) into out, and returns it
// with the smoother's trace (Σ_i of cell i's own weight).
func smoothTri(y []float64, h int, out []float64) ([]float64, float64) {
	out = append(out[:0], y...)
	tr := 0.0
	for i := range y {
		sum, w := 0.0, 0.0
		for j := max(i-h, 0); j <= min(i+h, len(y)-1); j++ {
			k := triWeight(h, i, j)
			sum += k * y[j]
			w += k
		}
		out[i] = sum / w
		tr += float64(h+1) / w
	}
	return out, tr
}

// triWeight is smoothTri's weight of code j in the average at code i
// (half-width h, |i − j| ≤ h), before the renormalisation at the ends.
func triWeight(h, i, j int) float64 { return float64(h + 1 - max(i-j, j-i)) }

// smoothedSD writes into sd the noise of each value of an estimate of noise
// sigma per value after smoothTri at half-width h over its first n codes
// (the smoother's weights' ℓ2 norm times sigma; sigma beyond n).
func smoothedSD(sd []float64, sigma float64, h, n int) {
	for v := range sd {
		if h == 0 || v >= n {
			sd[v] = sigma
			continue
		}
		s2, sw := 0.0, 0.0
		for j := max(v-h, 0); j <= min(v+h, n-1); j++ {
			k := triWeight(h, v, j)
			s2 += k * k
			sw += k
		}
		sd[v] = sigma * math.Sqrt(s2) / sw
	}
}

// isSubset reports whether every element of a is in b.
func isSubset(a, b []int) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// coarseMinValues: attributes of more values than this get coarse groups.
const coarseMinValues = 10

// coarseGroups returns, per attribute of more than coarseMinValues values,
// its values' groups: each value whose fitted one-way share (shares[a],
// oneWayShares) is at least share alone, the other values together (nil for an attribute left
// whole: a small one, or one where at most one value would be grouped),
// except on an attribute whose first ordered[a] codes are ordered by value
// (valueOrder; nil: none), where a run of consecutive such values whose
// total share is at least share is a group of its own (resolvedRuns), as
// on the supports (supportGroups). It reads only the model fitted to the
// noisy one-way tables: post-processing.
func coarseGroups(shares [][]float64, share float64, ordered []int) [][]int32 {
	groups := make([][]int32, len(shares))
	for a, mo := range shares {
		size := len(mo)
		if size <= coarseMinValues {
			continue
		}
		g := make([]int32, size)
		kept := int32(0)
		for v, p := range mo {
			g[v] = -1
			if p >= share {
				g[v] = kept
				kept++
			}
		}
		if kept == 0 || int(kept) >= size-1 {
			continue
		}
		rare := func(v int) bool { return mo[v] < share }
		var run []int
		if ordered != nil {
			run = resolvedRuns(mo, rare, ordered[a], func(total float64, _ int) bool { return total >= share })
		}
		rareDigits(g, rare, run, kept)
		groups[a] = g
	}
	return groups
}

// coarsePair is a 2-way candidate measured on groups of its cells (the
// coarse groups of its large attributes): a noisy table of its few large
// cells where the full table's many small cells would carry more noise than
// structure. A record moves at most two groups' counts by one, the full
// table's sensitivities hold.
type coarsePair struct {
	base           int // the candidate's index
	*supportGroups     // each attribute's coarse groups (its values alone where it has none)
}

func (k *coarsePair) groups() int { return k.n }

// coarsePairs returns the coarse variants of the 2-way candidates that hold
// a grouped attribute.
func coarsePairs(sizes []int, cands [][]int, groups [][]int32) []coarsePair {
	var out []coarsePair
	for i, c := range cands {
		if len(c) != 2 || (groups[c[0]] == nil && groups[c[1]] == nil) {
			continue
		}
		digits, radix := make([][]int32, 2), make([]int, 2)
		for j, a := range c {
			digits[j] = groups[a]
			if digits[j] == nil {
				digits[j] = make([]int32, sizes[a])
				for v := range digits[j] {
					digits[j][v] = int32(v)
				}
			}
			radix[j] = int(slices.Max(digits[j])) + 1
		}
		out = append(out, coarsePair{base: i, supportGroups: newGroups(digits, radix)})
	}
	return out
}
