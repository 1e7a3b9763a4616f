package solvers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/internal/vec"
	"github.com/dpsynth/synth/privacy"
)

func init() {
	register("dpam", func(s Setting) Solver { return &DPAM{Setting: s} })
}

// DPAM is seed 001's Algorithm 2: accelerated complementary-composite mirror
// descent on the Gaussian-smoothed primal min_D φ_σ(D) + α·H(D), with
// φ_σ(D) = E max_{q ∈ Q∪−Q} ⟨q, P_n − D + ξ⟩, ξ ~ N(0, σ² I_k).
//
// Each iteration t (S_t = η_1 + … + η_t, S_0 = 0):
//
//	D^md  = (S_{t−1}/S_t)·D^ag_t + (η_t/S_t)·D_t
//	G_t   = argmax over the signed workload vertices ±q_j of ⟨q, P_n − D^md + ξ_t⟩
//	θ_{t+1} = (S_{t−1}·ln D_t + η_t·G_t)/(S_{t−1} + α·η_t),  D_{t+1} = softmax(θ_{t+1})
//	D^ag_{t+1} = (S_{t−1}/S_t)·D^ag_t + (η_t/S_t)·D_{t+1}
//
// from D_1 = D^ag_1 = uniform, output D^ag_{T+1}. The prox step is the
// closed form of argmin_D η_t[⟨−G_t, D⟩ + α·H(D)] + S_{t−1}·KL(D‖D_t), with
// two corrections to the printed algorithm (seed001-digest §2): the
// gradient of the max error in D is −G_t (L897 prints +), and α multiplies
// H (L255 and L268 omit it). At t = 1 the step is D_2 = softmax(G_1/α).
// Since ⟨±q_j, P_n⟩ = ±a_j (the exact answers), the oracle's scores are
// ±(a_j + ⟨q_j, ξ_t − D^md⟩): one fused Answer pass per iteration.
//
// The prox step is a convex combination in log space:
// θ_{t+1} = (1 − λ_t)·θ_t + λ_t·G_t/α with λ_t = α·η_t/(S_{t−1} + α·η_t),
// so D_{t+1} = softmax(Σ_τ w_τ G_τ/α) with weights w summing to one: a point
// of the dual hull, like DPFW's iterates. With the paper's slowly growing
// η_t and a small α, λ_t ≈ α/t and the first vertex keeps most of the
// weight; the tuned setting chooses η_t so that λ_t = κ/(t + κ − 1).
//
// Privacy: each iteration is a Gaussian mechanism on the histogram. Given
// the past selections, D^md is public, and the oracle is a post-processing
// of P_n + ξ_t. Under replace-one neighbours with n public, P_n moves by
// (e_z' − e_z)/n, of ℓ2 norm √2/n, so one iteration is ρ_t =
// (√2/n)²/(2σ²) = 1/(nσ)²-zCDP (Bun and Steinke 2016, Proposition 1.6), and
// T iterations compose to T/(nσ)² (adaptive zCDP composition). Tuned
// charges ρ, the whole budget's zCDP equivalent, with σ = √(T/ρ)/n. Paper
// charges the RDP argument of L912–937: T iterations are (β,
// βT/(nσ)²)-RDP, hence (T/(nσ)² + 2√(T·ln(1/δ))/(nσ), δ)-DP at the best β;
// with the printed σ = 4√(T ln(1/δ))/(nε) this is ε/2 + ε²/(16·ln(1/δ)),
// independent of n and T, charged as one (ε, δ) "paper" cost. Under
// add/remove neighbours (the default) n is private: DPAM first spends
// CountShare of its budget on a noisy count n̂ (countPlan: a discrete
// Gaussian of ℓ2 sensitivity K in the Tuned setting, a discrete Laplace of
// ℓ1 sensitivity K, pure, in the Paper one; K = Shape.Unit()), and its
// histogram is P = counts/n̂ with n̂ public: a unit adds or removes at most
// K records, so P moves by at most K/n̂ in ℓ2 (all K in one cell). Every
// formula above then holds with n_eff = √2·n̂/K in place of n (dpamCount:
// the histogram's sensitivity K/n̂ is √2/n_eff), and with the budget less
// n̂'s share: Tuned charges ρ' = ρ − ρ_n, σ = √(T/ρ')/n_eff; Paper charges
// ε'/2 + ε'²/(16·ln(1/δ)) with ε' = ε less n̂'s pure ε, which the ledger
// adds by basic composition. The plan made before any private step (N = 0
// under add/remove) carries every charge; T, σ and α follow n̂. Only the
// selected vertex and a coarse post-processing of the noisy scores
// (Progress) leave the solver; the noise vector itself never does
// (privacy.GaussianVector says why a float sampler is used).
//
// The T noisy histograms P_n + ξ_t average to P_n + N(0, σ²/T) = P_n +
// N(0, 1/(n²ρ)): together they carry no more information than one noisy
// histogram at the same ρ (seed001-digest §3(i)). DPAM therefore cannot
// beat the best post-processing of a single noisy histogram, and a single
// Gaussian measurement of the marginals (the project solver, ℓ2
// sensitivity √(2c)/n for c marginal sets, noise √c·σ_1 per cell) adds
// less noise to a marginal cell than the histogram aggregated into it
// (σ_1·√s for a cell covering s universe cells) whenever s > c: on
// adult-reduced (c = 35) every cell covers 140 to 16,800 universe cells.
// docs/BENCHMARKS.md compares the two.
type DPAM struct {
	// Setting selects the rules for the fields left at zero.
	Setting Setting
	// T is the number of iterations. Zero means the setting's rule: paper
	// ⌈√(ln k/ln(1/δ))·εn/w⌉ (L261), capped at TMax; tuned ⌈4·n√ρ/w⌉,
	// capped at 1,000 (w is the Gaussian width of the signed workload).
	T int
	// TMax caps the paper's T (zero: 10,000), with a warning.
	TMax int
	// Alpha is the entropy weight α. Zero means the setting's rule: paper
	// α* = ln^{1/2}(1/δ)·w^{1/2}/(ln^{3/4}k·√(nε)) (Theorem 5, L298); tuned
	// max(0.005, 0.2·w/(n√ρ)).
	Alpha float64
	// Kappa shapes the tuned step schedule: η_t is chosen so that the prox
	// step gives the new vertex the weight λ_t = κ/(t + κ − 1). Zero means 1
	// (the dual point is the plain average of the selected vertices). The
	// paper setting uses the printed η_t = t + √(4/(ασ)) + 1 (L263).
	Kappa float64
	// WidthSamples is the number of Monte Carlo draws for the Gaussian
	// width w(Q ∪ −Q), estimated from the public workload with a fixed
	// public seed (see GaussianWidth); zero means 256, fewer above
	// k = 390,625 (⌈10^8/k⌉, at least 16).
	WidthSamples int
	// TraceEvery is how often (in iterations) the internal max error of
	// D^ag is computed for the trace (an extra Answer pass); zero means 10,
	// negative never. The last iteration is always traced.
	TraceEvery int

	// wrongSign flips the sign of the prox step (the printed g_t = +G_t),
	// for the test showing that it moves away from the data.
	wrongSign bool
}

// widthSamples is the number of Monte Carlo draws for the Gaussian width:
// the setting, or 256 up to k = 390,625 and then ⌈10^8/k⌉, at least 16,
// so that the estimate costs at most about 10^8 normal draws (a few
// seconds); the rules use w only through T ∝ 1/w and α ∝ w, which a few
// percent of Monte Carlo error does not move.
func (s *DPAM) widthSamples(k int) int {
	if s.WidthSamples > 0 {
		return s.WidthSamples
	}
	return min(dpamWidthSamples, max(16, int(math.Ceil(1e8/float64(k)))))
}

// Name returns "dpam".
func (s *DPAM) Name() string { return "dpam" }

// dpamRun is the derived parameters of one run.
type dpamRun struct {
	plan  *Plan
	T     int
	alpha float64
	sigma float64 // 0 when N is unknown
	eta0  float64 // paper: η_t = t + eta0
	kappa float64 // tuned: λ_t = κ/(t+κ−1)
}

// Plan derives the run's parameters and charges from the public shape.
// Under add/remove neighbours it treats N as unknown (0): n is private.
func (s *DPAM) Plan(sh *Shape) (*Plan, error) {
	r, err := s.derive(publicShape(sh), nil, false)
	if err != nil {
		return nil, err
	}
	return r.plan, nil
}

// derive reads sh.N as the public record count: n under replace-one, the
// noisy count n̂ (or 0) under add/remove.
func (s *DPAM) derive(sh *Shape, op Operator, noPrivacy bool) (*dpamRun, error) {
	if sh.Workload == nil {
		return nil, errors.New("dpam: no workload")
	}
	if err := sh.Budget.Validate(); err != nil {
		return nil, err
	}
	if err := sh.checkUnit("dpam"); err != nil {
		return nil, err
	}
	if sh.Budget.Delta == 0 {
		return nil, fmt.Errorf("dpam: the Gaussian mechanism needs δ > 0 (budget %v): %w", sh.Budget, ErrUnsupported)
	}
	if a := s.Alpha; a != 0 && !(a >= 1e-200 && a <= 1e200) {
		return nil, fmt.Errorf("dpam: alpha = %v: want 0 (the rule) or a value in [1e-200, 1e200]", a)
	}
	if c := s.Kappa; c != 0 && !(c > 0 && c <= 1e200) {
		return nil, fmt.Errorf("dpam: kappa = %v: want 0 (the default) or a positive value up to 1e200", c)
	}
	if s.T < 0 || s.TMax < 0 || s.T > 1e8 {
		return nil, fmt.Errorf("dpam: T = %d, TMax = %d: want 0 (the rule) or a positive count up to 1e8", s.T, s.TMax)
	}
	p := &Plan{Solver: "dpam", Setting: s.Setting, Params: map[string]float64{}}
	run := &dpamRun{plan: p}
	p.Params["k"] = float64(sh.K())
	p.Params["m"] = float64(sh.Workload.M())
	var err error
	if s.Setting == Paper {
		err = s.derivePaper(sh, op, run)
	} else {
		err = s.deriveTuned(sh, op, run, noPrivacy)
	}
	if err != nil || sh.N <= 0 {
		return run, err
	}
	p.Iterations = run.T
	p.Params["T"] = float64(run.T)
	p.Params["sigma"] = run.sigma
	p.Params["alpha"] = run.alpha
	p.Params["alpha_ln_k"] = run.alpha * math.Log(float64(sh.K()))
	if s.Setting == Paper {
		p.Params["eta0"] = run.eta0
	} else {
		p.Params["kappa"] = run.kappa
	}
	return run, nil
}

// dpamCount is the record count n of DPAM's rules and printed formulas,
// chosen so that the histogram's ℓ2 sensitivity is √2/n: n itself under
// replace-one; √2·n̂/K under add/remove, whose histogram counts/n̂ has ℓ2
// sensitivity K/n̂. It also returns that sensitivity.
func dpamCount(sh *Shape) (n, sens float64) {
	if sh.Neighbours != AddRemove {
		n = float64(sh.N)
		return n, math.Sqrt2 / n
	}
	return math.Sqrt2 * float64(sh.N) / float64(sh.Unit()), float64(sh.Unit()) / float64(sh.N)
}

// derivePaper is the Paper setting's charge and, with n, its parameters.
func (s *DPAM) derivePaper(sh *Shape, op Operator, run *dpamRun) error {
	p := run.plan
	eps, delta := sh.Budget.Eps, sh.Budget.Delta
	L := math.Log(1 / delta)
	k := float64(sh.K())
	label := "dpam (paper): T Gaussian-noised histograms, RDP composition and conversion (seed 001, L912-937)"
	if sh.Neighbours == AddRemove {
		// n̂ first: a discrete Laplace on its share of ε (pure; basic
		// composition with the RDP bound's (ε', δ)).
		var err error
		if p.count, eps, err = planCountPure("dpam (paper)", eps, sh.Unit()); err != nil {
			return err
		}
		p.Charges = append(p.Charges, p.count.charge)
		p.count.params(p)
		label += ", on eps' = eps less the record count's share"
	}
	// The RDP argument of L912–937 with σ = 4√(TL)/(nε): nσ = 4√(TL)/ε,
	// so ε_RDP = 2√(TL)/(nσ) + T/(nσ)² = ε/2 + ε²/(16L), for any T and
	// n. Rounded up by a relative 1e-9 to cover the rounding of σ.
	epsRDP := (eps/2 + eps*eps/(16*L)) * (1 + 1e-9)
	p.Charges = append(p.Charges, privacy.Charge{Label: label, Cost: privacy.ApproxCost(epsRDP, delta)})
	p.Params["eps_rdp"] = epsRDP
	p.Params["eps_paper_claim"] = eps
	p.Warnings = append(p.Warnings,
		"dpam (paper): errata applied: the prox step uses g_t = -G_t (L897 prints +G_t) and alpha in front of H (L255, L268 omit it)",
		fmt.Sprintf("dpam (paper): the printed sigma spends eps = %.4g of the budget's %.4g by the paper's own RDP argument", epsRDP, eps))
	if sh.N <= 0 {
		p.Warnings = append(p.Warnings, "dpam (paper): T, sigma and alpha depend on n, unknown at plan time")
		return nil
	}
	n, _ := dpamCount(sh)
	w, err := cachedWidth(sh.Workload, op, s.widthSamples(sh.K()))
	if err != nil {
		return err
	}
	p.Params["width"] = w.W
	p.Params["width_stderr"] = w.StdErr
	p.Params["width_samples"] = float64(w.Samples)
	tf := math.Sqrt(math.Log(k)/L) * eps * n / w.W
	p.Params["T_formula"] = tf
	T := s.T
	if T <= 0 {
		tmax := s.TMax
		if tmax <= 0 {
			tmax = 10000
		}
		T = int(math.Ceil(tf))
		if tf > float64(tmax) {
			p.Warnings = append(p.Warnings, fmt.Sprintf("dpam (paper): T capped %.4g -> %d; the paper's utility theorem no longer applies", tf, tmax))
			T = tmax
		}
		T = max(T, 1)
	}
	run.T = T
	run.sigma = 4 * math.Sqrt(float64(T)*L) / (n * eps)
	run.alpha = s.Alpha
	if run.alpha <= 0 {
		run.alpha = math.Sqrt(L) * math.Sqrt(w.W) / (math.Pow(math.Log(k), 0.75) * math.Sqrt(n*eps))
	}
	run.eta0 = math.Sqrt(4/(run.alpha*run.sigma)) + 1
	if need := w.W * w.W * w.W * L / (eps * math.Pow(math.Log(k), 1.5)); n < need {
		p.Warnings = append(p.Warnings, fmt.Sprintf("dpam (paper): n = %s is below Theorem 5's condition n >= w^3 ln(1/delta)/(eps ln^1.5 k) = %.3g; its bound does not apply", strconv.FormatFloat(n, 'f', -1, 64), need))
	}
	p.Params["smoothing_bias_2sigma_w"] = 2 * run.sigma * w.W
	return nil
}

// deriveTuned is the Tuned setting's charge and, with n, its parameters.
func (s *DPAM) deriveTuned(sh *Shape, op Operator, run *dpamRun, noPrivacy bool) error {
	p := run.plan
	rho, err := sh.Budget.Rho(sh.Conversion)
	if err != nil {
		return err
	}
	p.Params["rho"] = rho
	label := "dpam (tuned): T Gaussian-noised histograms, sigma = sqrt(T/rho)/n, l2 sensitivity sqrt(2)/n, zCDP composition"
	if sh.Neighbours == AddRemove {
		if p.count, rho, err = planCountZCDP("dpam (tuned)", rho, sh.Unit()); err != nil {
			return err
		}
		p.Charges = append(p.Charges, p.count.charge)
		p.count.params(p)
		label = fmt.Sprintf("dpam (tuned): T Gaussian-noised histograms of counts/n̂, sigma = %d·sqrt(T/(2 rho'))/n̂, l2 sensitivity %d/n̂, zCDP composition, rho' = rho less the record count's share", sh.Unit(), sh.Unit())
	}
	p.Charges = append(p.Charges, privacy.Charge{Label: label, Cost: privacy.ZCDPCost(rho)})
	if noPrivacy {
		rho = math.Inf(1)
	}
	run.kappa = s.Kappa
	if run.kappa <= 0 {
		run.kappa = dpamKappa
	}
	if sh.N <= 0 {
		p.Warnings = append(p.Warnings, "dpam (tuned): T, sigma and alpha depend on n, unknown at plan time")
		return nil
	}
	n, sens := dpamCount(sh)
	T, alpha := s.T, s.Alpha
	if T <= 0 || alpha <= 0 {
		w, err := cachedWidth(sh.Workload, op, s.widthSamples(sh.K()))
		if err != nil {
			return err
		}
		p.Params["width"] = w.W
		p.Params["width_stderr"] = w.StdErr
		snr := n * math.Sqrt(rho) / w.W
		p.Params["snr"] = snr
		if T <= 0 {
			T = tunedDPAMT(snr)
		}
		if alpha <= 0 {
			alpha = tunedDPAMAlpha(snr)
		}
	}
	run.T, run.alpha = T, alpha
	if !math.IsInf(rho, 1) {
		run.sigma = privacy.CalibrateGaussian(rho, T, sens)
	}
	if sh.Neighbours == AddRemove {
		p.Params["sensitivity"] = sens
	}
	return nil
}

// Tuned rules: data-independent functions of s = n·√ρ/w, the ratio of
// the signal scale to the oracle's noise in query units (one histogram with
// the whole budget has noise σ_1 = 1/(n√ρ) per cell, and σ_1·w is the
// expected largest of its workload errors). docs/BENCHMARKS.md "### dpam"
// has the evidence. ρ = +Inf is the no-privacy limit (s = +Inf).
const (
	dpamTPerS        = 4     // T = ⌈4·s⌉ ...
	dpamTMax         = 1000  // ... capped: the no-privacy T
	dpamAlphaS       = 0.2   // α = 0.2/s ...
	dpamAlphaMin     = 0.005 // ... at least this: the no-privacy α
	dpamKappa        = 1     // λ_t = 1/t: the dual point averages the vertices
	dpamWidthSamples = 256
)

func tunedDPAMT(s float64) int {
	if math.IsInf(s, 1) || s*dpamTPerS >= dpamTMax {
		return dpamTMax
	}
	return max(1, int(math.Ceil(dpamTPerS*s)))
}

func tunedDPAMAlpha(s float64) float64 {
	return max(dpamAlphaMin, dpamAlphaS/s)
}

// schedule returns, for iteration t (1-based), r_t = η_t/S_t (the weight
// of the new point in D^md and D^ag) and λ_t = α·η_t/(S_{t−1} + α·η_t)
// (its weight in the prox step). sPrev carries S_{t−1} for the paper's
// schedule.
func (r *dpamRun) schedule(t int, sPrev *float64) (rt, lambda float64) {
	if t == 1 {
		if r.kappa == 0 {
			*sPrev = 1 + r.eta0
		}
		return 1, 1
	}
	if r.kappa == 0 { // paper: η_t = t + eta0
		eta := float64(t) + r.eta0
		s := *sPrev + eta
		rt = eta / s
		lambda = r.alpha * eta / (*sPrev + r.alpha*eta)
		*sPrev = s
		return rt, lambda
	}
	// Tuned: λ_t = κ/(t+κ−1), and η_t = λ_t S_{t−1}/(α(1−λ_t)) gives
	// r_t = η_t/(S_{t−1}+η_t) = λ_t/(α(1−λ_t) + λ_t).
	lambda = r.kappa / (float64(t) + r.kappa - 1)
	if lambda >= 1 {
		return 1, 1
	}
	rt = lambda / (r.alpha*(1-lambda) + lambda)
	return rt, lambda
}

// dpamPass is the per-cell work of one iteration, run on a par.Team.
type dpamPass struct {
	phase int
	// Phase 0 (mix): ag ← ag·agOld + e·agNew (skipped when agNew = 0),
	// then v ← v − (ag·mdAg + e·mdNew) if noisy, else v ← −(…).
	agOld, agNew, mdAg, mdNew float64
	noisy                     bool
	// Phase 1 (exp): e ← exp(sc·φ − shift), with per-worker sums and maxima
	// of sc·φ.
	sc, shift     float64
	phi, e, ag, v []float64
	sum, mx       []float64
	tmp           [][]float64 // per-worker block of sc·φ
}

const dpamBlock = 2048

func (j *dpamPass) Run(w, lo, hi int) {
	switch j.phase {
	case 0:
		ag, e, v := j.ag[lo:hi], j.e[lo:hi], j.v[lo:hi]
		if j.agNew != 0 {
			for i := range ag {
				ag[i] = ag[i]*j.agOld + e[i]*j.agNew
			}
		}
		if j.noisy {
			for i := range v {
				v[i] -= ag[i]*j.mdAg + e[i]*j.mdNew
			}
		} else {
			for i := range v {
				v[i] = -(ag[i]*j.mdAg + e[i]*j.mdNew)
			}
		}
	case 1:
		s, mx := 0.0, math.Inf(-1)
		tmp := j.tmp[w]
		for b := lo; b < hi; b += dpamBlock {
			ph := j.phi[b:min(b+dpamBlock, hi)]
			th := tmp[:len(ph)]
			for i, x := range ph {
				th[i] = x * j.sc
				mx = max(mx, th[i])
			}
			s += vec.ExpShiftSum(j.e[b:b+len(th)], th, j.shift)
		}
		j.sum[w], j.mx[w] = s, mx
	}
}

// dpamState is one run in progress: Solve is newDPAMState, T calls of
// step and finish. The benchmarks time step alone.
type dpamState struct {
	run       *dpamRun
	p         *Problem
	team      *par.Team
	pass      dpamPass
	phi, e    []float64 // D_t = softmax(sc·φ) = e·invZ
	ag, v, u  []float64 // D^ag_t (pending the last update), scratch k, scratch m
	sc        float64   // θ_t = sc·φ
	invZ      float64
	thetaMax  float64 // max θ_t
	sigma     float64 // 0 without noise
	sPrev     float64 // S_{t−1} (paper schedule)
	prevR     float64 // r_{t−1}: the pending aggregation of D_t into D^ag
	wrongSign bool
	trace     int // TraceEvery
	start     time.Time
	res       *Result
}

func newDPAMState(run *dpamRun, p *Problem, traceEvery int, wrongSign bool) *dpamState {
	k, m := p.Op.K(), p.Op.M()
	team := par.NewTeam(0)
	st := &dpamState{
		run: run, p: p, team: team,
		phi: make([]float64, k), e: make([]float64, k), ag: make([]float64, k),
		v: make([]float64, k), u: make([]float64, m),
		sc: 1, invZ: 1 / float64(k), sigma: run.sigma, wrongSign: wrongSign,
		trace: traceEvery, start: time.Now(),
		res: &Result{Plan: run.plan, Trace: make([]Step, 0, run.T)},
	}
	if p.noPrivacy {
		st.sigma = 0
	}
	if st.trace == 0 {
		st.trace = 10
	}
	st.pass = dpamPass{phi: st.phi, e: st.e, ag: st.ag, v: st.v,
		sum: make([]float64, team.Workers()), mx: make([]float64, team.Workers())}
	for range team.Workers() {
		st.pass.tmp = append(st.pass.tmp, make([]float64, dpamBlock))
	}
	for i := range st.e {
		st.e[i] = 1
		st.ag[i] = 1 / float64(k)
	}
	return st
}

// step runs iteration t (1-based).
func (st *dpamState) step(t int) {
	p, pass, m := st.p, &st.pass, len(st.u)
	rt, lambda := st.run.schedule(t, &st.sPrev)
	// v = ξ_t − D^md, folding in the pending update of D^ag.
	if st.sigma > 0 {
		privacy.GaussianVector(p.Rand, st.sigma, st.v)
	}
	pass.phase = 0
	pass.agOld, pass.agNew = 1-st.prevR, st.prevR*st.invZ
	pass.mdAg, pass.mdNew = 1-rt, rt*st.invZ
	pass.noisy = st.sigma > 0
	st.team.For(len(st.v), dpamBlock, pass)
	if t > 1 && st.trace > 0 && (t-1)%st.trace == 0 && t-2 < len(st.res.Trace) {
		st.res.Trace[t-2].MaxError = maxAbsError(p.Op, st.ag, p.Answers, st.u)
	}
	// Oracle: the signed vertex maximising ±(a_j + ⟨q_j, ξ − D^md⟩).
	p.Op.Answer(st.v, st.u)
	best, bestV := 0, math.Inf(-1)
	for j, x := range st.u {
		if sc := math.Abs(p.Answers[j] + x); sc > bestV {
			best, bestV = j, sc
		}
	}
	sign := 1.0
	if p.Answers[best]+st.u[best] < 0 {
		sign = -1
	}
	selected := best
	if sign < 0 {
		selected += m
	}
	// Prox: θ_{t+1} = (1−λ)·θ_t + (λ/α)·G_t with G_t = sign·q_best, kept as
	// θ = sc·φ so that only q_best's support is touched.
	step := sign * lambda / st.run.alpha
	if st.wrongSign {
		step = -step
	}
	c := 1 - lambda
	if c <= 0 {
		clear(st.phi)
		st.sc = 1
	} else {
		st.sc *= c
		if st.sc < 1e-200 || math.Abs(step/st.sc) > 1e250 {
			vec.Scale(st.phi, st.sc)
			st.sc = 1
		}
	}
	p.Op.AddQuery(best, step/st.sc, st.phi)
	lo, hi := p.Op.Range(best)
	pass.phase = 1
	pass.sc = st.sc
	pass.shift = max(c, 0)*st.thetaMax + max(step*lo, step*hi) // >= max θ_{t+1}
	mx := st.expPass()
	if pass.shift-mx > 600 { // the bound was loose: redo from the true max
		pass.shift = mx
		st.expPass()
	}
	st.thetaMax = mx
	st.invZ = 1 / sumOf(pass.sum)
	st.prevR = rt
	if len(st.res.Trace) < cap(st.res.Trace) {
		st.res.Trace = append(st.res.Trace, Step{Iter: t, Selected: selected, MaxError: math.NaN(), Elapsed: time.Since(st.start)})
	}
	if p.Progress != nil {
		// The noisy oracle value max ⟨q, P_n − D^md + ξ_t⟩, a
		// post-processing of the Gaussian mechanism, rounded to 3 decimals
		// so that it shows no low-order bits of the float noise.
		p.Progress(Progress{Iter: t, Total: st.run.T, Objective: math.Round(bestV*1e3) / 1e3, Elapsed: time.Since(st.start)})
	}
}

// expPass runs phase 1 and returns max θ_{t+1}.
func (st *dpamState) expPass() float64 {
	pass := &st.pass
	for i := range pass.mx {
		pass.sum[i], pass.mx[i] = 0, math.Inf(-1)
	}
	st.team.For(len(st.phi), dpamBlock, pass)
	mx := math.Inf(-1)
	for _, x := range pass.mx {
		mx = max(mx, x)
	}
	return mx
}

// finish folds D_{T+1} into D^ag and returns D^ag_{T+1}.
func (st *dpamState) finish() []float64 {
	pass := &st.pass
	pass.phase = 0
	pass.agOld, pass.agNew = 1-st.prevR, st.prevR*st.invZ
	pass.mdAg, pass.mdNew, pass.noisy = 0, 0, false
	st.team.For(len(st.ag), dpamBlock, pass)
	normalize(st.ag)
	if n := len(st.res.Trace); n > 0 && st.trace >= 0 {
		st.res.Trace[n-1].MaxError = maxAbsError(st.p.Op, st.ag, st.p.Answers, st.u)
	}
	return st.ag
}

// Solve runs DPAM. It charges the plan before the first noisy histogram.
func (s *DPAM) Solve(ctx context.Context, p *Problem) (*Result, error) {
	if err := checkProblem(p); err != nil {
		return nil, err
	}
	derive := func(sh *Shape) (*Plan, *dpamRun, error) {
		r, err := s.derive(sh, p.Op, p.noPrivacy)
		if err != nil {
			return nil, nil, err
		}
		return r.plan, r, nil
	}
	p, _, run, err := begin(ctx, p, derive, nil)
	if err != nil {
		return nil, err
	}
	st := newDPAMState(run, p, s.TraceEvery, s.wrongSign)
	defer st.team.Close()
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
	return st.res, nil
}

func sumOf(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// normalize rescales d to sum to one.
func normalize(d []float64) {
	vec.Scale(d, 1/sumOf(d))
}

// maxAbsError is the workload max error of d against the answers
// (internal: computed on the private data). ans is scratch of length M.
func maxAbsError(op Operator, d, answers, ans []float64) float64 {
	op.Answer(d, ans)
	mx := 0.0
	for j, v := range ans {
		mx = max(mx, math.Abs(v-answers[j]))
	}
	return mx
}
