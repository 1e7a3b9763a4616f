package solvers

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

func init() {
	register("smd", func(s Setting) Solver { return &SMD{Setting: s} })
}

// SMD is private entropic stochastic mirror descent for the query-release
// saddle point min_D max_{y ∈ Δ_2m} yᵀA'(P − D), A' = [A; −A] (seed 000,
// Algorithm 1 specialised to linear queries: digest §4 "[derived]
// Solver"). Both players run multiplicative weights:
//
//   - the data player's log-weights a (over the universe) move towards the
//     query player's sampled vertex: a ← a + τ_x·v_{j_t}, x^t = softmax(a);
//   - the query player's log-weights (over the 2m signed queries) are
//     τ_y·S_t, where S accumulates the batch gradients c^t − A'x^t (ascent:
//     the paper prints descent, a sign typo) and c^t are the signed answers
//     on the t-th batch of B = ⌊n/T⌋ records; j_t is drawn from
//     softmax(τ_y·S_t), the exponential mechanism.
//
// The output is the average x̄ of the data player's iterates x^1..x^{T+1}.
// Records are assigned to disjoint batches by a uniformly random
// permutation (data-independent; the n − T·B leftovers are unused). The
// draw at step t uses the batches 1..t, so every one of the T draws reads
// data, and x^{T+1} is the last iterate that uses a draw. The batch answers
// are scattered from each record's column of A (stride arithmetic for
// marginal cells), so a step costs O(B·#sets), not O(m).
//
// In the package's no-privacy test mode each draw is replaced by the
// argmax of its scores (the exponential mechanism as ε' → ∞) and each batch
// by the whole data, with the Tuned rules taken at η = +Inf.
//
// The zero value is the Tuned setting with its documented defaults:
//
//   - Tuned: zCDP accounting; T = SMDTunedT(η, m) draws with η = n√(2ρ)
//     the budget's public signal-to-noise scale; the per-draw ε' =
//     CalibrateExponential(ρ, T), τ_y = ε'·B/(2R) (all the budget goes to
//     the query player's draws), τ_x = SMDTunedTauX(k, T). Rules chosen by
//     evidence on adult-reduced (docs/BENCHMARKS.md, "### smd").
//   - Paper: T = min(n, ⌈nε/√(ℓ ln(1/δ))⌉) with ℓ = ln k + ln 2m (the
//     L2 = 0 case of L386–390, digest §2), τ_x = √(ln k/T), and τ_y the
//     smaller of √(ln 2m/T)/2 and the exact privacy cap
//     Bε/(4R√(2T ln(1/δ))); fully adaptive composition (Cor 3.6), an Approx
//     charge of the whole (ε, δ); needs ε < 8 ln(1/δ).
//
// Privacy: under replace-one neighbours with n public, replacing one
// record changes the answers of exactly one batch, so every coordinate of
// S moves by at most R/B (R = max_j range of q_j; the batches are disjoint
// and A'x^s is a function of earlier draws), and the draw ∝ exp(τ_y·S) is
// the exponential mechanism with ε' = 2τ_y·R/B: ε'-DP and ε'-bounded-range,
// hence ε'²/8-zCDP. The scores of q_j and −q_j move oppositely, which the
// factor 2 in ε' covers. T draws compose to T·ε'²/8 ρ (Tuned) or, by Cor
// 3.6, to (ε, δ) when ε' <= ε/(2√(2T ln(1/δ))) (Paper). The data player's
// iterates, their average and the output are post-processing of the
// draws. The query player's weights (S, y) are never released or logged.
// Only ReplaceOne is supported (under add/remove one insertion would shift
// the batches).
//
// On the factored model (Shape.Model = Factored; marginal workloads) the
// plan, charges, batches and draws are the same; a is kept as one table per
// drawn workload set on a junction tree. The average x̄ of log-linear
// models is a mixture, which one junction tree does not hold: the output is
// Result.Mixture, whose T+1 components are rebuilt one at a time from the
// public draws (sampling ⌊n/(T+1)⌋ or ⌈n/(T+1)⌉ rows from each is exact),
// or with Last the model of x^{T+1}. Queries whose set would take the tree
// over the cap are left out of the draw (fiterate.go: a public rule).
type SMD struct {
	Setting Setting
	// T is the number of private draws (and of data batches, B = ⌊n/T⌋);
	// 0: the setting's rule. It is capped at n.
	T int
	// TauX is the data player's step; 0: the setting's rule.
	TauX float64
	// TauY is the query player's step; 0: the largest the privacy budget
	// allows (Tuned) or the paper's rule. A TauY above the privacy cap is an
	// error.
	TauY float64
	// Last outputs the last iterate x^{T+1} instead of the average x̄ (on
	// the factored model: one model instead of a Mixture).
	Last bool

	// noiseScale multiplies the sensitivity the draws are calibrated for (0
	// means 1): a test hook for the neighbour test's under-noised variant.
	noiseScale float64
}

// SMDTMax caps the Tuned setting's T (runtime: each draw costs a pass
// over the universe; it binds at about ε = 8 on adult-reduced).
const SMDTMax = 2000

// Name returns "smd".
func (s *SMD) Name() string { return "smd" }

type smdPlan struct {
	geo        fwGeometry
	T, B       int
	tauX, tauY float64
	eps1       float64 // per-draw ε' = 2τ_y·R/B
}

// Plan computes the run's parameters and privacy charges from the shape.
func (s *SMD) Plan(sh *Shape) (*Plan, error) {
	p, _, err := s.plan(sh)
	return p, err
}

func (s *SMD) plan(sh *Shape) (*Plan, *smdPlan, error) {
	if sh.Workload == nil {
		return nil, nil, errors.New("smd: no workload")
	}
	b := sh.Budget
	if err := b.Validate(); err != nil {
		return nil, nil, err
	}
	if sh.Neighbours != ReplaceOne {
		return nil, nil, fmt.Errorf("smd: neighbours %q: %w (the batches need n public)", sh.Neighbours, ErrUnsupported)
	}
	if s.T < 0 || !(s.TauX >= 0) || !(s.TauY >= 0) || math.IsInf(s.TauX, 0) || math.IsInf(s.TauY, 0) || s.TauX > 1e12 || s.TauY > 1e12 {
		return nil, nil, fmt.Errorf("smd: invalid settings T = %d, TauX = %v, TauY = %v", s.T, s.TauX, s.TauY)
	}
	geo, err := shapeGeometry(sh, "smd")
	if err != nil {
		return nil, nil, err
	}
	R := geo.R
	if R == 0 {
		R = 1
	}
	plan := &Plan{Solver: "smd", Setting: s.Setting, Params: map[string]float64{
		"k": geo.kParam(), "m": float64(geo.m), "vertices": float64(2 * geo.m), "range": R,
	}}
	sp := &smdPlan{geo: geo}
	n := sh.N
	lnk, ln2m := geo.lnk, math.Log(float64(2*geo.m))
	if s.Setting == Paper {
		if b.Delta <= 0 {
			return nil, nil, errors.New("smd: the paper setting needs δ > 0 (advanced composition)")
		}
		l := math.Log(1 / b.Delta)
		if b.Eps >= 8*l {
			return nil, nil, fmt.Errorf("smd: the paper setting needs ε < 8 ln(1/δ) = %.4g (seed 000, Cor 3.6)", 8*l)
		}
		plan.Charges = []privacy.Charge{{
			Label: "smd (paper): exponential-mechanism draws of the query player, fully adaptive composition (seed 000, Cor 3.6)",
			Cost:  privacy.ApproxCost(b.Eps, b.Delta),
		}}
		if n > 0 {
			sp.T = s.T
			if sp.T == 0 {
				sp.T = int(math.Ceil(float64(n) * b.Eps / math.Sqrt((lnk+ln2m)*l)))
			}
			sp.T = max(1, min(sp.T, n))
			sp.B = n / sp.T
			T := float64(sp.T)
			capY := float64(sp.B) * b.Eps / (4 * R * math.Sqrt(2*T*l))
			sp.tauY = min(math.Sqrt(ln2m/T)/2, capY)
			plan.Params["tau_y_cap"] = capY
			if s.TauY > 0 {
				if s.TauY > capY {
					return nil, nil, fmt.Errorf("smd (paper): TauY = %v above the privacy cap %v", s.TauY, capY)
				}
				sp.tauY = s.TauY
			}
			sp.tauX = math.Sqrt(lnk / T)
		}
	} else {
		var rho float64
		if b.Delta > 0 {
			if rho, err = b.Rho(sh.Conversion); err != nil {
				return nil, nil, err
			}
			plan.Params["rho"] = rho
			plan.Charges = []privacy.Charge{{
				Label: "smd: exponential-mechanism draws of the query player, each ε'-DP and ε'²/8 zCDP (bounded range), ε' calibrated to ρ",
				Cost:  privacy.ZCDPCost(rho),
			}}
		} else {
			plan.Charges = []privacy.Charge{{
				Label: "smd: exponential-mechanism draws of the query player, ε' each, composed as bounded range",
				Cost:  privacy.BoundedRangeCost(b.Eps),
			}}
		}
		if n > 0 {
			eta := fwEta(n, b, rho)
			plan.Params["eta"] = eta
			sp.T = s.T
			if sp.T == 0 {
				sp.T = SMDTunedT(eta, geo.m)
			}
			sp.T = max(1, min(sp.T, n))
			sp.B = n / sp.T
			var eps1 float64
			if b.Delta > 0 {
				eps1 = privacy.CalibrateExponential(rho, sp.T)
			} else {
				eps1 = fwCalibratePure(b.Eps, sp.T)
			}
			capY := eps1 * float64(sp.B) / (2 * R)
			sp.tauY = capY
			plan.Params["tau_y_cap"] = capY
			if s.TauY > 0 {
				if s.TauY > capY {
					return nil, nil, fmt.Errorf("smd: TauY = %v above the privacy cap %v", s.TauY, capY)
				}
				sp.tauY = s.TauY
			}
			sp.tauX = smdTunedTauXLn(geo.lnk, sp.T)
		}
	}
	if sh.Model == Factored {
		factoredPlanParams(plan, sh, 1)
	}
	if n == 0 {
		plan.Warnings = append(plan.Warnings, "smd: T and the step sizes depend on n, unknown at plan time")
		return plan, sp, nil
	}
	if s.TauX > 0 {
		sp.tauX = s.TauX
	}
	sp.eps1 = 2 * sp.tauY * R / float64(sp.B)
	plan.Iterations = sp.T
	plan.Params["T"] = float64(sp.T)
	plan.Params["B"] = float64(sp.B)
	plan.Params["unused_records"] = float64(n - sp.T*sp.B)
	plan.Params["tau_x"] = sp.tauX
	plan.Params["tau_y"] = sp.tauY
	plan.Params["eps_draw"] = sp.eps1
	plan.Params["sensitivity"] = R / float64(sp.B)
	plan.Params["rho_spent"] = privacy.ExponentialMechanismCost(sp.eps1).Times(sp.T).Rho
	return plan, sp, nil
}

// SMDTunedT is the Tuned setting's number of draws for the public
// signal-to-noise scale eta = n√(2ρ) (see fwEta) and m queries: the same
// law as DPFW's, T = (10.3·η/ln 2m)^{2/3}, between 20 and SMDTMax, and at
// most n. On adult-reduced at ε = 0.1 ... 3 (docs/BENCHMARKS.md, "### smd")
// the best T grew like η^{2/3}; the regret-balancing T = n√(8ρ)/(R√ln 2m)
// of the digest's sketch (where the privacy cap on τ_y meets √(ln 2m/T)/2)
// was 5–10 times too large there.
func SMDTunedT(eta float64, m int) int {
	t := fwTunedTRaw(eta, m)
	if math.IsNaN(t) || t > SMDTMax {
		return SMDTMax
	}
	return max(20, int(math.Round(t)))
}

// SMDTunedTauX is the Tuned setting's data-player step for T draws over a
// universe of k cells: 5·√(ln k/T), five times the regret-optimal step of
// a multiplicative-weights player (digest §4): on adult-reduced the
// averaged iterate was best at 5–10 times (docs/BENCHMARKS.md, "### smd").
func SMDTunedTauX(k, T int) float64 {
	return smdTunedTauXLn(math.Log(float64(k)), T)
}

// smdTunedTauXLn is SMDTunedTauX for a universe of e^lnk cells.
func smdTunedTauXLn(lnk float64, T int) float64 {
	return 5 * math.Sqrt(lnk/float64(T))
}

// Solve runs SMD on the problem.
func (s *SMD) Solve(ctx context.Context, p *Problem) (*Result, error) {
	check := checkProblem
	if p.Model == Factored {
		check = checkFactoredProblem
	}
	if err := check(p); err != nil {
		return nil, err
	}
	if p.Counts == nil || p.Counts.Total() != int64(p.N) {
		return nil, errors.New("smd: the problem's counts do not hold its n records")
	}
	plan, sp, err := s.plan(&p.Shape)
	if err != nil {
		return nil, err
	}
	if p.noPrivacy && s.Setting != Paper {
		// The test mode without noise: the rules at η = +Inf.
		if s.T == 0 {
			sp.T = min(SMDTunedT(math.Inf(1), sp.geo.m), p.N)
			sp.B = p.N / sp.T
		}
		if s.TauX == 0 {
			sp.tauX = smdTunedTauXLn(sp.geo.lnk, sp.T)
		}
		plan.Iterations = sp.T
	}
	if p.Model != Factored && (p.Op.K() != sp.geo.k || p.Op.M() != sp.geo.m) {
		return nil, fmt.Errorf("smd: operator is %d × %d, workload %d × %d", p.Op.M(), p.Op.K(), sp.geo.m, sp.geo.k)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := p.charge(plan); err != nil {
		return nil, err
	}
	if p.Model == Factored {
		return s.solveFactored(ctx, p, plan, sp)
	}
	team := par.NewTeam(0)
	defer team.Close()
	r, err := newSMDRun(p, sp, team, s.noiseScale)
	if err != nil {
		return nil, err
	}
	r.last = s.Last
	return runSteps(ctx, p, plan, sp.T, r)
}

// smdRun is the state of one SMD solve.
type smdRun struct {
	p    *Problem
	sp   *smdPlan
	team *par.Team
	ex   *fwExp
	a    []float64 // the data player's log-weights (ex.c stays 1)
	e    []float64 // exp(a − shift): x^t unnormalised
	xbar []float64 // running average of x^1..x^t
	ans  []float64 // ⟨q_j, e⟩
	S    []float64 // 2m cumulative signed gradients (private)
	m    int
	// Records in batch order: entry indices into cols.
	rec []int32
	// Column of A at each distinct record cell, CSR.
	colStart []int
	colIdx   []int32
	colVal   []float64
	// sens is the score sensitivity R/B the draws are calibrated for
	// (scaled by the test hook).
	sens  float64
	shift float64
	exact bool
	sum   float64 // Σe of the last pass
	last  bool    // output x^{T+1}, not the average
	em    expSelect
}

func newSMDRun(p *Problem, sp *smdPlan, team *par.Team, noiseScale float64) (*smdRun, error) {
	k, m := sp.geo.k, sp.geo.m
	r := &smdRun{
		p: p, sp: sp, team: team, m: m,
		a: make([]float64, k), e: make([]float64, k), xbar: make([]float64, k),
		ans: make([]float64, m), S: make([]float64, 2*m), exact: true,
	}
	r.ex = newFWExp(team, r.a, r.e)
	if noiseScale == 0 {
		noiseScale = 1
	}
	R := sp.geo.R
	if R == 0 {
		R = 1
	}
	r.sens = R / float64(sp.B) * noiseScale
	if p.noPrivacy {
		return r, nil
	}
	if err := r.records(p); err != nil {
		return nil, err
	}
	return r, nil
}

// records builds the records' columns of A and their batch order.
func (r *smdRun) records(p *Problem) error {
	if err := r.columns(p.Counts, p.Workload); err != nil {
		return err
	}
	// The records, one entry per record, in a uniformly random order
	// (data-independent: a permutation of positions).
	n := int(p.Counts.Total())
	r.rec = make([]int32, 0, n)
	for i := range p.Counts.Distinct() {
		for range p.Counts.Count(i) {
			r.rec = append(r.rec, int32(i))
		}
	}
	for i := n - 1; i > 0; i-- {
		j := int(p.Rand.Uint64N(uint64(i + 1)))
		r.rec[i], r.rec[j] = r.rec[j], r.rec[i]
	}
	return nil
}

// columns computes, for every distinct cell of the data, the non-zero
// entries of its column of A: one per marginal set by stride arithmetic,
// and the other queries (ranges, predicates) from AnswerCounts on a
// one-record histogram (O(m) per distinct cell, only for such workloads).
func (r *smdRun) columns(c *universe.Counts, w *query.Workload) error {
	dom := w.Domain()
	sets := w.Marginals()
	strides := make([][]int, len(sets))
	inSets := 0
	for si, s := range sets {
		st := make([]int, len(s.Attrs))
		acc := 1
		for p := len(s.Attrs) - 1; p >= 0; p-- {
			st[p] = acc
			acc *= dom.Attr(s.Attrs[p]).Size()
		}
		strides[si] = st
		inSets += s.Cells
	}
	var other []int
	if inSets < r.m {
		for j := range r.m {
			if w.MarginalOf(j) < 0 {
				other = append(other, j)
			}
		}
	}
	nd := c.Distinct()
	r.colStart = make([]int, nd+1)
	r.colIdx = make([]int32, 0, nd*len(sets))
	r.colVal = make([]float64, 0, nd*len(sets))
	var one []float64
	codes := make([]int, dom.Len())
	for i := range nd {
		cs := c.Codes(i)
		for si, s := range sets {
			idx := 0
			for p, a := range s.Attrs {
				idx += int(cs[a]) * strides[si][p]
			}
			r.colIdx = append(r.colIdx, int32(s.Offset+idx))
			r.colVal = append(r.colVal, s.Weight)
		}
		if len(other) > 0 {
			single := universe.NewCounts(dom)
			for a, v := range cs {
				codes[a] = int(v)
			}
			if err := single.Add(codes, 1); err != nil {
				return err
			}
			if one == nil {
				one = make([]float64, r.m)
			}
			w.AnswerCounts(single, one)
			for _, j := range other {
				if one[j] != 0 {
					r.colIdx = append(r.colIdx, int32(j))
					r.colVal = append(r.colVal, one[j])
				}
			}
		}
		r.colStart[i+1] = len(r.colIdx)
	}
	return nil
}

// step runs iteration t: the answers of x^t, the batch gradient, the
// private draw j_t and the data player's step. It returns j_t and the max
// error of x^t against the data (internal).
func (r *smdRun) step(t int) (int, float64) {
	p, sp, m := r.p, r.sp, r.m
	if r.exact {
		r.shift = r.ex.maxPass()
	}
	// Add x^{t−1} (still in e) to the average while computing x^t.
	if t > 0 && !r.last {
		r.ex.acc, r.ex.accW = r.xbar, 1/(float64(sp.T+1)*r.sum)
	}
	sum, mx := r.ex.run(r.shift)
	r.ex.acc = nil
	r.sum = sum
	p.Op.Answer(r.e, r.ans)
	inv := 1 / sum
	maxErr := 0.0
	S := r.S
	for j, v := range r.ans {
		x := v * inv
		maxErr = max(maxErr, math.Abs(p.Answers[j]-x))
		S[j] -= x
		S[m+j] += x
	}
	var s int
	if p.noPrivacy {
		// The exact counterparts: the full data's gradient instead of a
		// batch's, and the argmax of the scores instead of a draw (the
		// exponential mechanism as ε' → ∞).
		for j, v := range p.Answers {
			S[j] += v
			S[m+j] -= v
		}
		s = fwArgmax(S)
	} else {
		r.addBatch(t)
		// The draw ∝ exp(τ_y·S) is the exponential mechanism with ε' =
		// 2τ_y·R/B and Δ = R/B (the test hook scales Δ only).
		s = r.em.draw(p.Rand, S, sp.eps1, r.sens)
	}
	j, sg := query.Signed(s, m)
	lo, hi := p.Op.Range(j)
	p.Op.AddQuery(j, sg*sp.tauX, r.a)
	r.shift = mx + sp.tauX*max(sg*lo, sg*hi)
	r.exact = sp.tauX*(hi-lo) > fwMaxSlack || math.IsInf(r.shift, 0) || math.IsNaN(r.shift)
	return s, maxErr
}

// addBatch adds the t-th batch's signed answers c^t to S: each record adds
// its column / B.
func (r *smdRun) addBatch(t int) {
	B, S, m := r.sp.B, r.S, int32(r.m)
	bInv := 1 / float64(B)
	for _, e := range r.rec[t*B : (t+1)*B] {
		for i := r.colStart[e]; i < r.colStart[e+1]; i++ {
			v := r.colVal[i] * bInv
			j := r.colIdx[i]
			S[j] += v
			S[m+j] -= v
		}
	}
}

// bound is the a-priori regret bound of the two multiplicative-weights
// players after t steps, ln k/(τ_x t) + τ_x + ln 2m/(τ_y t) + τ_y
// (digest §4, utility sketch; data-free), reported as the progress
// objective.
func (r *smdRun) bound(t int) float64 {
	sp := r.sp
	f := float64(t)
	return sp.geo.lnk/(sp.tauX*f) + sp.tauX + math.Log(float64(2*r.m))/(sp.tauY*f) + sp.tauY
}

// output finishes the average x̄ of x^1..x^{T+1} and returns it (or
// x^{T+1} with Last).
func (r *smdRun) output() []float64 {
	w := 1 / float64(r.sp.T+1)
	if r.exact {
		r.shift = r.ex.maxPass()
	}
	if r.last {
		sum, _ := r.ex.run(r.shift)
		fwNormalize(r.team, r.e, r.e, sum)
		return r.e
	}
	r.ex.acc, r.ex.accW = r.xbar, w/r.sum
	sum, _ := r.ex.run(r.shift)
	r.ex.acc = nil
	a := w / sum
	tot := 0.0
	for i, v := range r.e {
		r.xbar[i] += a * v
		tot += r.xbar[i]
	}
	fwNormalize(r.team, r.xbar, r.xbar, tot)
	return r.xbar
}
