package solvers

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// tinyFixture builds a fixture over a small encoded domain (attribute sizes
// given) with the given records and its k-way marginal workload.
func tinyFixture(t testing.TB, sizes []int, records [][]int, kway int) *fixture {
	t.Helper()
	var attrs []*universe.Attribute
	for i, s := range sizes {
		a, err := universe.NewEncoded(string(rune('a'+i)), s)
		if err != nil {
			t.Fatal(err)
		}
		attrs = append(attrs, a)
	}
	dom, err := universe.NewDomain(attrs...)
	if err != nil {
		t.Fatal(err)
	}
	counts := universe.NewCounts(dom)
	for _, r := range records {
		if err := counts.Add(r, 1); err != nil {
			t.Fatal(err)
		}
	}
	wl, err := query.KWay(dom, kway, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{name: "tiny", dom: dom, counts: counts, wl: wl, answers: wl.AnswerCounts(counts, make([]float64, wl.M()))}
}

// tinyRecords is a fixed dataset over sizes {2, 3}: skewed towards (0, 0).
var tinyRecords = [][]int{{0, 0}, {0, 0}, {0, 0}, {0, 1}, {1, 2}, {0, 0}, {1, 0}, {0, 2}}

// TestDPAMProxClosedForm checks the solver's prox step against a numerical
// minimisation of η_t[⟨−G_t, D⟩ + α·H(D)] + S_{t−1}·KL(D‖D_t) over the
// simplex, on a 6-cell universe: it runs T = 2 iterations without noise,
// recovers D_2 and D_3 from the outputs and the public schedule, and
// minimises the objective with BFGS over softmax coordinates.
func TestDPAMProxClosedForm(t *testing.T) {
	fx := tinyFixture(t, []int{2, 3}, tinyRecords, 1)
	for _, set := range []Setting{Paper, Tuned} {
		const alpha = 0.3
		s1 := &DPAM{Setting: set, T: 1, Alpha: alpha, Kappa: 1.5}
		p1 := fx.problem(t, 1, 1e-6, 1)
		p1.noPrivacy = true
		r1, err := s1.Solve(context.Background(), p1)
		if err != nil {
			t.Fatal(err)
		}
		s2 := &DPAM{Setting: set, T: 2, Alpha: alpha, Kappa: 1.5}
		p2 := fx.problem(t, 1, 1e-6, 1)
		p2.noPrivacy = true
		r2, err := s2.Solve(context.Background(), p2)
		if err != nil {
			t.Fatal(err)
		}
		k, m := p1.Op.K(), p1.Op.M()
		vertex := func(sel int) []float64 {
			j, sign := query.Signed(sel, m)
			g := make([]float64, k)
			p1.Op.AddQuery(j, sign, g)
			return g
		}
		// D_2 = D^ag_2 = softmax(G_1/α).
		g1 := vertex(r1.Trace[0].Selected)
		want2 := make([]float64, k)
		for i := range want2 {
			want2[i] = g1[i] / alpha
		}
		softmaxInPlace(want2)
		d2 := r1.D
		for i := range d2 {
			if math.Abs(d2[i]-want2[i]) > 1e-12 {
				t.Fatalf("%s: D_2[%d] = %v, want softmax(G_1/α) = %v", set, i, d2[i], want2[i])
			}
		}
		// The schedule, from the printed definitions: paper η_t = t + η0
		// (S_1 = η_1); tuned η_2 such that λ_2 = κ/(2+κ−1), S_1 = 1 (only
		// ratios matter).
		var S1, eta2 float64
		if set == Paper {
			plan, err := s2.Plan(&p2.Shape)
			if err != nil {
				t.Fatal(err)
			}
			S1, eta2 = 1+plan.Params["eta0"], 2+plan.Params["eta0"]
		} else {
			l := 1.5 / (2 + 1.5 - 1)
			S1 = 1
			eta2 = l * S1 / (alpha * (1 - l))
		}
		r2t := eta2 / (S1 + eta2)
		// D^ag_3 = (S_1/S_2)·D^ag_2 + (η_2/S_2)·D_3, with D^ag_2 = D_2.
		d3 := make([]float64, k)
		for i := range d3 {
			d3[i] = (r2.D[i] - (1-r2t)*d2[i]) / r2t
		}
		g2 := vertex(r2.Trace[1].Selected)
		obj := func(d []float64) float64 {
			f := 0.0
			for i, v := range d {
				f += eta2*(-g2[i]*v+alpha*v*math.Log(v)) + S1*v*math.Log(v/d2[i])
			}
			return f
		}
		got := minimiseOnSimplex(t, obj, func(d, grad []float64) {
			for i, v := range d {
				grad[i] = eta2*(-g2[i]+alpha*(math.Log(v)+1)) + S1*(math.Log(v/d2[i])+1)
			}
		}, k)
		for i := range got {
			if math.Abs(got[i]-d3[i]) > 1e-6 {
				t.Errorf("%s: D_3[%d] = %.9f, brute-force prox minimiser %.9f", set, i, d3[i], got[i])
			}
		}
	}
}

// minimiseOnSimplex minimises f over the simplex by gradient descent with
// Armijo backtracking on softmax coordinates (a generic method, independent
// of the closed form); gradD is the gradient of f in D.
func minimiseOnSimplex(t *testing.T, f func([]float64) float64, gradD func(d, g []float64), k int) []float64 {
	t.Helper()
	x := make([]float64, k)
	d := make([]float64, k)
	gd := make([]float64, k)
	gx := make([]float64, k)
	y := make([]float64, k)
	at := func(x []float64) float64 {
		copy(d, x)
		softmaxInPlace(d)
		return f(d)
	}
	fx := at(x)
	step := 1.0
	for it := 0; it < 200000; it++ {
		gradD(d, gd)
		s, norm := 0.0, 0.0
		for i := range d {
			s += d[i] * gd[i]
		}
		for i := range gx {
			gx[i] = d[i] * (gd[i] - s)
			norm += gx[i] * gx[i]
		}
		if norm < 1e-26 {
			break
		}
		step *= 2
		for {
			for i := range y {
				y[i] = x[i] - step*gx[i]
			}
			if fy := at(y); fy <= fx-1e-4*step*norm {
				copy(x, y)
				fx = fy
				break
			}
			step /= 2
			if step < 1e-20 {
				t.Fatal("line search failed")
			}
		}
	}
	at(x)
	return append([]float64(nil), d...)
}

// TestDPAMOneStepDecreasesError: without noise, one iteration moves mass
// towards the data on the selected query (its error shrinks); the printed
// sign (g_t = +G_t) moves it away. Digest pitfall 6.
func TestDPAMOneStepDecreasesError(t *testing.T) {
	fx := small(t)
	for _, wrong := range []bool{false, true} {
		s := &DPAM{T: 1, Alpha: 1, wrongSign: wrong}
		p := fx.problem(t, 1, 1e-9, 1)
		p.noPrivacy = true
		res, err := s.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		j, _ := query.Signed(res.Trace[0].Selected, p.Op.M())
		u := uniform(p.Op.K())
		before := queryError(p.Op, u, fx.answers, j)
		after := queryError(p.Op, res.D, fx.answers, j)
		if !wrong && !(after < before) {
			t.Errorf("one step: error of the selected query %d went %.4g -> %.4g, want a decrease", j, before, after)
		}
		if wrong && !(after > before) {
			t.Errorf("one step with the printed sign: error of query %d went %.4g -> %.4g, want an increase", j, before, after)
		}
	}
	// A few steps lower the max error below the uniform distribution's.
	s := &DPAM{T: 20, Alpha: 0.05}
	p := fx.problem(t, 1, 1e-9, 1)
	p.noPrivacy = true
	res, err := s.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	umax, _ := fx.maxError(t, p.Op, uniform(p.Op.K()))
	if mx, _ := fx.maxError(t, p.Op, res.D); !(mx < umax/2) {
		t.Errorf("20 exact steps: max error %.4f, want below half the uniform's %.4f", mx, umax)
	}
}

func uniform(k int) []float64 {
	u := make([]float64, k)
	for i := range u {
		u[i] = 1 / float64(k)
	}
	return u
}

func queryError(op Operator, d, answers []float64, j int) float64 {
	out := make([]float64, op.M())
	op.Answer(d, out)
	return math.Abs(out[j] - answers[j])
}

// TestDPAMExtremeParameters: no NaN or Inf reaches the output for extreme α
// and step schedules, with and without noise.
func TestDPAMExtremeParameters(t *testing.T) {
	fx := small(t)
	for _, tc := range []DPAM{
		{T: 30, Alpha: 1e-12},
		{T: 30, Alpha: 1e-200},
		{T: 30, Alpha: 1e12},
		{T: 30, Alpha: 1e-9, Kappa: 1e9},
		{T: 30, Alpha: 1e-9, Kappa: 1e-9},
		{Setting: Paper, T: 30, Alpha: 1e-12},
		{Setting: Paper, T: 30, Alpha: 1e200},
	} {
		for _, noPriv := range []bool{false, true} {
			s := tc
			p := fx.problem(t, 1, 1e-9, 3)
			p.noPrivacy = noPriv
			res, err := s.Solve(context.Background(), p)
			if err != nil {
				t.Fatalf("%+v: %v", tc, err)
			}
			if err := checkDistribution(res.D); err != nil {
				t.Errorf("%+v (no privacy %v): %v", tc, noPriv, err)
			}
		}
	}
}

// TestGaussianWidthAdultReduced: the Monte Carlo width of the 35 3-way
// marginals of adult-reduced, signed, against the digest's 303 (2,000
// draws, s.e. 1). Tolerance: 4 standard errors of our estimate plus the
// digest's 3 s.e.; false-failure rate below 1e-4 under normality.
func TestGaussianWidthAdultReduced(t *testing.T) {
	if testing.Short() {
		t.Skip("adult-reduced width skipped in -short mode")
	}
	fx := adultReduced(t)
	op, err := fx.wl.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	w := GaussianWidth(op, 256)
	t.Logf("w(Q ∪ −Q) = %.1f (s.e. %.1f, %d draws)", w.W, w.StdErr, w.Samples)
	if tol := 4*w.StdErr + 3; math.Abs(w.W-303) > tol || w.StdErr > 5 {
		t.Errorf("GaussianWidth = %.1f ± %.1f, want 303 within %.1f", w.W, w.StdErr, tol)
	}
}

// TestDPAMPaperFormulas checks the paper plan on adult-reduced against the
// digest's §4 table (n = 48,842, δ = 1e-9).
func TestDPAMPaperFormulas(t *testing.T) {
	if testing.Short() {
		t.Skip("adult-reduced width skipped in -short mode")
	}
	fx := adultReduced(t)
	for _, tc := range []struct {
		eps                float64
		T                  int
		sigma, alpha, eta1 float64
		epsRDP             float64
	}{
		{0.1, 13, 0.0134, 0.168, 44, 0.05003},
		{1, 127, 0.0042, 0.053, 136, 0.5030},
	} {
		s := &DPAM{Setting: Paper}
		plan, err := s.Plan(&Shape{Neighbours: ReplaceOne, Budget: privacy.Budget{Eps: tc.eps, Delta: 1e-9}, N: 48842, Workload: fx.wl})
		if err != nil {
			t.Fatal(err)
		}
		pr := plan.Params
		// w's Monte Carlo error (about 1%) moves T by about ±1.
		if d := plan.Iterations - tc.T; d < -2 || d > 2 {
			t.Errorf("ε = %g: T = %d, want %d ± 2", tc.eps, plan.Iterations, tc.T)
		}
		near := func(name string, got, want, rel float64) {
			if math.Abs(got-want) > rel*want {
				t.Errorf("ε = %g: %s = %.5g, want %.5g within %.0f%%", tc.eps, name, got, want, rel*100)
			}
		}
		near("sigma", pr["sigma"], tc.sigma, 0.02)
		near("alpha", pr["alpha"], tc.alpha, 0.02)
		near("eta_1", 1+pr["eta0"], tc.eta1, 0.02)
		near("eps_rdp", pr["eps_rdp"], tc.epsRDP, 0.001)
		if len(plan.Charges) != 1 || plan.Charges[0].Kind != privacy.Approx {
			t.Errorf("ε = %g: charges %v, want one (ε, δ) charge", tc.eps, plan.Charges)
		}
		joined := strings.Join(plan.Warnings, "\n")
		for _, want := range []string{"errata", "Theorem 5's condition"} {
			if !strings.Contains(joined, want) {
				t.Errorf("ε = %g: warnings lack %q:\n%s", tc.eps, want, joined)
			}
		}
	}
}

// TestDPAMTunedPlan: the tuned plan charges exactly the budget's ρ, and its
// σ is √(T/ρ)/n.
func TestDPAMTunedPlan(t *testing.T) {
	fx := small(t)
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	s := &DPAM{}
	plan, err := s.Plan(&Shape{Neighbours: ReplaceOne, Budget: b, N: 48842, Workload: fx.wl})
	if err != nil {
		t.Fatal(err)
	}
	rho, _ := b.Rho(privacy.Tight)
	if plan.Total() != rho {
		t.Errorf("tuned charges ρ = %v, want the budget's %v", plan.Total(), rho)
	}
	T := float64(plan.Iterations)
	if want := math.Sqrt(T/rho) / 48842; math.Abs(plan.Params["sigma"]-want) > 1e-6*want {
		t.Errorf("σ = %v, want √(T/ρ)/n = %v", plan.Params["sigma"], want)
	}
	if _, err := s.Plan(&Shape{Budget: b, N: 10, Workload: fx.wl, Neighbours: ReplaceOne, UnitRows: 3}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Plan under replace-one with UnitRows = 3: err = %v, want ErrUnsupported", err)
	}
}

// softmaxInPlace is a plain reference softmax for tests.
func softmaxInPlace(x []float64) {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = max(mx, v)
	}
	s := 0.0
	for i, v := range x {
		x[i] = math.Exp(v - mx)
		s += x[i]
	}
	for i := range x {
		x[i] /= s
	}
}

// TestAMProgressAndCancel: both solvers report progress once per iteration
// with a finite objective, and stop with context.Canceled when the context
// is cancelled mid-run (checked every iteration).
func TestAMProgressAndCancel(t *testing.T) {
	fx := small(t)
	for _, s := range []Solver{&DPAM{T: 12}, &MWEM{T: 12}} {
		p := fx.problem(t, 1, 1e-9, 8)
		var iters []int
		p.Progress = func(pr Progress) {
			if math.IsNaN(pr.Objective) || math.IsInf(pr.Objective, 0) || pr.Total != 12 {
				t.Errorf("%s: progress %+v", s.Name(), pr)
			}
			iters = append(iters, pr.Iter)
		}
		if _, err := s.Solve(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if len(iters) != 12 || iters[0] != 1 || iters[11] != 12 {
			t.Errorf("%s: progress at iterations %v, want 1..12", s.Name(), iters)
		}
		ctx, cancel := context.WithCancel(context.Background())
		p = fx.problem(t, 1, 1e-9, 8)
		calls := 0
		p.Progress = func(pr Progress) {
			calls++
			if pr.Iter == 3 {
				cancel()
			}
		}
		if _, err := s.Solve(ctx, p); !errors.Is(err, context.Canceled) || calls != 3 {
			t.Errorf("%s: cancelled at iteration 3: err = %v after %d iterations, want context.Canceled after 3", s.Name(), err, calls)
		}
		cancel()
	}
}
