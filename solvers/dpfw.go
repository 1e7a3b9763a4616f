package solvers

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
)

func init() {
	register("dpfw", func(s Setting) Solver { return &DPFW{Setting: s} })
}

// DPFW is differentially private Frank-Wolfe on the entropy-regularised
// dual (seed 001, Algorithm 1). It iterates q_t in the query hull
// conv(Q ∪ −Q), whose vertices are the 2m signed queries ±q_j; the primal
// point of q_t is D_t = softmax(q_t/α). Each iteration scores every vertex
// by the gradient P_n − D_t of the dual, ⟨P_n − D_t, ±q_j⟩ = ±(a_j −
// ⟨q_j, D_t⟩) with a the exact answers, selects a vertex s_t privately,
// and steps q_{t+1} = q_t + γ_t(s_t − q_t). The output is softmax(q_out/α)
// for an iterate (or average of iterates) chosen by a public rule.
//
// The zero value is the Tuned setting with its documented defaults; every
// zero field means "the setting's rule":
//
//   - Tuned: exponential-mechanism selection (Gumbel-max), zCDP
//     accounting, q_0 = 0 (D_0 uniform), γ_t = 2/(t+2), output the last
//     iterate, T = FWTunedT(η, m) and α = FWTunedAlpha(η, k) with η =
//     n√(2ρ) the budget's public signal-to-noise scale (n̂√(2ρ')/K under
//     add/remove, see fwEta): rules chosen by
//     evidence on adult-reduced (docs/BENCHMARKS.md, "### dpfw"). In the
//     package's no-privacy test mode the rules are taken at η = +Inf.
//   - Paper: the printed algorithm: T (L129, capped at TMax), γ (L130), λ
//     (L131), Laplace report-noisy-max, α = α* (eq. 7), q_0 a vertex drawn
//     uniformly, output q_U for U uniform on {0, ..., T−1}, and advanced
//     composition as printed (an Approx charge of the whole (ε, δ)). Under
//     add/remove the printed formulas read n̂/K for n and ε' for ε.
//
// Privacy: given the past selections D_t is public. Under replace-one
// neighbours with n public, replacing record z by z' moves the score of
// vertex ±q_j by ±(q_j(z') − q_j(z))/n, at most Δ = R/n with R = max_j
// (max q_j − min q_j) (1/n for counting queries). Under add/remove
// neighbours (the default) n is private: the solver first spends
// CountShare of its budget on a noisy count n̂ (countPlan: a discrete
// Gaussian of ℓ2 sensitivity K for zCDP accounting, a discrete Laplace of
// ℓ1 sensitivity K for a pure budget or the Paper setting; K =
// Shape.Unit()), then scores ±(⟨q_j, counts⟩/n̂ − ⟨q_j, D_t⟩) with n̂
// public; a unit of up to K records added or removed moves ⟨q_j, counts⟩ by
// at most K·A (A = max_j max |q_j|), so Δ = K·A/n̂. Either way the scores of
// q_j and −q_j move in opposite directions (not monotone), so each
// selection needs the non-monotone calibration: the exponential mechanism
// exp(ε0·score/(2Δ)) is ε0-DP and ε0-bounded-range, hence ε0²/8-zCDP; T
// selections compose to T·ε0²/8 (zCDP composition), ε0 =
// CalibrateExponential(ρ, T); the plan charges the whole ρ (under
// add/remove ρ' = ρ less n̂'s share, beside n̂'s own charge), which bounds
// this for any T (T depends on n, or n̂). With a pure budget (δ = 0), ε0 =
// ε/T (ε' under add/remove) and the selections are ε-DP (bounded range
// composes by adding ε). Laplace report-noisy-max needs scale 2Δ/ε̃ for
// ε̃-DP (the paper's Lap(λ), λ = D_1/(nε̃) with n̂/K for n under
// add/remove, is used when larger, which it always is for non-negative
// queries since D_1 >= 2R and D_1 >= 2A). Everything else (q_t, α, U, the
// softmax, the output rule, the rules' use of n̂) is post-processing of the
// selections and n̂. The Paper setting charges (ε, δ) (under add/remove
// (ε', δ) beside n̂'s pure ε) by the advanced composition printed in seed
// 001 (L561, L580: T ε̃-DP steps with ε̃ = ε/(4√(2T ln(1/δ))), valid when
// ln(1/δ) >= ε̃²T); Plan.Params also record the tight recomputation. The
// plan made before any private step (N = 0 under add/remove) carries every
// charge; Solve plans again with N = n̂ for T, α and Δ, at the same cost.
//
// On the factored model (Shape.Model = Factored; marginal workloads) the
// plan, charges, scores and selections are the same; θ = q_t/α is kept as
// one table per selected workload set on a junction tree (the (1 − γ)
// shrink is a lazy scale, the step adds γ/α·(±weight) to one cell), and
// every output rule is log-linear (softmax of one iterate, or of the
// averaged q̄), so all of them run there. A step costs a calibration of the
// tree and the model's marginals on the workload's sets. Queries whose set
// would take the tree over the cap are left out of the round's selection
// (fiterate.go: a public rule).
//
// Cost per iteration: one parallel pass of exponentials over the universe
// (θ = c·φ with a lazy scale factor, so the (1 − γ) shrink is O(1) and the
// step adds one vertex with AddQuery), one fused Answer, and O(m) for the
// scores and the selection; no allocation. The trace's MaxError is the
// largest absolute score, free (internal: computed on the data).
type DPFW struct {
	Setting Setting
	// T is the number of iterations (private selections); 0: the setting's
	// rule.
	T int
	// TMax caps T in the Paper setting (default FWPaperTMax); the cap is
	// reported in Plan.Warnings.
	TMax int
	// Alpha is the entropy weight α; 0: the setting's rule.
	Alpha float64
	// Step is the step-size schedule (Tuned; the Paper setting uses the
	// printed constant γ unless Step is set).
	Step FWStep
	// Gamma is the constant step of FWStepConstant (0: the paper's
	// 2√(α/(T·D∞)), capped at 1).
	Gamma float64
	// Output is the output rule (Tuned default: last iterate; Paper:
	// uniform iterate).
	Output FWOutput

	// noiseScale multiplies the selection's noise scale (0 means 1). It is a
	// test hook: the neighbour test sets 0.5 to build an under-noised
	// variant that must fail the empirical privacy check.
	noiseScale float64
}

// FWStep is a step-size schedule for DPFW.
type FWStep int

const (
	// FWStepDefault is the setting's schedule (harmonic for Tuned, the
	// printed constant for Paper).
	FWStepDefault FWStep = iota
	// FWStepHarmonic is γ_t = 2/(t+2) (γ_0 = 1: q_1 is the first vertex).
	FWStepHarmonic
	// FWStepConstant is γ_t = Gamma.
	FWStepConstant
)

// String returns the schedule's name.
func (s FWStep) String() string {
	switch s {
	case FWStepHarmonic:
		return "harmonic"
	case FWStepConstant:
		return "constant"
	}
	return "default"
}

// FWOutput is DPFW's output rule; every rule is post-processing of the
// selections.
type FWOutput int

const (
	// FWOutputDefault is the setting's rule (last for Tuned, uniform for
	// Paper).
	FWOutputDefault FWOutput = iota
	// FWOutputLast outputs softmax(q_T/α).
	FWOutputLast
	// FWOutputAverage outputs softmax(q̄/α), q̄ the mean of q_1..q_T.
	FWOutputAverage
	// FWOutputUniform outputs softmax(q_U/α) for U uniform on {0..T−1}
	// drawn from the run's random source (seed 001, L138).
	FWOutputUniform
)

// String returns the rule's name.
func (o FWOutput) String() string {
	switch o {
	case FWOutputLast:
		return "last"
	case FWOutputAverage:
		return "average"
	case FWOutputUniform:
		return "uniform"
	}
	return "default"
}

// FWPaperTMax is the default cap on the Paper setting's T: about 40 s on
// adult-reduced (35 3-way marginals) on the shared project machine
// (docs/BENCHMARKS.md, "### dpfw").
const FWPaperTMax = 10_000

// Name returns "dpfw".
func (s *DPFW) Name() string { return "dpfw" }

// fwPlan is a DPFW plan's internal parameters.
type fwPlan struct {
	geo    fwGeometry
	paper  bool
	T      int
	alpha  float64
	step   FWStep
	gamma  float64 // constant step
	output FWOutput
	// Selection: the exponential mechanism with ε0 and sensitivity sens
	// (Tuned), or Laplace report-noisy-max with scale lapScale (Paper;
	// called with ε̃ and the sensitivity that gives that scale).
	eps0     float64
	sens     float64
	lapScale float64
}

// Plan computes the run's parameters and privacy charges from the shape.
// Under add/remove neighbours it treats N as unknown (0): n is private.
func (s *DPFW) Plan(sh *Shape) (*Plan, error) {
	p, _, err := s.plan(publicShape(sh))
	return p, err
}

// plan reads sh.N as the public record count: n under replace-one, the
// noisy count n̂ (or 0) under add/remove.
func (s *DPFW) plan(sh *Shape) (*Plan, *fwPlan, error) {
	if sh.Workload == nil {
		return nil, nil, errors.New("dpfw: no workload")
	}
	if err := sh.Budget.Validate(); err != nil {
		return nil, nil, err
	}
	if err := sh.checkUnit("dpfw"); err != nil {
		return nil, nil, err
	}
	if s.T < 0 || s.TMax < 0 || s.Alpha < 0 || s.Gamma < 0 || s.Gamma > 1 ||
		math.IsNaN(s.Alpha) || math.IsInf(s.Alpha, 0) || math.IsNaN(s.Gamma) {
		return nil, nil, fmt.Errorf("dpfw: invalid settings T = %d, TMax = %d, Alpha = %v, Gamma = %v", s.T, s.TMax, s.Alpha, s.Gamma)
	}
	if s.Alpha != 0 && (s.Alpha < 1e-12 || s.Alpha > 1e12) {
		return nil, nil, fmt.Errorf("dpfw: Alpha = %v outside [1e-12, 1e12]", s.Alpha)
	}
	geo, err := shapeGeometry(sh, "dpfw")
	if err != nil {
		return nil, nil, err
	}
	plan := &Plan{Solver: "dpfw", Setting: s.Setting, Params: map[string]float64{
		"k": geo.kParam(), "m": float64(geo.m), "vertices": float64(2 * geo.m), "range": geo.R,
	}}
	fp := &fwPlan{geo: geo, paper: s.Setting == Paper}
	if fp.paper {
		err = s.planPaper(sh, plan, fp)
	} else {
		err = s.planTuned(sh, plan, fp)
	}
	if err != nil {
		return nil, nil, err
	}
	if s.Step != FWStepDefault {
		fp.step = s.Step
	}
	if s.Output != FWOutputDefault {
		fp.output = s.Output
	}
	if fp.step == FWStepConstant && fp.gamma == 0 && fp.T > 0 && fp.alpha > 0 {
		if s.Gamma > 0 {
			fp.gamma = s.Gamma
		} else {
			fp.gamma = min(1, 2*math.Sqrt(fp.alpha/(float64(fp.T)*geo.DInf)))
		}
	}
	plan.Iterations = fp.T
	plan.Params["T"] = float64(fp.T)
	if fp.alpha > 0 {
		plan.Params["alpha"] = fp.alpha
		plan.Params["alpha_ln_k"] = fp.alpha * geo.lnk
	}
	plan.Params["step_harmonic"] = fwBool(fp.step == FWStepHarmonic)
	if fp.step == FWStepConstant {
		plan.Params["gamma"] = fp.gamma
	}
	plan.Params["output"] = float64(fp.output)
	if sh.Model == Factored {
		factoredPlanParams(plan, sh, 1)
	}
	return plan, fp, nil
}

func fwBool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (s *DPFW) planTuned(sh *Shape, plan *Plan, fp *fwPlan) error {
	b := sh.Budget
	ar := sh.Neighbours == AddRemove
	var rho float64
	var err error
	if b.Delta > 0 {
		if rho, err = b.Rho(sh.Conversion); err != nil {
			return err
		}
		plan.Params["rho"] = rho
		label := "dpfw: T exponential-mechanism selections, ε0 = √(8ρ/T) each (ε0²/8 zCDP by bounded range), calibrated to ρ"
		if ar {
			// n̂ first, on its share of ρ; the selections take the rest.
			if plan.count, rho, err = planCountZCDP("dpfw", rho, sh.Unit()); err != nil {
				return err
			}
			plan.Charges = append(plan.Charges, plan.count.charge)
			label = "dpfw: T exponential-mechanism selections, ε0 = √(8ρ'/T) each (ε0²/8 zCDP by bounded range), calibrated to ρ' = ρ less the record count's share"
		}
		// The whole ρ (ρ'): ε0 = CalibrateExponential(ρ, T) makes the T
		// selections cost T·ε0²/8 <= ρ whatever T (which depends on n).
		plan.Charges = append(plan.Charges, privacy.Charge{Label: label, Cost: privacy.ZCDPCost(rho)})
	} else {
		label := "dpfw: T exponential-mechanism selections, ε0 = ε/T each (pure, composed as bounded range)"
		if ar {
			if plan.count, b.Eps, err = planCountPure("dpfw", b.Eps, sh.Unit()); err != nil {
				return err
			}
			plan.Charges = append(plan.Charges, plan.count.charge)
			label = "dpfw: T exponential-mechanism selections, ε0 = ε'/T each (pure, composed as bounded range), ε' = ε less the record count's share"
		}
		plan.Charges = append(plan.Charges, privacy.Charge{Label: label, Cost: privacy.BoundedRangeCost(b.Eps)})
	}
	if plan.count != nil {
		plan.count.params(plan)
	}
	fp.step, fp.output = FWStepHarmonic, FWOutputLast
	fp.T, fp.alpha = s.T, s.Alpha
	if sh.N == 0 && fp.T == 0 {
		plan.Warnings = append(plan.Warnings, "dpfw: T and α depend on n, unknown at plan time")
		return nil
	}
	if sh.N > 0 {
		eta := fwEta(unitCount(sh), b, rho)
		plan.Params["eta"] = eta
		if fp.T == 0 {
			fp.T = FWTunedT(eta, fp.geo.m)
			if t := fwTunedTRaw(eta, fp.geo.m); t > FWTunedTMax {
				plan.Warnings = append(plan.Warnings, fmt.Sprintf("dpfw: T capped %.0f -> %d (runtime)", t, fp.T))
			}
		}
		if fp.alpha == 0 {
			fp.alpha = fwTunedAlphaLn(eta, fp.geo.lnk)
		}
	}
	if b.Delta > 0 {
		fp.eps0 = privacy.CalibrateExponential(rho, fp.T)
	} else {
		fp.eps0 = fwCalibratePure(b.Eps, fp.T)
	}
	plan.Params["eps0"] = fp.eps0
	plan.Params["rho_spent"] = privacy.ExponentialMechanismCost(fp.eps0).Times(fp.T).Rho
	if sh.N > 0 {
		fp.sens = fp.geo.scoreSensitivity(sh, sh.N)
		plan.Params["sensitivity"] = fp.sens
		// The Gumbel noise added to each score, in answer units.
		plan.Params["gumbel_scale"] = 2 * fp.sens / fp.eps0
	}
	return nil
}

// unitCount is the public record count in units: N/K, the n of the rules
// that were fitted on one record per unit (n itself under replace-one,
// where K = 1; n̂/K under add/remove, where every sensitivity is K/n̂ times
// that of a fraction).
func unitCount(sh *Shape) float64 {
	return float64(sh.N) / float64(sh.Unit())
}

// fwEta is the public signal-to-noise scale of a budget on n records: 1/η
// is the standard deviation of one counting query's answer (a fraction of
// n) measured with the whole budget, η = n√(2ρ) (Gaussian, ρ-zCDP), or
// nε/√2 for a pure budget (Laplace). Under add/remove neighbours with units
// of K records the callers pass n̂/K (unitCount) and the solver's own ρ or
// ε: a count's sensitivity is then K.
func fwEta(n float64, b privacy.Budget, rho float64) float64 {
	if b.Delta > 0 {
		return n * math.Sqrt(2*rho)
	}
	return n * b.Eps / math.Sqrt2
}

// FWTunedTMax caps the Tuned setting's T (runtime; it binds at about
// ε = 13 on adult-reduced).
const FWTunedTMax = 2000

func fwTunedTRaw(eta float64, m int) float64 {
	return math.Pow(10.3*eta/math.Log(float64(2*m)), 2.0/3)
}

// FWTunedT is the Tuned setting's number of iterations for the public
// signal-to-noise scale eta (see fwEta) and m queries:
//
//	T = (10.3·η/ln 2m)^{2/3}, between 20 and FWTunedTMax.
//
// The Frank-Wolfe analysis with exponential-mechanism noise balances an
// optimisation term ∝ 1/T against the selection noise ∝ √T·ln(2m)/η, so T
// ∝ (η/ln 2m)^{2/3}; the constant (10.3 = ln 2m on adult-reduced) is
// fitted on adult-reduced at ε = 0.1 ... 3, δ = 1e-9 (docs/BENCHMARKS.md,
// "### dpfw"). For a no-noise run (η = +Inf) it is FWTunedTMax.
func FWTunedT(eta float64, m int) int {
	t := fwTunedTRaw(eta, m)
	if math.IsNaN(t) || t > FWTunedTMax {
		return FWTunedTMax
	}
	return max(20, int(math.Round(t)))
}

// FWTunedAlpha is the Tuned setting's entropy weight for the public
// signal-to-noise scale eta over a universe of k cells:
//
//	α·ln k = 4·η^{−1/3}, clamped to [0.1, 1].
//
// α·ln k bounds the bias the entropy adds (seed 001, Theorem 2); less noise
// affords a smaller bias. The law and its constant are fitted on
// adult-reduced at ε = 0.1 ... 3 (docs/BENCHMARKS.md, "### dpfw").
func FWTunedAlpha(eta float64, k int) float64 {
	return fwTunedAlphaLn(eta, math.Log(float64(k)))
}

// fwTunedAlphaLn is FWTunedAlpha for a universe of e^lnk cells.
func fwTunedAlphaLn(eta, lnk float64) float64 {
	a := 4 * math.Pow(eta, -1.0/3)
	return min(1, max(0.1, a)) / lnk
}

// fwCalibratePure returns the largest ε0 such that steps exponential
// mechanisms compose (by adding ε) to at most eps as the ledger counts them.
func fwCalibratePure(eps float64, steps int) float64 {
	e := eps / float64(steps)
	for e > 0 && privacy.ExponentialMechanismCost(e).Times(steps).Eps > eps {
		e = math.Nextafter(e, 0)
	}
	return e
}

// fwPaperFormulas are seed 001's printed parameters (Algorithm 1, L129–131,
// and α* of eq. (7), L183) for T iterations, with D_1, D_∞ and |Q| = 2m
// taken from the workload.
type fwPaperFormulas struct {
	Alpha    float64 // eq. (7)
	T        float64 // L129, with D_1^{3/2}
	TProof   float64 // the proof's T (L650), with D_∞^{3/2}
	Gamma    float64 // L130 at the T used
	Lambda   float64 // L131 at the T used
	EpsTilde float64 // ε/(4√(2T ln(1/δ))) at the T used (L580)
}

// fwPaper evaluates the printed formulas for n records (n̂/K under
// add/remove: unitCount); tUsed is the (capped) number of iterations (0:
// the formula's T).
func fwPaper(n, eps, delta float64, geo fwGeometry, alpha float64, tUsed int) fwPaperFormulas {
	l := math.Log(1 / delta)
	q := float64(2 * geo.m) // |Q|, with negations
	en := eps * n
	var f fwPaperFormulas
	f.Alpha = math.Pow(l, 0.2) * math.Pow(math.Log(q), 0.4) / (math.Pow(en, 0.4) * math.Pow(geo.lnk, 0.8))
	if alpha == 0 {
		alpha = f.Alpha
	}
	den := math.Sqrt(32*alpha*l) * math.Log(2*q)
	f.T = math.Pow(geo.D1, 1.5) * en / den
	f.TProof = math.Pow(geo.DInf, 1.5) * en / den
	t := float64(tUsed)
	if tUsed == 0 {
		t = f.T
	}
	f.Gamma = 2 * math.Sqrt(alpha/(t*geo.DInf))
	f.Lambda = 4 * geo.D1 * math.Sqrt(2*t*l) / en
	f.EpsTilde = eps / (4 * math.Sqrt(2*t*l))
	return f
}

func (s *DPFW) planPaper(sh *Shape, plan *Plan, fp *fwPlan) error {
	b := sh.Budget
	if b.Delta <= 0 {
		return errors.New("dpfw: the paper setting needs δ > 0 (advanced composition)")
	}
	l := math.Log(1 / b.Delta)
	if b.Eps >= 8*l {
		return fmt.Errorf("dpfw: the paper setting needs ε < 8 ln(1/δ) = %.4g", 8*l)
	}
	label := "dpfw (paper): report-noisy-max selections with Laplace noise, ε̃ each, advanced composition as printed in seed 001 (L561, L580)"
	if sh.Neighbours == AddRemove {
		// n̂ first: a discrete Laplace on its share of ε (pure; the ledger
		// adds it to the paper's (ε', δ) by basic composition). The printed
		// composition runs on the rest, ε', with the whole δ.
		var err error
		if plan.count, b.Eps, err = planCountPure("dpfw (paper)", b.Eps, sh.Unit()); err != nil {
			return err
		}
		plan.Charges = append(plan.Charges, plan.count.charge)
		plan.count.params(plan)
		label += ", on ε' = ε less the record count's share"
	}
	tmax := s.TMax
	if tmax == 0 {
		tmax = FWPaperTMax
	}
	fp.step, fp.output = FWStepConstant, FWOutputUniform
	geo := fp.geo
	plan.Params["D1"], plan.Params["Dinf"], plan.Params["T_max"] = geo.D1, geo.DInf, float64(tmax)
	plan.Params["D1_exact"] = fwBool(geo.D1Exact)
	if !geo.D1Exact {
		plan.Warnings = append(plan.Warnings, "dpfw (paper): D_1 bounds the support of non-marginal queries by the whole universe")
	}
	switch {
	case s.T > 0:
		fp.T = min(s.T, tmax)
	case sh.N == 0:
		fp.T = tmax
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("dpfw (paper): T depends on n, unknown at plan time; at most %d", tmax))
	}
	if sh.N > 0 {
		f := fwPaper(unitCount(sh), b.Eps, b.Delta, geo, s.Alpha, 0)
		fp.alpha = s.Alpha
		if fp.alpha == 0 {
			fp.alpha = f.Alpha
		}
		plan.Params["alpha_star"] = f.Alpha
		plan.Params["T_formula"] = f.T
		plan.Params["T_proof"] = f.TProof
		if s.T == 0 {
			fp.T = tmax
			if f.T < float64(tmax) {
				fp.T = max(1, int(math.Ceil(f.T)))
			}
		}
		if f.T > float64(fp.T) && s.T == 0 {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf(
				"dpfw (paper): T capped %.3g -> %d; γ and λ recomputed from the capped T; the paper's utility theorem no longer applies", f.T, fp.T))
		}
	} else if s.Alpha > 0 {
		fp.alpha = s.Alpha
	}
	epsT, err := privacy.CalibratePaper(b.Eps, b.Delta, fp.T)
	if err != nil {
		return fmt.Errorf("dpfw (paper): %w", err)
	}
	claim, err := privacy.PaperComposition(epsT, fp.T, b.Delta)
	if err != nil {
		return fmt.Errorf("dpfw (paper): %w", err)
	}
	fp.eps0 = epsT
	plan.Params["eps_tilde"] = epsT
	plan.Params["eps_paper_claim"] = claim
	// The charge is the whole (ε, δ): ε̃ is calibrated so that the printed
	// composition of the T steps stays within it, whatever T (which depends
	// on n) turns out to be.
	plan.Charges = append(plan.Charges, privacy.Charge{Label: label, Cost: privacy.ApproxCost(b.Eps, b.Delta)})
	if sh.N > 0 {
		f := fwPaper(unitCount(sh), b.Eps, b.Delta, geo, fp.alpha, fp.T)
		fp.gamma = min(1, f.Gamma)
		if s.Gamma > 0 {
			fp.gamma = s.Gamma
		}
		fp.sens = geo.scoreSensitivity(sh, sh.N)
		tight := 2 * fp.sens / epsT // Lap(2Δ/ε̃) is ε̃-DP for non-monotone scores
		fp.lapScale = max(f.Lambda, tight)
		// The tight recomputation: Lap(b) report-noisy-max with non-monotone
		// scores of sensitivity Δ is (2Δ/b)-DP.
		epsStep := 2 * fp.sens / fp.lapScale
		plan.Params["lambda_printed"] = f.Lambda
		plan.Params["lambda_needed"] = tight
		plan.Params["lambda"] = fp.lapScale
		plan.Params["sensitivity"] = fp.sens
		plan.Params["eps_step_true"] = epsStep
		plan.Params["eps_true_advanced"] = privacy.AdvancedComposition(epsStep, fp.T, b.Delta)
		plan.Params["eps_true_zcdp"] = privacy.RhoToEps(privacy.PureCost(epsStep).Times(fp.T).Rho, b.Delta, sh.Conversion)
	}
	return nil
}

// Solve runs DPFW on the problem.
func (s *DPFW) Solve(ctx context.Context, p *Problem) (*Result, error) {
	p, plan, fp, err := s.start(ctx, p)
	if err != nil {
		return nil, err
	}
	if p.Model == Factored {
		return s.solveFactored(ctx, p, plan, fp)
	}
	team := par.NewTeam(0)
	defer team.Close()
	r := newFWRun(p, fp, team, s.noiseScale)
	return runSteps(ctx, p, plan, fp.T, r)
}

// start is Solve up to the first selection (begin): validation, the plan
// and its charge, and under add/remove the noisy count n̂, the plan with
// N = n̂ and the problem normalised by n̂.
func (s *DPFW) start(ctx context.Context, p *Problem) (*Problem, *Plan, *fwPlan, error) {
	check := checkProblem
	if p.Model == Factored {
		check = checkFactoredProblem
	}
	if err := check(p); err != nil {
		return nil, nil, nil, err
	}
	valid := func(fp *fwPlan) error {
		if p.Model != Factored && (p.Op.K() != fp.geo.k || p.Op.M() != fp.geo.m) {
			return fmt.Errorf("dpfw: operator is %d × %d, workload %d × %d", p.Op.M(), p.Op.K(), fp.geo.m, fp.geo.k)
		}
		return nil
	}
	p, plan, fp, err := begin(ctx, p, s.plan, valid)
	if err != nil {
		return nil, nil, nil, err
	}
	if p.noPrivacy && !fp.paper {
		// The test mode without noise: the rules at η = +Inf.
		if s.T == 0 {
			fp.T = FWTunedT(math.Inf(1), fp.geo.m)
		}
		if s.Alpha == 0 {
			fp.alpha = fwTunedAlphaLn(math.Inf(1), fp.geo.lnk)
		}
		plan.Iterations = fp.T
	}
	return p, plan, fp, nil
}

// fwRun is the state of one DPFW solve: buffers allocated once, zero
// allocations per iteration.
type fwRun struct {
	p     *Problem
	fp    *fwPlan
	team  *par.Team
	ex    *fwExp
	phi   []float64 // θ = c·φ = q_t/α, c = ex.c
	e     []float64 // exp(θ − shift), unnormalised D_t
	ans   []float64 // ⟨q_j, e⟩
	score []float64 // 2m signed scores
	m     int
	// shift is an upper bound on max θ for the next pass; exact says it
	// must be recomputed (first pass, or a loose bound).
	shift float64
	exact bool
	// Selection noise (scaled by the test hook).
	sens, lapSens float64
	// The selections and steps so far (public), for the output rule.
	sel  []int
	gam  []float64
	init int // Paper: the signed index of q_0; -1 for q_0 = 0
	em   expSelect
}

func newFWRun(p *Problem, fp *fwPlan, team *par.Team, noiseScale float64) *fwRun {
	k, m := fp.geo.k, fp.geo.m
	r := &fwRun{
		p: p, fp: fp, team: team, m: m,
		phi: make([]float64, k), e: make([]float64, k),
		ans: make([]float64, m), score: make([]float64, 2*m),
		sel: make([]int, 0, fp.T), gam: make([]float64, 0, fp.T),
		exact: true, init: -1,
	}
	r.ex = newFWExp(team, r.phi, r.e)
	if noiseScale == 0 {
		noiseScale = 1
	}
	r.sens = fp.sens * noiseScale
	// ReportNoisyMaxLaplace(NonMonotone) uses scale 2·sens/ε̃: pass the
	// sensitivity that gives lapScale.
	r.lapSens = fp.lapScale * fp.eps0 / 2 * noiseScale
	if fp.paper {
		// q_0: a vertex drawn uniformly (public randomness).
		r.init = int(p.Rand.Uint64N(uint64(2 * m)))
		j, sg := query.Signed(r.init, m)
		p.Op.AddQuery(j, sg/fp.alpha, r.phi)
	}
	return r
}

// gamma returns γ_t.
func (r *fwRun) gamma(t int) float64 { return fwGamma(r.fp, t) }

// step runs iteration t: the scores of D_t, a private selection and the
// update to q_{t+1}. It returns the selected signed vertex and the max
// error of D_t against the data (internal; free: it is the largest
// absolute score).
func (r *fwRun) step(t int) (int, float64) {
	p, fp, m := r.p, r.fp, r.m
	if r.exact {
		r.shift = r.ex.maxPass()
	}
	sum, mx := r.ex.run(r.shift)
	p.Op.Answer(r.e, r.ans)
	inv := 1 / sum
	maxErr := 0.0
	for j, v := range r.ans {
		g := p.Answers[j] - v*inv
		r.score[j], r.score[m+j] = g, -g
		maxErr = max(maxErr, math.Abs(g))
	}
	var s int
	switch {
	case p.noPrivacy:
		s = fwArgmax(r.score)
	case fp.paper:
		s = privacy.ReportNoisyMaxLaplace(p.Rand, r.score, fp.eps0, r.lapSens, privacy.NonMonotone)
	default:
		s = r.em.draw(p.Rand, r.score, fp.eps0, r.sens)
	}
	g := r.gamma(t)
	r.sel = append(r.sel, s)
	r.gam = append(r.gam, g)
	r.add(s, g, mx)
	return s, maxErr
}

// add performs θ ← (1−γ)θ + (γ/α)·v_s, given the exact max mx of θ, and
// sets the shift bound for the next pass.
func (r *fwRun) add(s int, g, mx float64) {
	j, sg := query.Signed(s, r.m)
	lo, hi := r.p.Op.Range(j)
	vmax := max(sg*lo, sg*hi) // the largest value of v_s over the universe
	vmin := min(sg*lo, sg*hi, 0)
	ga := g / r.fp.alpha
	if g >= 1 {
		clear(r.phi)
		r.ex.c = 1
		r.p.Op.AddQuery(j, sg*ga, r.phi)
		r.shift, r.exact = ga*vmax, false
		return
	}
	c := r.ex.c * (1 - g)
	if c < fwMinScale {
		r.ex.c = c
		r.ex.rescale()
		c = 1
	}
	r.ex.c = c
	r.p.Op.AddQuery(j, sg*ga/c, r.phi)
	r.shift = (1-g)*mx + ga*vmax
	// The bound is loose by at most γ(v_max − v_min)/α.
	r.exact = ga*(vmax-vmin) > fwMaxSlack || math.IsInf(r.shift, 0) || math.IsNaN(r.shift)
}

// bound is the a-priori bound reported as the progress objective after t
// iterations (no data): α ln k plus, for the harmonic schedule, the
// Frank-Wolfe bound 2·L·D∞²/(t+2) with smoothness L = 1/α. It is loose; it
// shows progress without reading the data.
func (r *fwRun) bound(t int) float64 {
	fp := r.fp
	b := fp.alpha * fp.geo.lnk
	if fp.step == FWStepHarmonic {
		b += 2 * fp.geo.DInf * fp.geo.DInf / (fp.alpha * float64(t+2))
	}
	return b
}

// output builds q_out from the selections by the output rule and returns
// softmax(q_out/α).
func (r *fwRun) output() []float64 {
	// Weights W_t of the iterates q_0..q_T in q_out.
	r.combine(fwOutputWeights(r.p, r.fp, len(r.sel)))
	r.ex.c = 1
	sum, _ := r.ex.run(r.ex.maxPass())
	fwNormalize(r.team, r.e, r.e, sum)
	return r.e
}

// combine writes θ = Σ_t W_t·q_t/α into φ (and sets c = 1) as a
// combination of the selected vertices, in one Adjoint pass:
// Σ_t W_t·q_t = H_0·q_0 + Σ_s γ_s·H_{s+1}·v_s, where H_T = W_T and H_t = W_t
// + (1 − γ_t)·H_{t+1} (the weight of v_s summed over the iterates it
// enters, each discounted by the steps taken since).
func (r *fwRun) combine(w []float64) {
	y := r.ans
	fwCoefficients(y, w, r.sel, r.gam, r.init, r.m, r.fp.alpha)
	r.p.Op.Adjoint(y, r.phi)
	r.ex.c = 1
}

// fwArgmax returns the index of the largest score (the first on ties): the
// exact counterpart of a private selection, for the no-privacy test mode.
func fwArgmax(x []float64) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// fwCoefficients writes into y (length m) the coefficient of each query in
// Σ_t W_t·q_t/α, the combination of the selected vertices (signed indices
// sel with step sizes gam, and the initial vertex init, or −1): the weight
// of v_s is γ_s·H_{s+1}, with H_T = W_T and H_t = W_t + (1 − γ_t)·H_{t+1}.
func fwCoefficients(y, w []float64, sel []int, gam []float64, init, m int, alpha float64) {
	T := len(sel)
	clear(y)
	h := w[T]
	for s := T - 1; s >= 0; s-- {
		j, sg := query.Signed(sel[s], m)
		y[j] += sg * gam[s] * h / alpha
		h = w[s] + (1-gam[s])*h
	}
	if init >= 0 {
		j, sg := query.Signed(init, m)
		y[j] += sg * h / alpha
	}
}
