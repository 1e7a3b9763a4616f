package solvers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
)

// Project is measure-and-project: measure linear statistics of the data
// once with Gaussian noise, then fit a distribution to the noisy
// measurements without touching the data again.
//
// Setting Paper is the baseline of the solver issue: discrete Gaussian
// noise on all workload answers at once (every family of the workload, at
// one common σ), then the least-squares fit.
//
// Setting Tuned measures what the workload needs at the budget's
// signal-to-noise: the marginals of the workload's downward closure up to an
// order R chosen from public quantities (see Plan), each at a σ calibrated
// to its share of ρ, plus any non-marginal family of the workload as it is.
// Measuring lower-order marginals precisely and letting the fit extrapolate
// (its iterates are maximum-entropy log-linear models over the measured
// sets) beats measuring every high-order cell when the budget is small.
//
// The fit minimises Σ_j (⟨b_j, D⟩ − y_j)²/σ_j² over the simplex by entropic
// mirror descent with a backtracking line search (lsFit).
//
// Privacy: each measured group is the discrete Gaussian mechanism on an
// integer count vector. Under replace-one neighbours with n public a
// marginal table has ℓ2 sensitivity √2 (one record leaves a cell and enters
// another), a single counting query 1, the prefix counts of an attribute
// with v values √(v−1); under add/remove of a unit of up to K records
// (Shape.UnitRows) a marginal table has sensitivity K, a counting query K,
// the prefix counts K√v (a unit's change is the sum of K records' changes,
// which may all fall in one cell), and n is estimated from the noisy tables
// (post-processing) — with, in the tuned setting's staged plan
// (secondStage), the noisy record count (sensitivity K, stageCountShare of
// ρ) that chose them; or, when the plan measures no marginal table (the
// paper setting; a workload of ranges and predicates only), from a noisy
// record count that takes CountShare of ρ. ρ =
// Δ²/(2σ²) per group, composed by adding ρ (zCDP); the groups' shares sum to
// the budget's ρ. The fit is post-processing.
type Project struct {
	Setting Setting
	// Orders lists the orders of the marginals measured in the Tuned
	// setting (every r-attribute subset of a workload marginal, for each r
	// listed); nil means the rule in Plan.
	Orders []int
	// Threshold is the Tuned rule's largest noise-to-signal ratio: of the
	// workload's own order where n is public (replace-one; 0 means 3), of
	// the order below it in the staged plan where n is private (add/remove;
	// 0 means stageThreshold, 1.5). See Plan.
	Threshold float64
	// FitIters caps the fit's steps (0 means 2000); FitTol stops it when the
	// loss decreases by less than this relative amount over 10 steps (0
	// means 1e-7).
	FitIters int
	FitTol   float64
	// Converge turns off the SURE stopping rule and runs the least-squares
	// fit to convergence (the Paper setting always does).
	Converge bool
	// Rounds is the nominal number of select–measure–fit rounds on the
	// factored model when the workload does not fit one model (0: the tuned
	// rule, 2, 3 or 4 per attribute by budget; AIM uses 16); it sets the first
	// rounds' noise; budget annealing shortens the run where the model
	// already fits, and widening lengthens it where more sets are off than
	// the count affords. RoundIters caps each round's warm-started
	// fit (0: 100), the last round's too unless FitIters is set: more steps
	// after the last measurement fit its noise (2,000 gave a larger average
	// L1 error on full ADULT at every ε; docs/BENCHMARKS.md).
	Rounds, RoundIters int
}

func init() {
	register("project", newProject)
}

// Name implements Solver.
func (*Project) Name() string { return "project" }

// ruleThreshold is the replace-one rule's largest ν_R (Plan).
const ruleThreshold = 3

// threshold returns Threshold if set, else def: ruleThreshold for the
// replace-one rule on ν_R, stageThreshold for the staged plan's ν_{R−1}.
func (s *Project) threshold(def float64) float64 {
	if s.Threshold > 0 {
		return s.Threshold
	}
	return def
}

// Plan implements Solver.
//
// The Tuned rule: let C_r be the r-attribute subsets of the workload's
// marginal sets and R the workload's highest order. The measured sets are
// C_{R−1} and C_R, every set with an equal share of ρ — unless R >= 3 and
// the noise-to-signal ratio of order R is above Threshold, in which case
// only C_{R−1} is measured and the fit extrapolates the top order. The
// ratio is ν_R = σ_R·c̄_R: σ_R the noise, as a fraction of n, of measuring
// C_R alone with the whole budget, c̄_R the mean number of cells of its
// sets (noise against the mean cell). The rule reads only n, ρ and the
// workload's structure, and n only where it is public. When N is not yet
// known (planning before the data is opened under replace-one) the plan
// measures C_{R−1} and C_R. Under add/remove neighbours n is private, and
// the plan is staged (secondStage): a noisy record count first, then
// C_{R−1} and C_R unless ν_{R−1}, read at the noisy count, is above the
// stage's threshold (1.5: the budget does not resolve C_{R−1} well enough
// for C_R to pay), in which case C_{R−1} alone is measured. The total
// charged is the budget's ρ either way.
//
// Evidence (docs/BENCHMARKS.md): measuring lower orders alone (1-way) loses
// badly on max error everywhere; C_{R−1} with C_R was best or within ~10%
// on adult-reduced (ε 0.2–2) and titanic (ε 0.5–2); C_{R−1} alone was best
// where ν_R is large (adult-reduced at ε = 0.1: ν_3 = 3.9; titanic, n =
// 1,304: ν_3 >= 5). Under add/remove, on the accuracy suite, dropping C_R
// by ν̂_R lost where the triples still paid at ν_3 of 4–11 (star, healthins
// at ε = 0.1), so the staged plan gates on ν_{R−1}. Descending to the
// one-way tables won on affairs and lost on titanic without Age; C_{R−1}
// alone wins on both at ε = 0.1 ("The record count first"). The gate
// reads the count with no margin, at ν_{R−1} = 1.5 ("The stage decides at
// the count"). The same gate one order further down (C₁ alone when ν₁ is
// above it) gained at ε = 0.05 but lost max error at ε = 0.1 on affairs or
// titanic without Age, depending on the fit ("The stage descends to the
// lowest unresolved order").
//
// Under AccountExact a plan of discrete Gaussians alone is calibrated by its
// privacy-loss distribution instead (planExact).
func (s *Project) Plan(sh *Shape) (*Plan, error) {
	if err := sh.checkUnit(s.Name()); err != nil {
		return nil, err
	}
	rho, err := sh.Budget.Rho(sh.Conversion)
	if err != nil {
		return nil, err
	}
	if s.exactEligible(sh) {
		return s.planExact(sh, rho)
	}
	return s.planAt(sh, rho)
}

// planAt is Plan with the plan's zCDP budget ρ given.
func (s *Project) planAt(sh *Shape, rho float64) (*Plan, error) {
	w := sh.Workload
	// n is public only under replace-one: under add/remove the plan must not
	// read it, so that what is measured (and so every charge and label) is
	// the same for neighbouring datasets of different sizes.
	pub := *sh
	if sh.Neighbours == AddRemove {
		pub.N = 0
	}
	plan := &Plan{Solver: s.Name(), Setting: s.Setting, Params: map[string]float64{"rho": rho}}
	if sh.Model == Factored {
		// Every factored plan measures marginal tables, whose noisy totals
		// estimate n under add/remove.
		if err := s.planFactored(&pub, plan, rho); err != nil {
			return nil, err
		}
		plan.AnswersUnused = true
		planNSE(sh, plan)
		return plan, nil
	}
	// Under add/remove n is estimated from the noisy totals of the measured
	// marginal tables; a plan that measures none (the paper setting, or a
	// workload of ranges and predicates only) spends CountShare of ρ on a
	// noisy record count instead.
	if sh.Neighbours == AddRemove && !s.measuresMarginals(w) {
		c, rest, err := planCountZCDP(s.Name(), rho, sh.Unit())
		if err != nil {
			return nil, err
		}
		plan.count = c
		c.params(plan)
		rho = rest
	}
	var groups []group
	if s.Setting == Paper {
		for f := range w.Families() {
			groups = append(groups, group{family: f, sens2: familySens2(w, f, sh)})
		}
		share := make([]float64, len(groups))
		for i, g := range groups {
			share[i] = g.sens2 // equal σ for all: one Gaussian on all answers
		}
		plan.Charges = calibrate(groups, share, rho, w, s.Name())
	} else {
		orders := s.Orders
		staged := false
		if orders == nil {
			orders = s.rule(&pub, rho)
			// Under add/remove the rule cannot read n: the top order waits
			// for the first stage's n̂ (secondStage).
			staged = sh.Neighbours == AddRemove && len(orders) == 2
		}
		for _, r := range orders {
			if !staged { // a staged plan records the orders it measured
				plan.Params[fmt.Sprintf("order_%d", r)] = 1
			}
			for _, set := range downwardClosure(w, r) {
				groups = append(groups, group{attrs: set, sens2: marginalSens2(sh)})
			}
		}
		for f, fam := range w.Families() {
			if fam.Kind != query.Marginals {
				groups = append(groups, group{family: f, sens2: familySens2(w, f, sh)})
			}
		}
		if len(groups) == 0 {
			return nil, fmt.Errorf("solvers: project: the workload has no queries")
		}
		share := make([]float64, len(groups))
		for i, g := range groups {
			share[i] = g.sens2
		}
		if !staged {
			plan.Charges = calibrate(groups, share, rho, w, s.Name())
		} else if err := s.planStaged(plan, sh, groups, share, orders[1], rho); err != nil {
			return nil, err
		}
	}
	if plan.count != nil {
		plan.Charges = append([]privacy.Charge{plan.count.charge}, plan.Charges...)
	}
	plan.Params["groups"] = float64(len(groups))
	if pub.N > 0 {
		plan.Params["sigma_fraction"] = groups[len(groups)-1].sigma / float64(pub.N)
	}
	if plan.stage == nil {
		plan.groups = groups
		planNSE(sh, plan)
	}
	return plan, nil
}

// planNSE records, under add/remove, the standard error of the noisy
// record count n̂ that the solve will draw (n_estimate_se): the noisy
// count's when the plan has one, else that of the inverse-variance mean of
// the measured marginal tables' totals (groupsNSE; on the factored model's
// adaptive rounds, the one-way tables', from which the rounds take n̂). It
// reads the plan only, so the dry run shows it before any data is read.
func planNSE(sh *Shape, plan *Plan) {
	if sh.Neighbours != AddRemove {
		return
	}
	if plan.count != nil {
		plan.Params["n_estimate_se"] = plan.count.sd()
		return
	}
	if se := groupsNSE(sh.Workload.Domain(), plan.groups); se > 0 && !math.IsInf(se, 0) {
		plan.Params["n_estimate_se"] = se
	}
}

// measuresMarginals reports whether the explicit plan measures marginal
// tables: the tuned setting measures the downward closure of the workload's
// marginal sets (if it has any); the paper setting measures the workload's
// own answers only.
func (s *Project) measuresMarginals(w *query.Workload) bool {
	return s.Setting == Tuned && len(w.Marginals()) > 0
}

// rule returns the orders the Tuned setting measures (see Plan).
func (s *Project) rule(sh *Shape, rho float64) []int {
	top := 0
	for _, m := range sh.Workload.Marginals() {
		top = max(top, len(m.Attrs))
	}
	switch {
	case top == 0:
		return nil
	case top == 1:
		return []int{1}
	case top >= 3 && sh.N > 0 && s.ratio(sh, top, rho, float64(sh.N)) > s.threshold(ruleThreshold):
		return []int{top - 1}
	}
	return []int{top - 1, top}
}

// ratio is ν_r of the Tuned rule at n records.
func (s *Project) ratio(sh *Shape, r int, rho, n float64) float64 {
	sets := downwardClosure(sh.Workload, r)
	if len(sets) == 0 {
		return math.Inf(1)
	}
	cells := 0.0
	for _, set := range sets {
		cells += float64(cellsOf(sh.Workload.Domain(), set))
	}
	cbar := cells / float64(len(sets))
	sigma := math.Sqrt(float64(len(sets))*marginalSens2(sh)/(2*rho)) / n
	return sigma * cbar
}

func (s *Project) fitIters() int {
	if s.FitIters > 0 {
		return s.FitIters
	}
	return 2000
}

func (s *Project) roundIters() int {
	if s.RoundIters > 0 {
		return s.RoundIters
	}
	return 100
}

func (s *Project) fitTol() float64 {
	if s.FitTol > 0 {
		return s.FitTol
	}
	return 1e-7
}

// Solve implements Solver.
func (s *Project) Solve(ctx context.Context, p *Problem) (*Result, error) {
	if p.Model == Factored {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if p.Rand == nil || p.N <= 0 || p.Workload == nil {
			return nil, errors.New("solvers: project: incomplete problem (workload, random source, records)")
		}
		plan, err := s.Plan(&p.Shape)
		if err != nil {
			return nil, err
		}
		if err := p.charge(plan); err != nil {
			return nil, err
		}
		return s.solveFactored(ctx, p, plan)
	}
	if err := checkProblem(p); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	plan, err := s.Plan(&p.Shape)
	if err != nil {
		return nil, err
	}
	if err := p.charge(plan); err != nil {
		return nil, err
	}
	return s.solveExplicit(ctx, p, plan)
}

// solveExplicit runs the charged plan on the explicit model: measure every
// planned group, fit (started from the one-way tables and stopped by SURE
// in the tuned setting), then the result with its bounds.
//
// Privacy: measure is the only step that reads the data (the groups'
// discrete Gaussian mechanisms, charged by the caller); the fit and the
// result are post-processing.
func (s *Project) solveExplicit(ctx context.Context, p *Problem, plan *Plan) (*Result, error) {
	start := time.Now()
	var ms *measured
	var err error
	if plan.stage != nil {
		ms, err = s.measureStaged(p, plan)
	} else {
		ms, err = measure(p, plan.groups, p.Neighbours, plan.count)
	}
	if err != nil {
		return nil, err
	}
	if c, ok := ms.op.(interface{ Close() }); ok && ms.op != p.Op {
		defer c.Close()
	}
	team := par.NewTeam(0)
	defer team.Close()
	fit := s.explicitFit(p, ms, team)
	if err := fit.run(ctx, s.fitIters(), s.fitTol()); err != nil {
		return nil, err
	}
	return s.explicitResult(p, plan, ms, fit, start)
}

// explicitFit sets up the least-squares fit of the measurements: started
// from the product of the one-way tables they imply (tuned setting, when
// marginals were measured) or from the uniform distribution, and stopped
// by SURE in the tuned setting unless Converge is set.
func (s *Project) explicitFit(p *Problem, ms *measured, team *par.Team) *lsFit {
	fit := newLSFit(ms.op, ms.y, ms.w, team)
	if s.Setting == Tuned && ms.marginals != nil {
		fit.startFrom(newOneWayStart(p.Workload.Domain(), ms.marginals, ms.nHat).theta)
	} else {
		fit.start(nil)
	}
	if v := variant; v != nil {
		fit.trace = v.fitTrace
	}
	if s.Setting == Tuned && !s.Converge {
		// The probe is public randomness: SURE reads only the noisy
		// measurements, so the stopping choice is post-processing.
		fit.useSURE(p.Rand.NormFloat64, 0.01, 25)
	}
	return fit
}

// explicitResult is the fitted distribution with its trace (SURE's risk
// estimate along the path, or the final loss), the fit's parameters and a
// noise bound per measured group.
func (s *Project) explicitResult(p *Problem, plan *Plan, ms *measured, fit *lsFit, start time.Time) (*Result, error) {
	res := &Result{Plan: plan, D: fit.d}
	if fit.sure != nil {
		// The trace is the risk estimate along the fit's path, per
		// measurement (≈ mean squared error in units of σ²): computed from the
		// noisy measurements only.
		m := float64(fit.sure.m)
		for i, v := range fit.sure.history {
			res.Trace = append(res.Trace, Step{Iter: i, Selected: -1, Objective: v / m, MaxError: math.NaN(), Elapsed: fit.sure.elapsed[i]})
		}
	} else {
		res.Trace = append(res.Trace, Step{Iter: fit.iters, Selected: -1, Objective: fit.loss, MaxError: math.NaN(), Elapsed: time.Since(start)})
	}
	plan.Params["fit_steps"] = float64(fit.iters)
	plan.Params["fit_evals"] = float64(fit.evals)
	plan.Params["fit_loss"] = fit.loss
	if fit.sure != nil {
		plan.Params["sure_step"] = float64(fit.sure.bestIt)
	}
	if fit.restarts > 0 {
		plan.Params["fit_restarts"] = float64(fit.restarts)
	}
	if p.Neighbours == AddRemove {
		recordNHat(plan, ms.nHat)
	}
	for i, g := range plan.groups {
		scope, q := "family", p.Workload.Families()[g.family].Len
		if g.attrs != nil {
			scope, q = "marginal", cellsOf(p.Workload.Domain(), g.attrs)
		}
		res.Bounds = append(res.Bounds, Bound{
			Scope:      scope,
			Name:       g.label(p.Workload),
			Queries:    q,
			Value:      1.959963984540054 * ms.groupSigma[i],
			Confidence: 0.95,
			Method: fmt.Sprintf("noise of each measured count: discrete Gaussian, σ = %.3g (fraction of rows), two-sided 95%% per query; "+
				"the released answers are fitted to these measurements, and the fit's bias is not covered", ms.groupSigma[i]),
		})
	}
	if err := checkDistribution(res.D); err != nil {
		return nil, err
	}
	return res, nil
}

// recordNHat records the drawn n̂ under add/remove (n_estimate) and, when
// the budget does not resolve it (unresolvedN against the plan's
// n_estimate_se), the warning.
func recordNHat(plan *Plan, nHat float64) {
	plan.Params["n_estimate"] = nHat
	if w := unresolvedN(nHat, plan.Params["n_estimate_se"]); w != "" {
		plan.Warnings = append(plan.Warnings, w)
	}
}

// unresolvedN is the warning for a noisy record count that the budget does
// not resolve: n̂ within two standard errors of zero. The noise n̂ comes
// from then swamps the records too, and the release's rows (n̂ of them
// unless --rows says otherwise) are mostly noise. It reads only n̂ and its
// error (post-processing).
func unresolvedN(nHat, se float64) string {
	if se <= 0 || nHat >= 2*se {
		return ""
	}
	return fmt.Sprintf("the noisy record count is %.0f with a standard error of %.0f records: at this budget the noise swamps the records, and the release is mostly noise; use a larger ε, fewer or smaller marginals, or --rows for the number of rows", nHat, se)
}
