package solvers

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
)

func relClose(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Abs(want)
}

// TestFWGeometryAdultReduced checks the workload geometry against the
// digest's adult-reduced figures (seed001-digest.md §4): m = 14,955, D_1 =
// 33,600 (a cell of the 5×2×2 marginal covers 16,800 universe cells), D_∞ = 2.
func TestFWGeometryAdultReduced(t *testing.T) {
	g, err := newFWGeometry(adultReduced(t).wl)
	if err != nil {
		t.Fatal(err)
	}
	if g.k != 336000 || g.m != 14955 || g.D1 != 33600 || g.DInf != 2 || g.R != 1 || !g.D1Exact {
		t.Errorf("geometry = %+v, want k 336000, m 14955, D1 33600, DInf 2, R 1, exact", g)
	}
}

// TestFWPaperFormulas evaluates the printed formulas on adult-reduced and
// compares them with the digest's table (§4), which rounds to 2–3 digits.
func TestFWPaperFormulas(t *testing.T) {
	g, err := newFWGeometry(adultReduced(t).wl)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		eps                                       float64
		alpha, T, gamma, lambda, epsTilde, tProof float64
	}{
		{0.1, 0.0204, 7.4e8, 7.4e-6, 4.8e6, 1.4e-7, 342},
		{1, 0.0081, 1.18e10, 1.2e-6, 1.9e6, 3.6e-7, 5414},
	}
	for _, tt := range tests {
		f := fwPaper(48842, tt.eps, 1e-9, g, 0, 0)
		for _, c := range []struct {
			name      string
			got, want float64
			tol       float64
		}{
			{"α*", f.Alpha, tt.alpha, 0.01},
			{"T", f.T, tt.T, 0.01},
			{"γ", f.Gamma, tt.gamma, 0.03},
			{"λ", f.Lambda, tt.lambda, 0.03},
			{"ε̃", f.EpsTilde, tt.epsTilde, 0.03},
			{"T (proof)", f.TProof, tt.tProof, 0.002},
		} {
			if !relClose(c.got, c.want, c.tol) {
				t.Errorf("ε = %v: %s = %.4g, want %.4g (digest §4)", tt.eps, c.name, c.got, c.want)
			}
		}
	}
}

func TestDPFWPlanPaper(t *testing.T) {
	fx := adultReduced(t)
	sh := &Shape{Neighbours: ReplaceOne, Budget: privacy.Budget{Eps: 1, Delta: 1e-9}, N: 48842, Workload: fx.wl}
	plan, err := (&DPFW{Setting: Paper}).Plan(sh)
	if err != nil {
		t.Fatal(err)
	}
	P := plan.Params
	if plan.Iterations != FWPaperTMax || P["T"] != FWPaperTMax {
		t.Errorf("T = %d, want the cap %d", plan.Iterations, FWPaperTMax)
	}
	if len(plan.Warnings) == 0 || !strings.Contains(plan.Warnings[0], "T capped 1.18e+10 -> 10000") {
		t.Errorf("warnings = %q, want the cap", plan.Warnings)
	}
	// γ, λ and ε̃ recomputed from the capped T.
	l := math.Log(1e9)
	epsT := 1 / (4 * math.Sqrt(2*1e4*l))
	lambda := 4 * 33600 * math.Sqrt(2*1e4*l) / 48842
	sens := 1.0 / 48842
	for _, c := range []struct {
		key  string
		want float64
	}{
		{"eps_tilde", epsT},
		{"lambda_printed", lambda},
		{"lambda_needed", 2 * sens / epsT},
		{"lambda", lambda},
		{"gamma", 2 * math.Sqrt(P["alpha_star"]/(1e4*2))},
		{"eps_step_true", 2 * sens / lambda},
		{"eps_paper_claim", 1},
	} {
		if !relClose(P[c.key], c.want, 1e-6) {
			t.Errorf("%s = %.6g, want %.6g", c.key, P[c.key], c.want)
		}
	}
	if len(plan.Charges) != 1 || plan.Charges[0].Kind != privacy.Approx || plan.Charges[0].Eps != 1 || plan.Charges[0].Delta != 1e-9 {
		t.Errorf("charges = %v, want one approx (1, 1e-9)", plan.Charges)
	}
	// The plan at N unknown: T at the cap, same charges.
	p0, err := (&DPFW{Setting: Paper}).Plan(&Shape{Neighbours: ReplaceOne, Budget: sh.Budget, Workload: fx.wl})
	if err != nil || p0.Iterations != FWPaperTMax || len(p0.Warnings) == 0 {
		t.Errorf("plan with N unknown: %v, iterations %d, warnings %q", err, p0.Iterations, p0.Warnings)
	}
}

func TestDPFWPlanTuned(t *testing.T) {
	fx := adultReduced(t)
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	plan, err := (&DPFW{}).Plan(&Shape{Neighbours: ReplaceOne, Budget: b, N: 48842, Workload: fx.wl})
	if err != nil {
		t.Fatal(err)
	}
	rho, _ := b.Rho(privacy.Tight)
	eta := 48842 * math.Sqrt(2*rho)
	T := int(math.Round(math.Pow(eta, 2.0/3))) // ln 2m = 10.3 on adult-reduced
	eps0 := privacy.CalibrateExponential(rho, T)
	P := plan.Params
	if len(plan.Charges) != 1 || plan.Charges[0].Cost != privacy.ZCDPCost(rho) {
		t.Errorf("charges = %v, want ZCDP ρ = %v", plan.Charges, rho)
	}
	if math.Abs(float64(plan.Iterations-T)) > 1 || P["eps0"] != privacy.CalibrateExponential(rho, plan.Iterations) {
		t.Errorf("T = %d, ε0 = %v; want about η^{2/3} = %d, ε0 = %v", plan.Iterations, P["eps0"], T, eps0)
	}
	if want := 4 * math.Pow(eta, -1.0/3); !relClose(P["alpha_ln_k"], want, 1e-12) {
		t.Errorf("α ln k = %v, want 4η^{-1/3} = %v", P["alpha_ln_k"], want)
	}
	if P["rho_spent"] > rho || P["sensitivity"] != 1.0/48842 {
		t.Errorf("params = %v", P)
	}
	// The rules' clamps.
	if FWTunedT(1, 100) != 20 || FWTunedT(math.Inf(1), 100) != FWTunedTMax || FWTunedT(1e12, 100) != FWTunedTMax {
		t.Errorf("FWTunedT clamps: %d, %d, %d", FWTunedT(1, 100), FWTunedT(math.Inf(1), 100), FWTunedT(1e12, 100))
	}
	if a := FWTunedAlpha(math.Inf(1), 100) * math.Log(100); !relClose(a, 0.1, 1e-12) {
		t.Errorf("α ln k at η = ∞: %v, want the floor 0.1", a)
	}
	if a := FWTunedAlpha(1, 100) * math.Log(100); !relClose(a, 1, 1e-12) {
		t.Errorf("α ln k at η = 1: %v, want the ceiling 1", a)
	}
	// A pure budget: one bounded-range charge of ε.
	pure := privacy.Budget{Eps: 1}
	plan, err = (&DPFW{T: 7}).Plan(&Shape{Neighbours: ReplaceOne, Budget: pure, N: 1000, Workload: fx.wl})
	if err != nil {
		t.Fatal(err)
	}
	led, _ := privacy.NewLedger(pure, nil)
	if err := led.Charge(plan.Charges...); err != nil || plan.Charges[0].Eps != 1 || plan.Params["eps0"]*7 > 1 {
		t.Errorf("pure plan %v (ε0 = %v): %v", plan.Charges, plan.Params["eps0"], err)
	}
	// N unknown: T and α are not known yet; the charges are the same.
	p0, err := (&DPFW{}).Plan(&Shape{Neighbours: ReplaceOne, Budget: b, Workload: fx.wl})
	if err != nil || p0.Iterations != 0 || len(p0.Warnings) == 0 || p0.Charges[0] != plan0Charge(rho) {
		t.Errorf("plan with N unknown: %v, %d iterations, warnings %q", err, p0.Iterations, p0.Warnings)
	}
}

func plan0Charge(rho float64) privacy.Charge {
	return privacy.Charge{Label: "dpfw: T exponential-mechanism selections, ε0 = √(8ρ/T) each (ε0²/8 zCDP by bounded range), calibrated to ρ", Cost: privacy.ZCDPCost(rho)}
}

func TestDPFWPlanErrors(t *testing.T) {
	fx := small(t)
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	for _, set := range []Setting{Tuned, Paper} {
		// Units of several records need add/remove neighbours.
		_, err := (&DPFW{Setting: set}).Plan(&Shape{Budget: b, N: 100, Workload: fx.wl, Neighbours: ReplaceOne, UnitRows: 2})
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%v under replace-one with UnitRows = 2: err = %v, want ErrUnsupported", set, err)
		}
		if _, err := (&DPFW{Setting: set}).Plan(&Shape{Budget: b, Workload: fx.wl, UnitRows: -1}); err == nil {
			t.Errorf("%v with UnitRows = -1: no error", set)
		}
	}
	bad := []struct {
		name string
		s    *DPFW
		b    privacy.Budget
	}{
		{"paper with δ = 0", &DPFW{Setting: Paper}, privacy.Budget{Eps: 1}},
		{"paper with ε >= 8 ln(1/δ)", &DPFW{Setting: Paper}, privacy.Budget{Eps: 200, Delta: 1e-9}},
		{"negative T", &DPFW{T: -1}, b},
		{"tiny α", &DPFW{Alpha: 1e-300}, b},
		{"γ > 1", &DPFW{Step: FWStepConstant, Gamma: 2}, b},
		{"NaN α", &DPFW{Alpha: math.NaN()}, b},
	}
	for _, c := range bad {
		if _, err := c.s.Plan(&Shape{Neighbours: ReplaceOne, Budget: c.b, N: 100, Workload: fx.wl}); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// denseVertex returns the signed vertex v_s as a dense vector.
func denseVertex(op Operator, s int) []float64 {
	v := make([]float64, op.K())
	j, sg := query.Signed(s, op.M())
	op.AddQuery(j, sg, v)
	return v
}

func denseSoftmax(theta []float64) []float64 {
	mx := math.Inf(-1)
	for _, v := range theta {
		mx = max(mx, v)
	}
	out := make([]float64, len(theta))
	z := 0.0
	for i, v := range theta {
		out[i] = math.Exp(v - mx)
		z += out[i]
	}
	for i := range out {
		out[i] /= z
	}
	return out
}

// TestDPFWLazyIterates replays a run against a dense recomputation of the
// Frank-Wolfe iterates q_{t+1} = (1−γ_t)q_t + γ_t·v_t: the lazy θ = c·φ
// must equal q_t/α, the scores must be ±(a − ⟨q_j, softmax(q_t/α)⟩), and
// the output combination Σ_t W_t q_t/α must match for any weights. The
// cases cover the harmonic reset at γ_0 = 1, the paper's vertex start, the
// rescale when c underflows, and the exact-max fallback for large steps.
func TestDPFWLazyIterates(t *testing.T) {
	fx := small(t)
	cases := []struct {
		name string
		s    *DPFW
	}{
		{"tuned", &DPFW{T: 40}},
		{"paper", &DPFW{Setting: Paper, T: 40}},
		{"rescale", &DPFW{T: 60, Step: FWStepConstant, Gamma: 0.999}},
		{"large steps", &DPFW{T: 40, Step: FWStepConstant, Gamma: 0.5, Alpha: 1e-4}},
	}
	for _, c := range cases {
		p := fx.problem(t, 1, 1e-9, 3)
		_, fp, err := c.s.plan(&p.Shape)
		if err != nil {
			t.Fatal(err)
		}
		team := par.NewTeam(2)
		r := newFWRun(p, fp, team, 0)
		k, m := p.Op.K(), p.Op.M()
		q := make([]float64, k)
		if r.init >= 0 {
			q = denseVertex(p.Op, r.init)
		}
		iters := [][]float64{append([]float64(nil), q...)}
		ans := make([]float64, m)
		for it := range fp.T {
			theta := make([]float64, k)
			scale := 0.0
			for i := range q {
				theta[i] = q[i] / fp.alpha
				scale = max(scale, math.Abs(theta[i]))
			}
			if it > 0 {
				for i := range theta {
					if got := r.ex.c * r.phi[i]; math.Abs(got-theta[i]) > 1e-9*(1+scale) {
						t.Fatalf("%s: iteration %d: θ[%d] = %v, want %v", c.name, it, i, got, theta[i])
					}
				}
			}
			r.step(it)
			p.Op.Answer(denseSoftmax(theta), ans)
			for j := range m {
				g := p.Answers[j] - ans[j]
				if math.Abs(r.score[j]-g) > 1e-9 || r.score[m+j] != -r.score[j] {
					t.Fatalf("%s: iteration %d: score[%d] = %v, want %v", c.name, it, j, r.score[j], g)
				}
			}
			g, v := r.gam[it], denseVertex(p.Op, r.sel[it])
			for i := range q {
				q[i] = (1-g)*q[i] + g*v[i]
			}
			iters = append(iters, append([]float64(nil), q...))
		}
		T := fp.T
		for _, w := range [][]float64{onehot(T+1, T), onehot(T+1, 0), onehot(T+1, T/2), ramp(T + 1)} {
			r.combine(w)
			for i := range k {
				want := 0.0
				for tt, wt := range w {
					want += wt * iters[tt][i] / fp.alpha
				}
				if math.Abs(r.phi[i]-want) > 1e-9*(1+math.Abs(want)) {
					t.Fatalf("%s: combine: θ[%d] = %v, want %v", c.name, i, r.phi[i], want)
				}
			}
		}
		team.Close()
	}
}

func onehot(n, i int) []float64 {
	w := make([]float64, n)
	w[i] = 1
	return w
}

func ramp(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = float64(i+1) / float64(n*(n+1)/2)
	}
	return w
}

// TestDPFWStepSign: without privacy and with a small step, one step lowers
// the error of the query it selected (a sign error would raise it), and a
// few hundred steps bring the max error far below the uniform's.
func TestDPFWStepSign(t *testing.T) {
	fx := small(t)
	p := fx.problem(t, 1, 1e-9, 1)
	p.noPrivacy = true
	_, fp, err := (&DPFW{T: 400, Step: FWStepConstant, Gamma: 0.02}).plan(&p.Shape)
	if err != nil {
		t.Fatal(err)
	}
	team := par.NewTeam(1)
	defer team.Close()
	r := newFWRun(p, fp, team, 0)
	s, err0 := r.step(0)
	before := r.score[s]
	r.step(1)
	if after := r.score[s]; !(after < before) || before <= 0 {
		t.Errorf("selected vertex %d: signed error %v -> %v, want a decrease from a positive value", s, before, after)
	}
	var last float64
	for it := 2; it < fp.T; it++ {
		_, last = r.step(it)
	}
	if last > err0/5 {
		t.Errorf("max error after %d exact steps %v, want below a fifth of the uniform's %v", fp.T, last, err0)
	}
}

// TestDPFWExtremeSettings: no NaN or Inf reaches the output for extreme α
// and step sizes (Solve checks the distribution).
func TestDPFWExtremeSettings(t *testing.T) {
	fx := small(t)
	for _, s := range []*DPFW{
		{T: 30, Alpha: 1e-12},
		{T: 30, Alpha: 1e12},
		{T: 30, Alpha: 1e-12, Step: FWStepConstant, Gamma: 1},
		{T: 300, Alpha: 1e-6, Step: FWStepConstant, Gamma: 0.9999},
		{T: 30, Alpha: 1e-12, Output: FWOutputAverage},
		{Setting: Paper, T: 30, Alpha: 1e-12},
	} {
		p := fx.problem(t, 1, 1e-9, 5)
		if _, err := s.Solve(context.Background(), p); err != nil {
			t.Errorf("%+v: %v", *s, err)
		}
	}
}

func TestDPFWProgressAndCancel(t *testing.T) {
	fx := small(t)
	p := fx.problem(t, 1, 1e-9, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	p.Progress = func(pr Progress) {
		calls++
		if pr.Iter != calls || pr.Total != 50 || math.IsNaN(pr.Objective) {
			t.Errorf("progress %+v at call %d", pr, calls)
		}
		if calls == 10 {
			cancel()
		}
	}
	if _, err := (&DPFW{T: 50}).Solve(ctx, p); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if calls != 10 {
		t.Errorf("%d progress calls, want 10 (cancelled at the 10th)", calls)
	}
}

func TestDPFWTrace(t *testing.T) {
	fx := small(t)
	for _, set := range []Setting{Tuned, Paper} {
		p := fx.problem(t, 1, 1e-9, 2)
		res, err := (&DPFW{Setting: set, T: 25}).Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Trace) != 25 {
			t.Fatalf("%v: %d trace steps, want 25", set, len(res.Trace))
		}
		for i, st := range res.Trace {
			if st.Iter != i || st.Selected < 0 || st.Selected >= 2*p.Op.M() || !(st.MaxError >= 0 && st.MaxError <= 1) {
				t.Errorf("%v: step %d = %+v", set, i, st)
			}
		}
	}
}

func TestDPFWStepAllocs(t *testing.T) {
	fx := small(t)
	for _, set := range []Setting{Tuned, Paper} {
		p := fx.problem(t, 1, 1e-9, 2)
		_, fp, err := (&DPFW{Setting: set, T: 100}).plan(&p.Shape)
		if err != nil {
			t.Fatal(err)
		}
		team := par.NewTeam(2)
		r := newFWRun(p, fp, team, 0)
		it := 0
		if a := testing.AllocsPerRun(50, func() { r.step(it); it++ }); a != 0 {
			t.Errorf("%v: %v allocations per iteration, want 0", set, a)
		}
		team.Close()
	}
}
