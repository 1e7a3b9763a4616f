package solvers

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/privacy"
)

func TestSMDPlanTuned(t *testing.T) {
	fx := small(t)
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	n := 48842
	plan, err := (&SMD{}).Plan(&Shape{Neighbours: ReplaceOne, Budget: b, N: n, Workload: fx.wl})
	if err != nil {
		t.Fatal(err)
	}
	rho, _ := b.Rho(privacy.Tight)
	P := plan.Params
	T := SMDTunedT(float64(n)*math.Sqrt(2*rho), fx.wl.M())
	B := n / T
	eps1 := privacy.CalibrateExponential(rho, T)
	if plan.Iterations != T || P["B"] != float64(B) || P["unused_records"] != float64(n-T*B) {
		t.Errorf("T = %d, B = %v, want %d, %d", plan.Iterations, P["B"], T, B)
	}
	// ε' = 2τ_y·R/B is the calibrated per-draw ε.
	if !relClose(P["eps_draw"], eps1, 1e-12) || !relClose(P["tau_y"], eps1*float64(B)/2, 1e-12) {
		t.Errorf("eps_draw = %v, tau_y = %v; want ε' = %v, τ_y = ε'B/2", P["eps_draw"], P["tau_y"], eps1)
	}
	if P["rho_spent"] > rho {
		t.Errorf("rho spent %v > ρ %v", P["rho_spent"], rho)
	}
	if len(plan.Charges) != 1 || plan.Charges[0].Cost != privacy.ZCDPCost(rho) {
		t.Errorf("charges = %v, want ZCDP ρ = %v", plan.Charges, rho)
	}
	// T is capped at n (B >= 1).
	plan, err = (&SMD{T: 500}).Plan(&Shape{Neighbours: ReplaceOne, Budget: b, N: 20, Workload: fx.wl})
	if err != nil || plan.Iterations != 20 || plan.Params["B"] != 1 {
		t.Errorf("T capped at n: %v, T = %d, B = %v", err, plan.Iterations, plan.Params["B"])
	}
}

func TestSMDPlanPaper(t *testing.T) {
	fx := adultReduced(t)
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	n := 48842
	plan, err := (&SMD{Setting: Paper}).Plan(&Shape{Neighbours: ReplaceOne, Budget: b, N: n, Workload: fx.wl})
	if err != nil {
		t.Fatal(err)
	}
	P := plan.Params
	l := math.Log(1e9)
	lnk, ln2m := math.Log(336000), math.Log(2*14955)
	T := math.Ceil(float64(n) / math.Sqrt((lnk+ln2m)*l))
	B := math.Floor(float64(n) / T)
	capY := B / (4 * math.Sqrt(2*T*l))
	if P["T"] != T || P["B"] != B || !relClose(P["tau_y_cap"], capY, 1e-12) {
		t.Errorf("T, B, cap = %v, %v, %v; want %v, %v, %v", P["T"], P["B"], P["tau_y_cap"], T, B, capY)
	}
	if want := math.Min(math.Sqrt(ln2m/T)/2, capY); P["tau_y"] != want || !relClose(P["tau_x"], math.Sqrt(lnk/T), 1e-12) {
		t.Errorf("τ_y = %v, τ_x = %v; want %v, %v", P["tau_y"], P["tau_x"], want, math.Sqrt(lnk/T))
	}
	// Cor 3.6: per-draw ε' <= ε/(2√(2T ln(1/δ))).
	if lim := 1 / (2 * math.Sqrt(2*T*l)); P["eps_draw"] > lim*(1+1e-12) {
		t.Errorf("ε' = %v above the composition limit %v", P["eps_draw"], lim)
	}
	if len(plan.Charges) != 1 || plan.Charges[0].Cost != privacy.ApproxCost(1, 1e-9) {
		t.Errorf("charges = %v", plan.Charges)
	}
}

func TestSMDPlanErrors(t *testing.T) {
	fx := small(t)
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	for _, set := range []Setting{Tuned, Paper} {
		// Units of several records need add/remove neighbours.
		_, err := (&SMD{Setting: set}).Plan(&Shape{Budget: b, N: 100, Workload: fx.wl, Neighbours: ReplaceOne, UnitRows: 2})
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%v under replace-one with UnitRows = 2: err = %v, want ErrUnsupported", set, err)
		}
		if _, err := (&SMD{Setting: set}).Plan(&Shape{Budget: b, Workload: fx.wl, UnitRows: -1}); err == nil {
			t.Errorf("%v with UnitRows = -1: no error", set)
		}
	}
	for _, c := range []struct {
		name string
		s    *SMD
		b    privacy.Budget
	}{
		{"paper with δ = 0", &SMD{Setting: Paper}, privacy.Budget{Eps: 1}},
		{"paper with ε >= 8 ln(1/δ)", &SMD{Setting: Paper}, privacy.Budget{Eps: 200, Delta: 1e-9}},
		{"τ_y above the cap", &SMD{TauY: 1e6}, b},
		{"paper τ_y above the cap", &SMD{Setting: Paper, TauY: 1e6}, b},
		{"negative T", &SMD{T: -3}, b},
		{"NaN τ_x", &SMD{TauX: math.NaN()}, b},
	} {
		if _, err := c.s.Plan(&Shape{Neighbours: ReplaceOne, Budget: c.b, N: 100, Workload: fx.wl}); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// mixedWorkload has marginals, prefixes, a range and a predicate, so that
// both paths of the batch columns are exercised.
func mixedWorkload(t testing.TB) (wlDomain string, records [][]int, p func(seed uint64, s privacy.Budget) *Problem) {
	dom := `{"attributes": [
	  {"name": "sex", "type": "categorical", "values": ["F", "M"]},
	  {"name": "age", "type": "integer", "min": 0, "max": 39, "width": 10},
	  {"name": "job", "type": "categorical", "values": ["a", "b", "c"]}
	]}`
	wl := fwWorkload(t, dom, `{"families": [
	  {"type": "marginals", "sets": [["sex"], ["age", "job"]]},
	  {"type": "prefixes", "attribute": "age", "weight": 0.5},
	  {"type": "range", "attribute": "age", "lo": 10, "hi": 29},
	  {"type": "predicate", "where": [{"attribute": "sex", "in": ["F"]}, {"attribute": "age", "lo": 0, "hi": 19}], "weight": 0.75}
	]}`)
	records = [][]int{{0, 0, 0}, {0, 1, 2}, {1, 3, 1}, {1, 2, 0}, {0, 0, 0}, {1, 1, 1}, {0, 2, 2}, {1, 0, 1}, {0, 3, 0}}
	return dom, records, func(seed uint64, b privacy.Budget) *Problem { return fwProblem(t, wl, records, b, seed) }
}

// TestSMDColumns: every record's column of A (scattered into the batch
// answers) equals the workload's exact answers on that single record, for
// marginal cells and the other families alike; with one batch of all
// records the first step's gradient is the full data's.
func TestSMDColumns(t *testing.T) {
	_, _, mk := mixedWorkload(t)
	p := mk(1, privacy.Budget{Eps: 1, Delta: 1e-6})
	sp := &smdPlan{geo: mustGeo(t, p), T: 1, B: p.N, tauX: 0.1, tauY: 0.1}
	sp.eps1 = 2 * sp.tauY / float64(sp.B)
	team := par.NewTeam(1)
	defer team.Close()
	r, err := newSMDRun(p, sp, team, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := p.Op.M()
	one := make([]float64, m)
	for i := range p.Counts.Distinct() {
		col := make([]float64, m)
		for c := r.colStart[i]; c < r.colStart[i+1]; c++ {
			col[r.colIdx[c]] += r.colVal[c]
		}
		codes := p.Counts.Codes(i)
		rec := make([]int, len(codes))
		for a, v := range codes {
			rec[a] = int(v)
		}
		single := fwProblem(t, p.Workload, [][]int{rec}, p.Budget, 1)
		copy(one, single.Answers)
		for j := range m {
			if math.Abs(col[j]-one[j]) > 1e-15 {
				t.Fatalf("cell %v, query %s: column %v, want %v", codes, p.Workload.Label(j), col[j], one[j])
			}
		}
	}
	// The records are a permutation of the data.
	seen := make([]int64, p.Counts.Distinct())
	for _, e := range r.rec {
		seen[e]++
	}
	for i, c := range seen {
		if c != p.Counts.Count(i) {
			t.Fatalf("entry %d appears %d times, count %d", i, c, p.Counts.Count(i))
		}
	}
	// One batch of all records: S = a − A x^1 after the first step, before
	// the draw's effect.
	uni := make([]float64, p.Op.K())
	for i := range uni {
		uni[i] = 1 / float64(len(uni))
	}
	ans := make([]float64, m)
	p.Op.Answer(uni, ans)
	r.step(0)
	for j := range m {
		if g := p.Answers[j] - ans[j]; math.Abs(r.S[j]-g) > 1e-12 || math.Abs(r.S[m+j]+g) > 1e-12 {
			t.Fatalf("query %d: S = %v, %v; want ±%v", j, r.S[j], r.S[m+j], g)
		}
	}
}

func mustGeo(t testing.TB, p *Problem) fwGeometry {
	g, err := newFWGeometry(p.Workload)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSMDExactConverges: without privacy (full-data gradients, expected
// vertex instead of a draw) the averaged iterate's error falls far below
// the uniform distribution's, and the current iterate's error falls too: a
// sign error in either player's step would make them grow.
func TestSMDExactConverges(t *testing.T) {
	fx := small(t)
	p := fx.problem(t, 1, 1e-9, 1)
	p.noPrivacy = true
	s := &SMD{T: 2000, TauX: 0.5}
	res, err := s.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	u := make([]float64, p.Op.K())
	for i := range u {
		u[i] = 1 / float64(len(u))
	}
	umax, _ := fx.maxError(t, p.Op, u)
	mx, _ := fx.maxError(t, p.Op, res.D)
	if mx > umax/5 {
		t.Errorf("max error of x̄ %v, want below a fifth of the uniform's %v", mx, umax)
	}
	// The last iterate of two multiplicative-weights players oscillates
	// around the equilibrium; it must still have moved towards it.
	if last := res.Trace[len(res.Trace)-1].MaxError; last > umax/2 {
		t.Errorf("max error of the last iterate %v, want below half the uniform's %v", last, umax)
	}
	t.Logf("uniform %.4f, x̄ %.4f, last iterate %.4f", umax, mx, res.Trace[len(res.Trace)-1].MaxError)
}

// TestSMDDrawFavoursError: with a large τ_y the private draw picks the
// signed query whose error is largest (ascent on the query player: the
// paper's printed descent would pick the smallest).
func TestSMDDrawFavoursError(t *testing.T) {
	fx := small(t)
	p := fx.problem(t, 50, 1e-3, 4)
	_, sp, err := (&SMD{T: 1}).plan(&p.Shape)
	if err != nil {
		t.Fatal(err)
	}
	team := par.NewTeam(1)
	defer team.Close()
	r, err := newSMDRun(p, sp, team, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := r.step(0)
	best := fwArgmax(r.S)
	if r.S[s] < r.S[best]-0.05 {
		t.Errorf("draw %d has score %v, the best is %v (τ_y = %v)", s, r.S[s], r.S[best], sp.tauY)
	}
}

func TestSMDExtremeSettings(t *testing.T) {
	fx := small(t)
	for _, s := range []*SMD{
		{T: 50, TauX: 1e6},
		{T: 50, TauX: 1e-12},
		{T: 50, TauX: 1e6, TauY: 1e-300},
		{Setting: Paper, T: 50, TauX: 1e9},
	} {
		p := fx.problem(t, 1, 1e-9, 5)
		if _, err := s.Solve(context.Background(), p); err != nil {
			t.Errorf("%+v: %v", *s, err)
		}
	}
}

func TestSMDMixedWorkloadSolve(t *testing.T) {
	_, _, mk := mixedWorkload(t)
	p := mk(3, privacy.Budget{Eps: 2, Delta: 1e-6})
	res, err := (&SMD{T: 4}).Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trace) != 4 {
		t.Errorf("%d trace steps, want 4", len(res.Trace))
	}
}

func TestSMDProgressAndCancel(t *testing.T) {
	fx := small(t)
	p := fx.problem(t, 1, 1e-9, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	p.Progress = func(pr Progress) {
		calls++
		if pr.Iter != calls || pr.Total != 40 || math.IsNaN(pr.Objective) || math.IsInf(pr.Objective, 0) {
			t.Errorf("progress %+v at call %d", pr, calls)
		}
		if calls == 7 {
			cancel()
		}
	}
	if _, err := (&SMD{T: 40}).Solve(ctx, p); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if calls != 7 {
		t.Errorf("%d progress calls, want 7", calls)
	}
}

func TestSMDStepAllocs(t *testing.T) {
	fx := small(t)
	p := fx.problem(t, 1, 1e-9, 2)
	_, sp, err := (&SMD{T: 100}).plan(&p.Shape)
	if err != nil {
		t.Fatal(err)
	}
	team := par.NewTeam(2)
	defer team.Close()
	r, err := newSMDRun(p, sp, team, 0)
	if err != nil {
		t.Fatal(err)
	}
	it := 0
	if a := testing.AllocsPerRun(50, func() { r.step(it); it++ }); a != 0 {
		t.Errorf("%v allocations per iteration, want 0", a)
	}
}
