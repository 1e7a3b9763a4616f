package solvers

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

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
