package solvers

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/privacy"
)

// The seed solvers (dpfw, dpam, smd, mwem) under add/remove neighbours:
// the noisy record count, plans that never read n, sensitivities that
// scale with the unit bound K, and solves on both models.

// arCase is one seed solver configuration under add/remove neighbours.
type arCase struct {
	name     string
	solver   func() Solver
	budget   privacy.Budget
	factored bool // the solver runs on the factored model too
}

func arCases() []arCase {
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	pure := privacy.Budget{Eps: 1}
	return []arCase{
		{"dpfw/tuned", func() Solver { return &DPFW{} }, b, true},
		{"dpfw/tuned/pure", func() Solver { return &DPFW{} }, pure, true},
		{"dpfw/paper", func() Solver { return &DPFW{Setting: Paper, TMax: 200} }, b, true},
		{"smd/tuned", func() Solver { return &SMD{} }, b, true},
		{"smd/tuned/pure", func() Solver { return &SMD{} }, pure, true},
		{"smd/paper", func() Solver { return &SMD{Setting: Paper, Last: true} }, b, true},
		{"dpam/tuned", func() Solver { return &DPAM{} }, b, false},
		{"dpam/paper", func() Solver { return &DPAM{Setting: Paper, TMax: 200} }, b, false},
		{"mwem/tuned", func() Solver { return &MWEM{} }, b, true},
		{"mwem/paper", func() Solver { return &MWEM{Setting: Paper} }, b, false},
		{"mwem/paper/pure", func() Solver { return &MWEM{Setting: Paper} }, pure, false},
	}
}

// arProblem is an add/remove problem over the seeds fixture with units of
// up to K records.
func arProblem(t testing.TB, b privacy.Budget, K int, factored bool, seed uint64) *Problem {
	t.Helper()
	fx := seedsFixture(t)
	var p *Problem
	if factored {
		p = factoredOf(t, fx, b.Eps, b.Delta, seed, 0)
	} else {
		p = fx.problem(t, b.Eps, b.Delta, seed)
	}
	p.Neighbours, p.UnitRows = AddRemove, K
	return p
}

// TestAddRemoveSolve: every seed solver, in every setting and on both
// models where they run, solves under add/remove neighbours with K = 1 and
// K = 4: it charges the ledger exactly the plan made with n unknown, the
// plan it returns has the same charges and a noisy n_estimate, and the
// output is a distribution.
func TestAddRemoveSolve(t *testing.T) {
	for _, c := range arCases() {
		for _, factored := range []bool{false, true} {
			if factored && !c.factored {
				continue
			}
			for _, K := range []int{1, 4} {
				name := c.name
				if factored {
					name += "/factored"
				}
				t.Run(fmt.Sprintf("%s/K=%d", name, K), func(t *testing.T) {
					p := arProblem(t, c.budget, K, factored, 3)
					s := c.solver()
					plan0, err := s.Plan(&p.Shape)
					if err != nil {
						t.Fatal(err)
					}
					res, err := s.Solve(context.Background(), p)
					if err != nil {
						t.Fatal(err)
					}
					if got := p.Ledger.Charges(); !reflect.DeepEqual(got, plan0.Charges) {
						t.Errorf("ledger charges %v, want the plan's %v", got, plan0.Charges)
					}
					if !reflect.DeepEqual(res.Plan.Charges, plan0.Charges) {
						t.Errorf("result plan charges %v, want %v", res.Plan.Charges, plan0.Charges)
					}
					checkNEstimate(t, res.Plan, p.N, K)
					if res.Plan.Iterations <= 0 || len(res.Trace) == 0 {
						t.Errorf("%d iterations, %d trace steps", res.Plan.Iterations, len(res.Trace))
					}
					if factored {
						if res.Model == nil {
							t.Fatal("no model on the factored model")
						}
						defer res.Model.Close()
						ans := modelAnswers(t, res.Model, p.Workload)
						for j, v := range ans {
							if !(v >= -1e-12 && v <= 1+1e-12) {
								t.Fatalf("answer %d = %v", j, v)
							}
						}
						return
					}
					if err := checkDistribution(res.D); err != nil {
						t.Error(err)
					}
				})
			}
		}
	}
}

// checkNEstimate: n_estimate is an integer at least 1 within 8 standard
// deviations of the count noise of n (a false failure has probability
// below 1e-14 for either noise).
func checkNEstimate(t *testing.T, plan *Plan, n, K int) {
	t.Helper()
	est, ok := plan.Params["n_estimate"]
	if !ok {
		t.Fatal("no n_estimate")
	}
	sd := plan.Params["count_sigma"]
	if b := plan.Params["count_scale"]; b > 0 {
		sd = b * math.Sqrt2 // a Laplace of scale b has standard deviation b√2
	}
	if sd <= 0 || plan.Params["unit_rows"] != float64(K) {
		t.Fatalf("count noise %v, unit_rows %v (want %d)", sd, plan.Params["unit_rows"], K)
	}
	if est != math.Round(est) || est < 1 || math.Abs(est-float64(n)) > 8*sd+1 {
		t.Errorf("n_estimate = %v for n = %d and noise sd %.3g", est, n, sd)
	}
}

// TestAddRemoveCountLabel: the noisy count's charge names its mechanism,
// sensitivity K and noise.
func TestAddRemoveCountLabel(t *testing.T) {
	for _, c := range arCases() {
		p := arProblem(t, c.budget, 3, false, 1)
		plan, err := c.solver().Plan(&p.Shape)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		l := plan.Charges[0].Label
		if !strings.Contains(l, "on the record count (ℓ") || !strings.Contains(l, "sensitivity 3 counts") {
			t.Errorf("%s: count charge label %q", c.name, l)
		}
	}
}

// internalPlan is the plan a solver makes from sh reading sh.N as the
// public count (n̂ under add/remove), as Solve's second plan does.
func internalPlan(t testing.TB, s Solver, sh *Shape) *Plan {
	t.Helper()
	var plan *Plan
	var err error
	switch s := s.(type) {
	case *DPFW:
		plan, _, err = s.plan(sh)
	case *SMD:
		plan, _, err = s.plan(sh)
	case *neighbourSMD:
		plan, _, err = s.plan(sh)
	case *DPAM:
		var r *dpamRun
		if r, err = s.derive(sh, nil, false); err == nil {
			plan = r.plan
		}
	case *MWEM:
		var r *mwemRun
		if r, err = s.derive(sh, false); err == nil {
			plan = r.plan
		}
	default:
		t.Fatalf("no internal plan for %T", s)
	}
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestAddRemovePlans: under add/remove the charges do not depend on N (the
// public Plan ignores it; the plans Solve makes with N = n̂ charge the
// same), the ledger accepts them, the noisy count's charge is
// GaussianCost(K, σ) at CountShare of ρ or a discrete Laplace of pure ε =
// CountShare·ε, and together they spend the budget as a replace-one plan
// does (the whole ρ or ε, within the calibrations' relative 1e-8).
func TestAddRemovePlans(t *testing.T) {
	fx := small(t)
	for _, c := range arCases() {
		for _, K := range []int{1, 5} {
			name := fmt.Sprintf("%s/K=%d", c.name, K)
			sh := &Shape{Budget: c.budget, Neighbours: AddRemove, UnitRows: K, Workload: fx.wl}
			plan0, err := c.solver().Plan(sh)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, n := range []int{1, 37, 48842} {
				withN := *sh
				withN.N = n
				if p, _ := c.solver().Plan(&withN); !reflect.DeepEqual(p.Charges, plan0.Charges) || p.Iterations != plan0.Iterations {
					t.Errorf("%s: Plan(N = %d) = %v, %d iterations; want Plan(N = 0)'s %v, %d", name, n, p.Charges, p.Iterations, plan0.Charges, plan0.Iterations)
				}
				if p := internalPlan(t, c.solver(), &withN); !reflect.DeepEqual(p.Charges, plan0.Charges) {
					t.Errorf("%s: the plan with n̂ = %d charges %v, want %v", name, n, p.Charges, plan0.Charges)
				}
			}
			led, _ := privacy.NewLedger(c.budget, nil)
			if err := led.Charge(plan0.Charges...); err != nil {
				t.Errorf("%s: the ledger refuses the plan: %v", name, err)
			}
			checkCountCharge(t, name, plan0, c.budget, K)
			checkSpent(t, name, plan0, c.budget)
		}
	}
}

// checkCountCharge: the first charge is the noisy count's, as stated.
func checkCountCharge(t *testing.T, name string, plan *Plan, b privacy.Budget, K int) {
	t.Helper()
	cc := plan.Charges[0]
	if sigma := plan.Params["count_sigma"]; sigma > 0 {
		rho, _ := b.Rho(privacy.Tight)
		want := privacy.GaussianCost(float64(K), sigma)
		if cc.Cost != want || !relClose(cc.Rho, CountShare*rho, 3e-9) || plan.Params["count_rho"] != cc.Rho {
			t.Errorf("%s: count charge %v, want GaussianCost(%d, %v) = %v ≈ %v·ρ", name, cc.Cost, K, sigma, want, CountShare)
		}
		return
	}
	scale := plan.Params["count_scale"]
	if cc.Kind != privacy.Pure || !relClose(cc.Eps, float64(K)/scale, 1e-15) || !relClose(cc.Eps, CountShare*b.Eps, 1e-12) {
		t.Errorf("%s: count charge %v, want pure ε = K/scale = %v/%v ≈ %v·ε", name, cc.Cost, K, scale, CountShare)
	}
}

// checkSpent: the charges spend the budget as the replace-one plan does:
// the whole ρ (zCDP), the whole ε (pure), or (ε, δ) by basic composition of
// the count's pure ε and the paper charge (dpam's paper charge spends less
// by its own argument).
func checkSpent(t *testing.T, name string, plan *Plan, b privacy.Budget) {
	t.Helper()
	ro, _ := b.Rho(privacy.Tight) // 0 for a pure budget
	approxEps, approxDelta := plan.ApproxTotal()
	pureEps := 0.0
	for _, c := range plan.Charges {
		if c.Kind == privacy.Pure {
			pureEps += c.Eps
		}
	}
	switch {
	case approxDelta > 0:
		if approxDelta != b.Delta || approxEps+pureEps > b.Eps || (!strings.HasPrefix(name, "dpam") && !relClose(approxEps+pureEps, b.Eps, 1e-8)) {
			t.Errorf("%s: paper charges ε = %v + %v, δ = %v; want ε, δ = %v", name, approxEps, pureEps, approxDelta, b)
		}
	case b.Delta == 0 || strings.Contains(name, "paper"):
		if pureEps > b.Eps || !relClose(pureEps, b.Eps, 1e-8) {
			t.Errorf("%s: pure charges ε = %v, want %v", name, pureEps, b.Eps)
		}
	default:
		if plan.Total() > ro || !relClose(plan.Total(), ro, 1e-8) {
			t.Errorf("%s: zCDP charges ρ = %v, want %v", name, plan.Total(), ro)
		}
	}
}

// TestAddRemoveSensitivity: the sensitivities the plans made with n̂
// calibrate for are K·A/n̂ (DPFW's and MWEM's scores; A the largest |q_j|,
// here the workload's weight 0.5), K·A/B (SMD's draws, B = ⌊n̂/T⌋) and
// K/n̂ (DPAM's histogram), against R/n, R/B and √2/n under replace-one; and
// MWEM's measurement noise is K times that of one record.
func TestAddRemoveSensitivity(t *testing.T) {
	wl := fwWorkload(t, `{"a": 3, "b": 4, "c": 2}`, `{"families": [{"type": "marginals", "weight": 0.5, "sets": [["a", "b"], ["c"]]}]}`)
	const n, T = 1000, 20
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	cases := []struct {
		name      string
		solver    func() Solver
		param     string
		addRemove func(K float64) float64 // want, under add/remove with K
		replace   float64                 // want, under replace-one
	}{
		{"dpfw/tuned", func() Solver { return &DPFW{T: T} }, "sensitivity", func(K float64) float64 { return K * 0.5 / n }, 0.5 / n},
		{"dpfw/paper", func() Solver { return &DPFW{Setting: Paper, T: T} }, "sensitivity", func(K float64) float64 { return K * 0.5 / n }, 0.5 / n},
		{"smd/tuned", func() Solver { return &SMD{T: T} }, "sensitivity", func(K float64) float64 { return K * 0.5 / (n / T) }, 0.5 / (n / T)},
		{"smd/paper", func() Solver { return &SMD{Setting: Paper, T: T} }, "sensitivity", func(K float64) float64 { return K * 0.5 / (n / T) }, 0.5 / (n / T)},
		{"dpam/tuned", func() Solver { return &DPAM{T: T} }, "sensitivity", func(K float64) float64 { return K / n }, 0},
		{"mwem/tuned", func() Solver { return &MWEM{T: T} }, "sensitivity", func(K float64) float64 { return K * 0.5 / n }, 0},
		{"mwem/paper", func() Solver { return &MWEM{Setting: Paper, T: T} }, "sensitivity", func(K float64) float64 { return K * 0.5 / n }, 0},
	}
	for _, c := range cases {
		var noise1 float64
		for _, K := range []int{1, 2, 7} {
			sh := &Shape{Budget: b, Neighbours: AddRemove, UnitRows: K, N: n, Workload: wl}
			plan := internalPlan(t, c.solver(), sh)
			got := plan.Params[c.param]
			if c.addRemove != nil {
				if want := c.addRemove(float64(K)); !relClose(got, want, 1e-12) {
					t.Errorf("%s: %s(K = %d) = %v, want %v", c.name, c.param, K, got, want)
				}
			}
			if strings.HasPrefix(c.name, "mwem") {
				// The measurement's noise in counts scales with K (T fixed).
				if K == 1 {
					noise1 = plan.Params["noise_counts"]
				} else if nc := plan.Params["noise_counts"]; !relClose(nc, float64(K)*noise1, 1e-8) {
					t.Errorf("%s: noise_counts(K = %d) = %v, want %d × %v", c.name, K, nc, K, noise1)
				}
			}
		}
		if c.replace > 0 {
			sh := &Shape{Budget: b, Neighbours: ReplaceOne, N: n, Workload: wl}
			if got := internalPlan(t, c.solver(), sh).Params[c.param]; !relClose(got, c.replace, 1e-12) {
				t.Errorf("%s: %s under replace-one = %v, want %v", c.name, c.param, got, c.replace)
			}
		}
	}
}

// TestAddRemoveCountNoise draws the noisy count 20,000 times (n = 10^4,
// far from the clamp at 1) and checks its mean and variance against the
// stated noise: σ² for the discrete Gaussian (σ ≥ 1: the exact variance is
// within 1e-80 of it), 2e^{−1/b}/(1 − e^{−1/b})² for the discrete Laplace
// of scale b. Tolerances are 5.3 standard errors (mean: σ/√N; variance:
// σ²√((κ − 1)/N) with kurtosis κ = 3 or 6), a false-failure rate below
// 1e-6 per check. The noise scales with K at the same budget.
func TestAddRemoveCountNoise(t *testing.T) {
	const draws, n, z = 20_000, 10_000, 5.3
	for _, c := range []struct {
		name string
		plan func(K int) (*countPlan, float64, error)
	}{
		{"gaussian", func(K int) (*countPlan, float64, error) { return planCountZCDP("test", 0.02, K) }},
		{"laplace", func(K int) (*countPlan, float64, error) { return planCountPure("test", 1, K) }},
	} {
		c1, _, err := c.plan(1)
		if err != nil {
			t.Fatal(err)
		}
		for _, K := range []int{1, 3} {
			cp, _, err := c.plan(K)
			if err != nil {
				t.Fatal(err)
			}
			if !relClose(cp.noise, float64(K)*c1.noise, 1e-8) {
				t.Errorf("%s: noise(K = %d) = %v, want %d × %v", c.name, K, cp.noise, K, c1.noise)
			}
			wantVar, kurt := cp.noise*cp.noise, 3.0
			if cp.lap != nil {
				e := math.Exp(-1 / cp.noise)
				wantVar, kurt = 2*e/((1-e)*(1-e)), 6
			}
			r := privacy.NewSeeded(uint64(K))
			var sum, sum2 float64
			for range draws {
				x := float64(cp.estimate(r, n) - n)
				sum += x
				sum2 += x * x
			}
			mean := sum / draws
			v := sum2/draws - mean*mean
			if se := math.Sqrt(wantVar / draws); math.Abs(mean) > z*se {
				t.Errorf("%s, K = %d: mean noise %.3f, want 0 ± %.3f", c.name, K, mean, z*se)
			}
			if se := wantVar * math.Sqrt((kurt-1)/draws); math.Abs(v-wantVar) > z*se {
				t.Errorf("%s, K = %d: noise variance %.1f, want %.1f ± %.1f", c.name, K, v, wantVar, z*se)
			}
		}
	}
	// The clamp: n̂ is at least 1.
	cp, _, _ := planCountPure("test", 0.01, 1)
	r := privacy.NewSeeded(1)
	for range 1000 {
		if got := cp.estimate(r, 1); got < 1 {
			t.Fatalf("estimate(1) = %d, want at least 1", got)
		}
	}
}

// TestSMDAssignAddRemove: under add/remove SMD assigns records to batches
// by their cell and copy alone: adding records (to a cell already present
// and to a new one) leaves every other record's batch unchanged, and the
// batches hold every record once. With 20,000 records over T = 20 batches
// the batch sizes pass a χ² test of uniformity at a false-failure rate of
// 1e-6 (19 degrees of freedom).
func TestSMDAssignAddRemove(t *testing.T) {
	wl := fwWorkload(t, `{"a": 10, "b": 10, "c": 10}`, `{"families": [{"type": "marginals", "sets": [["a", "b"], ["c"]]}]}`)
	src := privacy.NewSeeded(9)
	var records [][]int
	for range 20_000 {
		records = append(records, []int{int(src.Uint64N(10)), int(src.Uint64N(3)), int(src.Uint64N(10))})
	}
	const T = 20
	batches := func(recs [][]int) map[string][]int {
		p := fwProblem(t, wl, recs, privacy.Budget{Eps: 1, Delta: 1e-9}, 1)
		r := &smdRun{sp: &smdPlan{T: T}}
		r.assign(p.Counts, newSMDBatcher(privacy.NewSeeded(77), T))
		if r.start[T] != len(recs) {
			t.Fatalf("%d records in the batches, want %d", r.start[T], len(recs))
		}
		// Each cell's copies' batches, in copy order (assign fills each
		// batch in cell order, so a cell's copies appear by increasing
		// batch; compare the multisets).
		got := map[string][]int{}
		for b := range T {
			for _, e := range r.rec[r.start[b]:r.start[b+1]] {
				key := fmt.Sprint(p.Counts.Codes(int(e)))
				got[key] = append(got[key], b)
			}
		}
		return got
	}
	before := batches(records)
	sizes := make([]float64, T)
	for _, bs := range before {
		for _, b := range bs {
			sizes[b]++
		}
	}
	chi2 := 0.0
	for _, s := range sizes {
		d := s - float64(len(records))/T
		chi2 += d * d / (float64(len(records)) / T)
	}
	if lim := (distuv.ChiSquared{K: T - 1}).Quantile(1 - 1e-6); chi2 > lim {
		t.Errorf("batch sizes %v: χ² = %.1f above %.1f", sizes, chi2, lim)
	}
	added := append(append([][]int(nil), records...), []int{3, 1, 4}, []int{9, 9, 9})
	after := batches(added)
	for key, bs := range before {
		a := after[key]
		if key == fmt.Sprint([]int32{3, 1, 4}) {
			// One more copy: the earlier copies keep their batches.
			if len(a) != len(bs)+1 || !multisetContains(a, bs) {
				t.Errorf("cell %s: batches %v after adding a copy, before %v", key, a, bs)
			}
			continue
		}
		if !reflect.DeepEqual(a, bs) {
			t.Errorf("cell %s: batches %v after adding records elsewhere, before %v", key, a, bs)
		}
	}
	if len(after[fmt.Sprint([]int32{9, 9, 9})]) != 1 {
		t.Errorf("the new cell's record: batches %v", after[fmt.Sprint([]int32{9, 9, 9})])
	}
}

// multisetContains reports whether the multiset a contains b.
func multisetContains(a, b []int) bool {
	c := map[int]int{}
	for _, v := range a {
		c[v]++
	}
	for _, v := range b {
		if c[v]--; c[v] < 0 {
			return false
		}
	}
	return true
}

// TestAddRemoveStepsAllocate: DPFW's and SMD's iterations allocate nothing
// under add/remove either (the batches are built once).
func TestAddRemoveStepsAllocate(t *testing.T) {
	ctx := context.Background()
	team := par.NewTeam(1)
	defer team.Close()
	p := arProblem(t, privacy.Budget{Eps: 1, Delta: 1e-9}, 2, false, 1)
	q, _, fp, err := (&DPFW{T: 50}).start(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	fw := newFWRun(q, fp, team, 0)
	it := 0
	if a := testing.AllocsPerRun(20, func() { fw.step(it); it++ }); a != 0 {
		t.Errorf("DPFW step: %v allocations", a)
	}
	p = arProblem(t, privacy.Budget{Eps: 1, Delta: 1e-9}, 2, false, 1)
	s := &SMD{T: 50}
	q, _, sp, err := begin(ctx, p, s.plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newSMDRun(q, sp, team, 0)
	if err != nil {
		t.Fatal(err)
	}
	it = 0
	if a := testing.AllocsPerRun(20, func() { r.step(it); it++ }); a != 0 {
		t.Errorf("SMD step: %v allocations", a)
	}
}

// TestAddRemoveFactoredMatchesExplicit: under add/remove, DPFW and SMD
// draw the same n̂ and make the same selections on both models at the same
// seed, and release the same distribution (every workload answer within
// 1e-9; see TestFactoredSeedsMatchExplicit for why the draws agree).
func TestAddRemoveFactoredMatchesExplicit(t *testing.T) {
	for _, c := range []struct {
		name string
		s    func() Solver
	}{
		{"dpfw", func() Solver { return &DPFW{T: 60} }},
		{"smd", func() Solver { return &SMD{T: 60, Last: true} }},
	} {
		b := privacy.Budget{Eps: 1, Delta: 1e-9}
		pe := arProblem(t, b, 2, false, 7)
		pf := arProblem(t, b, 2, true, 7)
		re, err := c.s().Solve(context.Background(), pe)
		if err != nil {
			t.Fatal(err)
		}
		rf, err := c.s().Solve(context.Background(), pf)
		if err != nil {
			t.Fatal(err)
		}
		defer rf.Model.Close()
		if a, b := re.Plan.Params["n_estimate"], rf.Plan.Params["n_estimate"]; a != b {
			t.Fatalf("%s: n_estimate %v explicit, %v factored", c.name, a, b)
		}
		if se, sf := selections(re.Trace), selections(rf.Trace); !reflect.DeepEqual(se, sf) {
			t.Fatalf("%s: selections differ:\nexplicit %v\nfactored %v", c.name, se, sf)
		}
		ae := make([]float64, pe.Workload.M())
		pe.Op.Answer(re.D, ae)
		af := modelAnswers(t, rf.Model, pf.Workload)
		for j := range ae {
			if math.Abs(ae[j]-af[j]) > 1e-9 {
				t.Fatalf("%s: answer %d: %v explicit, %v factored", c.name, j, ae[j], af[j])
			}
		}
	}
}

func TestUnresolvedN(t *testing.T) {
	tests := []struct {
		nHat, se float64
		warn     bool
	}{
		{48842, 60, false},
		{601, 407, true},  // affairs at ε = 0.1: within two errors of zero
		{900, 407, false}, // two errors from zero
		{18, 407, true},
		{1, 0, false}, // n public (replace-one): no error, no warning
	}
	for _, tt := range tests {
		got := unresolvedN(tt.nHat, tt.se)
		if (got != "") != tt.warn {
			t.Errorf("unresolvedN(%v, %v) = %q, want a warning %v", tt.nHat, tt.se, got, tt.warn)
		}
	}
}

func TestEstimateNSE(t *testing.T) {
	// Four totals of variance 100 each: the mean's error is 10/√4 = 5.
	if got, want := estimateNSE([]float64{100, 100, 100, 100}), 5.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("estimateNSE(4 × 100) = %v, want %v", got, want)
	}
	// One precise total dominates: 1/√(1/1 + 1/1e6) ≈ 1.
	if got := estimateNSE([]float64{1, 1e6}); math.Abs(got-1) > 1e-6 {
		t.Errorf("estimateNSE(1, 1e6) = %v, want ≈ 1", got)
	}
}

// TestProjectNEstimateSE: the explicit project solve under add/remove
// records n̂'s standard error, the one its tables' σ and sizes give
// (public: it is set by the plan), and at ε = 1 on 48,842 records gives
// no warning (n̂ is tens of standard errors from zero for any seed).
func TestProjectNEstimateSE(t *testing.T) {
	fx := small(t)
	p := fx.problem(t, 1, 1e-9, 1)
	p.Neighbours = AddRemove
	res, err := (&Project{Setting: Tuned}).Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var vars []float64
	for _, g := range res.Plan.groups {
		if g.attrs != nil {
			vars = append(vars, float64(cellsOf(fx.wl.Domain(), g.attrs))*g.sigma*g.sigma)
		}
	}
	sd := res.Plan.stage.count.sd() // the staged plan's count is among n̂'s inputs
	vars = append(vars, sd*sd)
	if got, want := res.Plan.Params["n_estimate_se"], estimateNSE(vars); math.Abs(got-want) > 1e-9*want || want <= 0 {
		t.Errorf("n_estimate_se = %v, want %v", got, want)
	}
	if len(res.Plan.Warnings) != 0 {
		t.Errorf("warnings %q at ε = 1 on %d records", res.Plan.Warnings, p.N)
	}
}

// TestProjectFactoredNEstimateSE: the factored project solve (its measured
// plan, the adaptive rounds) records n̂'s standard error from the groups
// whose totals give n̂, as the explicit solve does.
func TestProjectFactoredNEstimateSE(t *testing.T) {
	fx := small(t)
	for _, adaptive := range []bool{false, true} {
		p := fx.problem(t, 1, 1e-9, 1)
		p.Neighbours = AddRemove
		p.Model = Factored
		p.Data = fx.counts
		if adaptive {
			setVariant(t, &experiment{adaptive: true})
		}
		res, err := (&Project{Setting: Tuned}).Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		got, want := res.Plan.Params["n_estimate_se"], groupsNSE(fx.wl.Domain(), res.Plan.groups)
		if !(want > 0) || math.Abs(got-want) > 1e-9*want {
			t.Errorf("adaptive %v: n_estimate_se = %v, want %v", adaptive, got, want)
		}
		if len(res.Plan.Warnings) != 0 {
			t.Errorf("adaptive %v: warnings %q at ε = 1 on %d records", adaptive, res.Plan.Warnings, p.N)
		}
	}
}
