package solvers

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/dpsynth/synth/privacy"
)

// The conformance suite: every registered solver, in both settings, must
// pass these. Solver-specific tests live next to each solver.

func settingsOf(t *testing.T, name string) []Setting {
	s, _ := New(name, Paper)
	if _, err := s.Plan(&Shape{Neighbours: ReplaceOne, Budget: privacy.Budget{Eps: 1, Delta: 1e-9}, N: 1000, Workload: small(t).wl}); errors.Is(err, ErrUnsupported) {
		return []Setting{Tuned}
	}
	return []Setting{Tuned, Paper}
}

func TestConformanceRegistry(t *testing.T) {
	for _, want := range []string{"dpfw", "dpam", "smd", "mwem", "project"} {
		if _, err := New(want, Tuned); err != nil {
			t.Errorf("New(%q): %v", want, err)
		}
	}
}

func TestConformancePlan(t *testing.T) {
	fx := small(t)
	for _, name := range Names() {
		for _, set := range settingsOf(t, name) {
			s, _ := New(name, set)
			for _, b := range []privacy.Budget{{Eps: 0.1, Delta: 1e-9}, {Eps: 1, Delta: 1e-9}, {Eps: 4, Delta: 1e-6}} {
				p0, err := s.Plan(&Shape{Neighbours: ReplaceOne, Budget: b, Workload: fx.wl})
				if err != nil {
					t.Errorf("%s/%s: Plan(%v, N unknown): %v", name, set, b, err)
					continue
				}
				p1, err := s.Plan(&Shape{Neighbours: ReplaceOne, Budget: b, N: 48842, Workload: fx.wl})
				if err != nil {
					t.Errorf("%s/%s: Plan(%v, N = 48842): %v", name, set, b, err)
					continue
				}
				if a, b := totalCost(p0.Charges), totalCost(p1.Charges); math.Abs(a.Rho-b.Rho) > 1e-9*a.Rho || a.Eps != b.Eps || a.Delta != b.Delta {
					t.Errorf("%s/%s: total cost depends on N: %+v vs %+v", name, set, a, b)
				}
				led, _ := privacy.NewLedger(b, nil)
				if err := led.Check(p1.Charges...); err != nil {
					t.Errorf("%s/%s: plan exceeds its budget %v: %v", name, set, b, err)
				}
				if len(p1.Charges) == 0 {
					t.Errorf("%s/%s: plan has no charges", name, set)
				}
			}
		}
	}
}

func TestConformanceSolve(t *testing.T) {
	fx := small(t)
	for _, name := range Names() {
		for _, set := range settingsOf(t, name) {
			s, _ := New(name, set)
			p := fx.problem(t, 1, 1e-9, 7)
			plan, err := s.Plan(&p.Shape)
			if err != nil {
				t.Fatalf("%s/%s: Plan: %v", name, set, err)
			}
			res, err := s.Solve(context.Background(), p)
			if err != nil {
				t.Fatalf("%s/%s: Solve: %v", name, set, err)
			}
			if err := checkDistribution(res.D); err != nil {
				t.Errorf("%s/%s: %v", name, set, err)
			}
			if got := p.Ledger.Charges(); !reflect.DeepEqual(got, plan.Charges) {
				t.Errorf("%s/%s: ledger charges %v, want the plan's %v", name, set, got, plan.Charges)
			}
			// Seeded determinism.
			p2 := fx.problem(t, 1, 1e-9, 7)
			res2, err := s.Solve(context.Background(), p2)
			if err != nil {
				t.Fatalf("%s/%s: second Solve: %v", name, set, err)
			}
			if !reflect.DeepEqual(res.D, res2.D) {
				t.Errorf("%s/%s: two seeded runs differ", name, set)
			}
			// A run over budget is refused before any private step.
			p3 := fx.problem(t, 1, 1e-9, 7)
			if len(plan.Charges) > 0 {
				if err := p3.Ledger.Charge(privacy.Charge{Label: "earlier release", Cost: privacy.ZCDPCost(plan.Total() + 1)}); err == nil {
					if _, err := s.Solve(context.Background(), p3); !errors.Is(err, privacy.ErrBudgetExceeded) {
						t.Errorf("%s/%s: Solve on a spent ledger: err = %v, want ErrBudgetExceeded", name, set, err)
					}
				}
			}
		}
	}
}

func TestConformanceCancel(t *testing.T) {
	fx := small(t)
	for _, name := range Names() {
		s, _ := New(name, Tuned)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		p := fx.problem(t, 1, 1e-9, 1)
		if _, err := s.Solve(ctx, p); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Solve with a cancelled context: err = %v, want context.Canceled", name, err)
		}
	}
}

// TestConformanceNoPrivacy runs each solver with its private steps replaced
// by exact ones on the benchmark protocol: the workload max error must fall
// below 0.02. Sign and step-size errors fail here.
func TestConformanceNoPrivacy(t *testing.T) {
	if testing.Short() {
		t.Skip("adult-reduced solves skipped in -short mode")
	}
	fx := adultReduced(t)
	for _, name := range Names() {
		s, _ := New(name, Tuned)
		p := fx.problem(t, 1, 1e-9, 3)
		p.noPrivacy = true
		res, err := s.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		mx, mean := fx.maxError(t, p.Op, res.D)
		t.Logf("%s without privacy: max error %.4f, mean %.2e, %d iterations", name, mx, mean, len(res.Trace))
		if mx >= 0.02 {
			t.Errorf("%s without privacy: max error %.4f, want < 0.02", name, mx)
		}
	}
}

// TestConformanceBeatsUniform: at ε = 1, δ = 1e-9 on the benchmark protocol
// every solver's max error is below the uniform distribution's.
func TestConformanceBeatsUniform(t *testing.T) {
	if testing.Short() {
		t.Skip("adult-reduced solves skipped in -short mode")
	}
	fx := adultReduced(t)
	uniform := make([]float64, fx.counts.Domain().Len())
	_ = uniform
	p := fx.problem(t, 1, 1e-9, 0)
	u := make([]float64, p.Op.K())
	for i := range u {
		u[i] = 1 / float64(len(u))
	}
	umax, _ := fx.maxError(t, p.Op, u)
	for _, name := range Names() {
		s, _ := New(name, Tuned)
		p := fx.problem(t, 1, 1e-9, 11)
		res, err := s.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		mx, mean := fx.maxError(t, p.Op, res.D)
		t.Logf("%s at ε = 1: max error %.4f (uniform %.4f), mean %.2e", name, mx, umax, mean)
		if !(mx < umax) || math.IsNaN(mx) {
			t.Errorf("%s at ε = 1: max error %.4f, not below uniform's %.4f", name, mx, umax)
		}
	}
}

// totalCost sums the charges' ρ (zCDP and pure) and (ε, δ) (approximate).
func totalCost(cs []privacy.Charge) (t struct{ Rho, Eps, Delta float64 }) {
	for _, c := range cs {
		if c.Kind == privacy.Approx {
			t.Eps += c.Eps
			t.Delta += c.Delta
		} else {
			t.Rho += c.Rho
		}
	}
	return t
}

// TestConformanceAddRemove: no registered solver refuses the default
// relation, add/remove (the zero Shape.Neighbours), in its tuned setting or
// in a paper setting whose accounting allows it (project's paper setting
// measures no marginal table and spends a share on a noisy record count);
// each plans with N unknown and charges exactly that plan when it solves.
func TestConformanceAddRemove(t *testing.T) {
	fx := small(t)
	for _, name := range Names() {
		for _, set := range settingsOf(t, name) {
			s, _ := New(name, set)
			b := privacy.Budget{Eps: 1, Delta: 1e-9}
			plan, err := s.Plan(&Shape{Budget: b, Workload: fx.wl})
			if err != nil {
				t.Errorf("%s/%s under add/remove: %v", name, set, err)
				continue
			}
			p := fx.problem(t, 1, 1e-9, 5)
			p.Neighbours = AddRemove
			res, err := s.Solve(context.Background(), p)
			if err != nil {
				t.Errorf("%s/%s: Solve under add/remove: %v", name, set, err)
				continue
			}
			if got := p.Ledger.Charges(); !reflect.DeepEqual(got, plan.Charges) {
				t.Errorf("%s/%s: ledger charges %v, want the plan's %v", name, set, got, plan.Charges)
			}
			if err := checkDistribution(res.D); err != nil {
				t.Errorf("%s/%s: %v", name, set, err)
			}
			if _, ok := res.Plan.Params["n_estimate"]; !ok {
				t.Errorf("%s/%s: no n_estimate under add/remove", name, set)
			}
		}
	}
}
