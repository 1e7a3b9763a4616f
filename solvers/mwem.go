package solvers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dpsynth/synth/internal/vec"
	"github.com/dpsynth/synth/privacy"
)

func init() {
	register("mwem", func(s Setting) Solver { return &MWEM{Setting: s} })
}

// MWEM is the multiplicative weights exponential mechanism of Hardt, Ligett
// and McSherry ("A Simple and Practical Algorithm for Differentially
// Private Data Release", NeurIPS 2012), the classic baseline. From the
// uniform distribution D_0, each round t = 1..T:
//
//  1. selects a query by the exponential mechanism on the scores
//     |a_j − ⟨q_j, D_{t−1}⟩| (the exact answers a are private);
//  2. measures its count: c_j + Z with Z exact discrete noise (discrete
//     Gaussian in the tuned setting, discrete Laplace in the paper one),
//     released as the fraction m_j = w_j·(c_j + Z)/n;
//  3. fits D_t to all measurements so far by multiplicative weights:
//     Passes sweeps, each applying, for every measured query in the order
//     first measured, D ← D·exp(Step·q_j·(m_j − ⟨q_j, D⟩)), renormalised
//     (the paper's rule has Step = 1/2; repeating the update over all past
//     measurements is one of the practical improvements the paper
//     describes). The averaged measurement is clamped to [0, w_j] first.
//
// A query selected again is measured again and its measurements averaged
// (inverse-variance weights, all equal): the extra measurement halves the
// noise variance of a query the exponential mechanism still finds
// among the worst, which is what the budget of that round is best spent
// on; excluding measured queries would instead force the round onto a
// query the mechanism ranks lower. Output: the average of D_1..D_T in the
// paper setting (Algorithm 1 as printed), the last D_T in the tuned one.
//
// Privacy. Under replace-one neighbours (n public) a_j moves by at most
// range(q_j)/n and the count c_j by at most 1. Under add/remove neighbours
// (the default) n is private: MWEM first spends CountShare of its budget
// on a noisy count n̂ (countPlan: a discrete Gaussian of ℓ2 sensitivity K in
// the Tuned setting, a discrete Laplace of ℓ1 sensitivity K, pure, in the
// Paper one; K = Shape.Unit()), its answers are a_j = c_j/n̂·w_j with n̂
// public, and a unit of up to K records added or removed moves a_j by at
// most K·max |q_j|/n̂ and c_j by at most K. Selection: |·| is 1-Lipschitz,
// so every score has sensitivity Δ = max_j range(q_j)/n (1/n for counting
// queries), or K·max_j max |q_j|/n̂; scores of different queries may move
// in opposite directions, which the exponential mechanism's
// exp(ε0·s/(2Δ)) covers: ε0-DP and ε0²/8-zCDP per round (bounded range).
// Measurement: a discrete Gaussian of parameter σ on a count of
// sensitivity K (1 under replace-one) is K²/(2σ²)-zCDP and a discrete
// Laplace of scale b is (K/b)-DP (Canonne, Kamath and Steinke 2020); the
// multiplicative-weights fit and the output are post-processing. Tuned:
// zCDP composition, T·(ε0²/8 + K²/(2σ²)) ≤ ρ (ρ' = ρ less n̂'s share under
// add/remove) with a share SelectShare of it for the selections. Paper:
// pure ε-DP, ε0 = K/b = ε/(2T) as in the original (ε' under add/remove),
// T·(ε0 + K/b) = ε by basic composition (δ = 0 is allowed), plus n̂'s ε
// under add/remove. The charges are totals that do not depend on n; the
// plan made before any private step (N = 0 under add/remove) carries them
// all, and T, Δ and the noise follow n̂.
//
// On the factored model (Shape.Model = Factored; marginal workloads, tuned
// setting) the plan, charges, selections and measurements are the same;
// the fit differs. The sweeps above need the answer of each measured query
// after each update, a recalibration of the junction tree per query: too
// costly. Instead each round fits every measurement so far by least squares
// on the model, as MWEM+PGM does (McKenna, Sheldon and Miklau 2019): at
// most FitSteps steps of entropic mirror descent warm-started from the last
// round, where each measured cell's potential moves by its own residual (a
// cell measured r times has their average as target and weight r/σ²); the
// last round's fit takes ten times as many steps. With exact measurements
// both fits converge to the same model (the maximum-entropy one that
// matches the measured cells). The output is the last iterate; the paper
// setting's average of iterates is a mixture, not a log-linear model, and
// is refused there (ErrUnsupported). Queries whose attribute set would take
// the junction tree over the cap are left out of the round's selection
// (fiterate.go: a public rule).
type MWEM struct {
	// Setting selects the rules for the fields left at zero.
	Setting Setting
	// T is the number of rounds; zero means the rule ⌈0.6·(n√ρ)^0.65⌉,
	// capped at 1,000 (ρ: the budget's zCDP equivalent; see mwemT; n̂/K and
	// the budget less n̂'s share under add/remove).
	T int
	// SelectShare is the tuned share of ρ spent on the selections (the rest
	// on the measurements); zero means 0.8. Paper: ε/2 each.
	SelectShare float64
	// Passes is the largest number of multiplicative-weights sweeps over
	// all measurements per round; zero means 10 (both settings). The sweeps
	// stop early once every measured answer is fitted within 1e-5.
	Passes int
	// Step multiplies the exponent of the multiplicative update; zero means
	// 1/2 (paper, as printed) or 1 (tuned).
	Step float64
	// TraceEvery: the internal max error is recorded every this many rounds
	// (free: it comes from the selection's Answer pass); zero means 1,
	// negative never.
	TraceEvery int
	// FitSteps is, on the factored model, the largest number of
	// mirror-descent steps of each round's fit; zero means 25 (the last
	// round's fit takes ten times as many).
	FitSteps int

	// underNoise multiplies the selection's ε0 without changing the charge,
	// for the neighbour test's deliberately under-noised variant.
	underNoise float64
}

// Name returns "mwem".
func (s *MWEM) Name() string { return "mwem" }

type mwemRun struct {
	plan       *Plan
	T, m       int
	eps0       float64 // selection parameter per round (0 without privacy)
	sens       float64 // score sensitivity Δ (0 when N is unknown)
	gauss      *privacy.DiscreteGaussian
	lap        *privacy.DiscreteLaplace
	passes     int
	step       float64
	average    bool
	noiseCount float64 // standard deviation (Gaussian) or scale (Laplace), in counts
	maxW       float64 // the largest query range (1 if every query is constant)
}

// Plan derives the run's parameters and charges from the public shape.
// Under add/remove neighbours it treats N as unknown (0): n is private.
func (s *MWEM) Plan(sh *Shape) (*Plan, error) {
	r, err := s.derive(publicShape(sh), false)
	if err != nil {
		return nil, err
	}
	return r.plan, nil
}

// Defaults of the tuned setting (docs/BENCHMARKS.md "### mwem" has the
// evidence).
const (
	mwemSelectShare = 0.8
	mwemTunedPasses = 10
	mwemTunedStep   = 1
	mwemPaperPasses = 10
	mwemPaperStep   = 0.5
	mwemTCoef       = 0.6  // T = ⌈0.6·(n√ρ)^0.65⌉ ...
	mwemTPower      = 0.65 //
	mwemTMax        = 1000 // ... at most
	mwemExactT      = 300  // rounds without privacy (ρ = +Inf)
	mwemFitTol      = 1e-5 // sweeps stop when every measured query is fitted this well
)

// mwemT is the number of rounds, the same rule in both settings (the paper
// leaves T to the user): ⌈0.6·(n√ρ)^0.65⌉ in [1, 1000], with ρ the budget's
// zCDP equivalent (ε²/2 for a pure budget). n√ρ is the inverse of the
// noise of one Gaussian count spending the whole budget, in fractions of n.
func mwemT(n int, rho float64) int {
	return mwemTUnits(float64(n), rho)
}

// mwemTUnits is mwemT for a record count in units (unitCount: n̂/K under
// add/remove, where one count's sensitivity is K).
func mwemTUnits(n, rho float64) int {
	if math.IsInf(rho, 1) {
		return mwemExactT
	}
	t := math.Ceil(mwemTCoef * math.Pow(n*math.Sqrt(rho), mwemTPower))
	return int(min(max(t, 1), mwemTMax))
}

// derive reads sh.N as the public record count: n under replace-one, the
// noisy count n̂ (or 0) under add/remove.
func (s *MWEM) derive(sh *Shape, noPrivacy bool) (*mwemRun, error) {
	if sh.Workload == nil {
		return nil, errors.New("mwem: no workload")
	}
	if err := sh.Budget.Validate(); err != nil {
		return nil, err
	}
	if err := sh.checkUnit("mwem"); err != nil {
		return nil, err
	}
	if sh.Model == Factored {
		if err := factoredFamilies(sh.Workload, "mwem"); err != nil {
			return nil, err
		}
		if s.Setting == Paper {
			return nil, fmt.Errorf("mwem (paper) outputs the average of its iterates, a mixture that the factored model cannot hold; use the tuned setting or --model explicit: %w", ErrUnsupported)
		}
	}
	if s.T < 0 || s.T > 1e7 || s.Passes < 0 || s.FitSteps < 0 || !(s.Step >= 0 && s.Step <= 1e3) || !(s.SelectShare >= 0 && s.SelectShare < 1) {
		return nil, fmt.Errorf("mwem: settings out of range: T %d, Passes %d, Step %v, SelectShare %v", s.T, s.Passes, s.Step, s.SelectShare)
	}
	p := &Plan{Solver: "mwem", Setting: s.Setting, Params: map[string]float64{}}
	wl := sh.Workload
	run := &mwemRun{plan: p, m: wl.M()}
	maxAbs := 0.0
	for j := range wl.M() {
		lo, hi := wl.Range(j)
		run.maxW = max(run.maxW, hi-lo)
		maxAbs = max(maxAbs, math.Abs(lo), math.Abs(hi))
	}
	if run.maxW == 0 {
		run.maxW, maxAbs = 1, 1 // every query constant: any positive Δ is safe
	}
	if sh.N > 0 {
		// A score |a_j − ⟨q_j, D⟩| moves by at most range(q_j)/n (one record
		// replaced), or K·max |q_j|/n̂ (a unit added or removed).
		run.sens = run.maxW / float64(sh.N)
		if sh.Neighbours == AddRemove {
			run.sens = float64(sh.Unit()) * maxAbs / float64(sh.N)
		}
	}
	selTotal, measTotal, rhoT, err := s.charges(sh, run)
	if err != nil {
		return nil, err
	}
	if p.count != nil {
		p.count.params(p)
	}
	if noPrivacy {
		rhoT = math.Inf(1)
	}
	T := s.T
	if T == 0 && sh.N > 0 {
		T = mwemTUnits(unitCount(sh), rhoT)
	}
	run.T = T
	if err := run.rounds(sh, selTotal, measTotal); err != nil {
		return nil, err
	}
	if s.Passes > 0 {
		run.passes = s.Passes
	}
	if s.Step > 0 {
		run.step = s.Step
	}
	if sh.Model == Factored {
		// The fit holds the model and a trial copy.
		factoredPlanParams(p, sh, 2)
		steps := s.FitSteps
		if steps == 0 {
			steps = mwemFactoredSteps
		}
		p.Params["fit_steps_per_round"] = float64(steps)
	}
	p.Iterations = T
	p.Params["T"] = float64(T)
	p.Params["eps0"] = run.eps0
	p.Params["noise_counts"] = run.noiseCount
	p.Params["passes"] = float64(run.passes)
	p.Params["step"] = run.step
	if sh.N > 0 && sh.Neighbours == AddRemove {
		p.Params["sensitivity"] = run.sens
	}
	if sh.N > 0 && T > 0 {
		p.Params["noise_fraction"] = run.noiseCount * run.maxW / float64(sh.N)
		p.Params["select_scale"] = 2 * run.sens / run.eps0 // Gumbel scale in answer units
	}
	return run, nil
}

// charges sets the plan's charges, which are totals independent of T (and
// so of n), and returns the selections' and the measurements' totals (ρ
// for Tuned, pure ε for Paper) and the ρ of the rounds rule (mwemT). Under
// add/remove the noisy count takes its share first.
func (s *MWEM) charges(sh *Shape, run *mwemRun) (selTotal, measTotal, rhoT float64, err error) {
	p := run.plan
	b := sh.Budget
	ar, K := sh.Neighbours == AddRemove, sh.Unit()
	if s.Setting == Paper {
		if ar {
			if p.count, b.Eps, err = planCountPure("mwem (paper)", b.Eps, K); err != nil {
				return 0, 0, 0, err
			}
			p.Charges = append(p.Charges, p.count.charge)
		}
		// ε/2 for the selections and ε/2 for the measurements, lowered by a
		// relative 1e-9 so that the rounded-up costs fit.
		half := b.Eps / 2 * (1 - 1e-9)
		selTotal, measTotal = half, half
		run.passes, run.step, run.average = mwemPaperPasses, mwemPaperStep, true
		sel := "mwem (paper): T exponential-mechanism selections, eps/(2T) each, basic composition"
		meas := "mwem (paper): T discrete Laplace measurements of one count, scale 2T/eps, basic composition"
		if ar {
			sel = "mwem (paper): T exponential-mechanism selections, eps'/(2T) each, basic composition, eps' = eps less the record count's share"
			meas = fmt.Sprintf("mwem (paper): T discrete Laplace measurements of one count (l1 sensitivity %d), scale %d·2T/eps', basic composition", K, K)
		}
		p.Charges = append(p.Charges,
			privacy.Charge{Label: sel, Cost: privacy.BoundedRangeCost(half)},
			privacy.Charge{Label: meas, Cost: privacy.PureCost(half)})
	} else {
		if b.Delta == 0 {
			return 0, 0, 0, fmt.Errorf("mwem (tuned): zCDP accounting needs δ > 0; use the paper setting for pure ε-DP: %w", ErrUnsupported)
		}
		rho, _ := b.Rho(sh.Conversion)
		p.Params["rho"] = rho
		if ar {
			if p.count, rho, err = planCountZCDP("mwem (tuned)", rho, K); err != nil {
				return 0, 0, 0, err
			}
			p.Charges = append(p.Charges, p.count.charge)
		}
		share := s.SelectShare
		if share == 0 {
			share = mwemSelectShare
		}
		selTotal = share * rho * (1 - 1e-9)
		measTotal = (1 - share) * rho * (1 - 1e-9)
		run.passes, run.step = mwemTunedPasses, mwemTunedStep
		sel := "mwem (tuned): T exponential-mechanism selections, eps0^2/8 each, zCDP composition"
		meas := "mwem (tuned): T discrete Gaussian measurements of one count (l2 sensitivity 1), zCDP composition"
		if ar {
			sel += ", on rho' = rho less the record count's share"
			meas = fmt.Sprintf("mwem (tuned): T discrete Gaussian measurements of one count (l2 sensitivity %d), zCDP composition, on rho' = rho less the record count's share", K)
		}
		p.Charges = append(p.Charges,
			privacy.Charge{Label: sel, Cost: privacy.ZCDPCost(selTotal)},
			privacy.Charge{Label: meas, Cost: privacy.ZCDPCost(measTotal)})
		p.Params["select_share"] = share
		return selTotal, measTotal, rho, nil
	}
	// The rounds rule reads the budget's zCDP equivalent (ε²/2 if pure).
	rhoT = b.Eps * b.Eps / 2
	if b.Delta > 0 {
		if rhoT, err = b.Rho(sh.Conversion); err != nil {
			return 0, 0, 0, err
		}
	}
	return selTotal, measTotal, rhoT, nil
}

// rounds sets the per-round parameters, which split the charges' totals
// over the T rounds: the selection's ε0 and the measurement's noise, of
// sensitivity K (1 under replace-one) in counts.
func (r *mwemRun) rounds(sh *Shape, selTotal, measTotal float64) error {
	p, T := r.plan, r.T
	K := float64(sh.Unit())
	if T == 0 {
		p.Warnings = append(p.Warnings, "mwem: T depends on n, unknown at plan time")
		return nil
	}
	if p.Setting == Paper {
		r.eps0 = selTotal / float64(T)
		scale := K * float64(T) / measTotal
		lap, err := privacy.NewDiscreteLaplace(scale)
		if err != nil {
			return fmt.Errorf("mwem: %w", err)
		}
		if got := lap.Cost(K).Eps * float64(T); got > measTotal*(1+1e-12) {
			return fmt.Errorf("mwem: internal error: measurement cost %v over %v", got, measTotal)
		}
		r.lap, r.noiseCount = lap, scale
		return nil
	}
	r.eps0 = privacy.CalibrateExponential(selTotal, T)
	sigma := privacy.CalibrateGaussian(measTotal, T, K)
	g, err := privacy.NewDiscreteGaussian(sigma)
	if err != nil {
		return fmt.Errorf("mwem: %w", err)
	}
	if got := g.Cost(K).Rho * float64(T); got > measTotal {
		return fmt.Errorf("mwem: internal error: measurement cost %v over %v", got, measTotal)
	}
	r.gauss, r.noiseCount = g, sigma
	return nil
}

// mwemState is one run in progress: Solve is newMWEMState, T calls of step
// and finish; the benchmarks time step alone.
type mwemState struct {
	run     *mwemRun
	p       *Problem
	sup     *supportIndex
	w       []float64 // unnormalised weights: D = w/Z
	z       float64
	avg     []float64 // paper: Σ D_t
	ans     []float64 // ⟨q_j, w⟩
	score   []float64
	measSum []float64 // Σ measured fractions of query j
	measCnt []int32
	order   []int // measured queries, first-measured order
	weight  []float64
	counts  []float64 // n·a_j/w_j: exact counts
	trace   int
	start   time.Time
	res     *Result
	scale   float64 // ε0 multiplier (test hook)
	em      expSelect
}

func newMWEMState(run *mwemRun, p *Problem, traceEvery int, under float64) (*mwemState, error) {
	k, m := p.Op.K(), p.Op.M()
	st := &mwemState{
		run: run, p: p, sup: newSupportIndex(p.Workload, p.Op),
		w: make([]float64, k), z: 1, ans: make([]float64, m), score: make([]float64, m),
		measSum: make([]float64, m), measCnt: make([]int32, m), order: make([]int, 0, min(run.T, m)),
		weight: make([]float64, m), counts: make([]float64, m),
		trace: traceEvery, start: time.Now(), scale: 1,
		res: &Result{Plan: run.plan, Trace: make([]Step, 0, run.T)},
	}
	if under > 0 {
		st.scale = under
	}
	if st.trace == 0 {
		st.trace = 1
	}
	if run.average {
		st.avg = make([]float64, k)
	}
	for i := range st.w {
		st.w[i] = 1 / float64(k)
	}
	if err := mwemCounts(p, st.weight, st.counts); err != nil {
		return nil, err
	}
	return st, nil
}

// mwemCounts writes each query's weight (its largest value) and exact count
// N·a_j/weight (N = n, or n̂ on a problem normalised by it, where the answers
// are fractions of n̂), refusing answers that are not counts.
func mwemCounts(p *Problem, weight, counts []float64) error {
	n := float64(p.N)
	for j := range weight {
		_, hi := p.Op.Range(j)
		weight[j] = hi
		if hi == 0 {
			continue
		}
		c := p.Answers[j] * n / hi
		if r := math.Round(c); math.Abs(c-r) > 1e-6*max(1, r) {
			return fmt.Errorf("mwem: answer %d (%v) is not a count over n = %d", j, p.Answers[j], p.N)
		}
		counts[j] = math.Round(c)
	}
	return nil
}

// step runs round t (1-based).
func (st *mwemState) step(t int) {
	p, run := st.p, st.run
	// Scores |a_j − ⟨q_j, D⟩| from one fused Answer pass.
	p.Op.Answer(st.w, st.ans)
	inv := 1 / st.z
	worst := 0.0
	for j, a := range p.Answers {
		st.ans[j] *= inv
		st.score[j] = math.Abs(a - st.ans[j])
		worst = max(worst, st.score[j])
	}
	if t > 1 && st.trace > 0 && (t-1)%st.trace == 0 && t-2 < len(st.res.Trace) {
		st.res.Trace[t-2].MaxError = worst
	}
	var j int
	if p.noPrivacy {
		j = argmax(st.score)
	} else {
		j = st.em.draw(p.Rand, st.score, run.eps0*st.scale, run.sens)
	}
	// Measure the count of query j.
	noisy := st.counts[j]
	if !p.noPrivacy {
		if run.gauss != nil {
			noisy += float64(run.gauss.Sample(p.Rand))
		} else {
			noisy += float64(run.lap.Sample(p.Rand))
		}
	}
	if st.measCnt[j] == 0 {
		st.order = append(st.order, j)
	}
	st.measSum[j] += noisy * st.weight[j] / float64(p.N)
	st.measCnt[j]++
	before := math.Abs(st.measSum[j]/float64(st.measCnt[j]) - st.ans[j])
	st.fit()
	if st.avg != nil {
		addScaled(st.avg, 1/st.z, st.w)
	}
	if len(st.res.Trace) < cap(st.res.Trace) {
		st.res.Trace = append(st.res.Trace, Step{Iter: t, Selected: j, MaxError: math.NaN(), Elapsed: time.Since(st.start)})
	}
	if p.Progress != nil {
		// The selected query's distance to its (averaged) noisy measurement
		// before the fit: a post-processing of the discrete measurements.
		p.Progress(Progress{Iter: t, Total: run.T, Objective: before, Elapsed: time.Since(st.start)})
	}
}

// fit runs the multiplicative-weights sweeps over all measurements.
func (st *mwemState) fit() {
	step := st.run.step
	for range st.run.passes {
		worst := 0.0 // the largest |m_j − ⟨q_j, D⟩| seen in this sweep
		for _, j := range st.order {
			wj := st.weight[j]
			if wj == 0 {
				continue
			}
			s := st.sup.sum(j, st.w)
			x := wj * s / st.z
			// The averaged measurement, clamped to the query's range [0, w]
			// (post-processing: no answer lies outside it).
			target := min(max(st.measSum[j]/float64(st.measCnt[j]), 0), wj)
			worst = max(worst, math.Abs(target-x))
			// The exponent is clamped (a safeguard for extreme Step or
			// noise; |Step·(m−x)| is far below 300 in practice) and the
			// weights rescaled when their total leaves [1e-150, 1e150], so
			// that no update overflows.
			f := math.Exp(min(max(step*wj*(target-x), -300), 300))
			st.sup.scale(j, f, st.w)
			st.z += (f - 1) * s
			if !(st.z > 1e-150 && st.z < 1e150) {
				st.z = sumOf(st.w)
				vec.Scale(st.w, 1/st.z)
				st.z = 1
			}
		}
		// Stop early once every measured answer is fitted to within
		// mwemFitTol: the remaining sweeps would change D by less than that
		// on any measured query. (The test reads only the noisy
		// measurements: post-processing.)
		if worst < mwemFitTol {
			break
		}
	}
	// Keep Z exact and the weights in range.
	st.z = sumOf(st.w)
	if !(st.z > 1e-100 && st.z < 1e100) {
		vec.Scale(st.w, 1/st.z)
		st.z = 1
	}
}

func (st *mwemState) finish() []float64 {
	var d []float64
	if st.avg != nil {
		d = st.avg
	} else {
		d = st.w
	}
	normalize(d)
	if n := len(st.res.Trace); n > 0 && st.trace >= 0 {
		st.res.Trace[n-1].MaxError = maxAbsError(st.p.Op, d, st.p.Answers, st.ans)
	}
	return d
}

func argmax(x []float64) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// addScaled adds a·x to dst.
func addScaled(dst []float64, a float64, x []float64) {
	for i, v := range x {
		dst[i] += a * v
	}
}

// Solve runs MWEM. It charges the plan before the first selection.
func (s *MWEM) Solve(ctx context.Context, p *Problem) (*Result, error) {
	check := checkProblem
	if p.Model == Factored {
		check = checkFactoredProblem
	}
	if err := check(p); err != nil {
		return nil, err
	}
	derive := func(sh *Shape) (*Plan, *mwemRun, error) {
		r, err := s.derive(sh, p.noPrivacy)
		if err != nil {
			return nil, nil, err
		}
		return r.plan, r, nil
	}
	var valid func(*mwemRun) error
	if p.Model != Factored {
		// The answers must be counts: checked before any charge.
		valid = func(*mwemRun) error {
			m := p.Op.M()
			return mwemCounts(p, make([]float64, m), make([]float64, m))
		}
	}
	p, _, run, err := begin(ctx, p, derive, valid)
	if err != nil {
		return nil, err
	}
	if p.Model == Factored {
		return s.solveFactored(ctx, p, run)
	}
	st, err := newMWEMState(run, p, s.TraceEvery, s.underNoise)
	if err != nil {
		return nil, err
	}
	for t := 1; t <= run.T; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st.step(t)
	}
	d := st.finish()
	if err := checkDistribution(d); err != nil {
		return nil, err
	}
	st.res.D = d
	st.res.Bounds = run.bounds(p.N)
	return st.res, nil
}

// bounds are a-priori bounds from the noise scales (confidence 0.95 each,
// a union bound over the T rounds).
func (r *mwemRun) bounds(n int) []Bound {
	const beta = 0.05
	T := float64(r.T)
	maxW := r.maxW // the largest query range
	var b []Bound
	if r.gauss != nil {
		// Discrete Gaussian: P(|Z| >= x) <= 2·exp(−x²/(2σ²)) (CKS 2020,
		// sub-Gaussian with parameter σ).
		b = append(b, Bound{Scope: "noise of every measured answer (averaged repeats do better)",
			Value:      r.noiseCount * math.Sqrt(2*math.Log(2*T/beta)) * maxW / float64(n),
			Confidence: 1 - beta, Method: "discrete Gaussian tail, union bound over the T measurements"})
	} else if r.lap != nil {
		// Discrete Laplace of scale b: P(|Z| >= x) <= 2·exp(−x/b)·e^{1/b}/(1+e^{−1/b})
		// <= 2·exp(−(x−1)/b), so x = b·ln(2T/β) + 1 suffices.
		b = append(b, Bound{Scope: "noise of every measured answer (averaged repeats do better)",
			Value:      (r.noiseCount*math.Log(2*T/beta) + 1) * maxW / float64(n),
			Confidence: 1 - beta, Method: "discrete Laplace tail, union bound over the T measurements"})
	}
	if r.eps0 > 0 && r.sens > 0 {
		// Exponential mechanism: P(score < max − (2Δ/ε0)(ln m + x)) <= e^{−x}.
		b = append(b, Bound{Scope: "selection: every round's query has an error within this of that round's largest",
			Value:      2 * r.sens / r.eps0 * (math.Log(float64(r.m)) + math.Log(T/beta)),
			Confidence: 1 - beta, Method: "exponential mechanism utility, union bound over the T rounds"})
	}
	return b
}
