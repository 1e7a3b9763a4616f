package solvers

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/dpsynth/synth/privacy"
)

// The factored model under the conformance rules: plans independent of N,
// within budget, charged exactly; a distribution whose marginals sum to 1;
// the workload answered well at ε = 1; cancellation honoured.

// spyData serves the counts and records whether it was read.
type spyData struct {
	Data
	reads int
}

func (s *spyData) Marginals(ctx context.Context, sets [][]int) ([][]int64, error) {
	s.reads++
	return s.Data.Marginals(ctx, sets)
}

func factoredProblem(t *testing.T, fx *fixture, eps float64, seed uint64, capBytes uint64) (*Problem, *spyData) {
	t.Helper()
	b := privacy.Budget{Eps: eps, Delta: 1e-9}
	led, err := privacy.NewLedger(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	spy := &spyData{Data: fx.counts}
	return &Problem{
		Shape: Shape{Neighbours: ReplaceOne, Budget: b, N: int(fx.counts.Total()), Workload: fx.wl, Model: Factored, MaxModelBytes: capBytes},
		Data:  spy, Rand: privacy.NewSeeded(seed), Ledger: led,
	}, spy
}

func TestFactoredConformance(t *testing.T) {
	cases := []struct {
		name     string
		fx       *fixture
		cap      uint64
		adaptive bool
		maxErr   float64
		rounds   int // Project.Rounds (0: tuned)
		batch    int // selections per fit
	}{
		{"one tree", small(t), 0, false, 0.01, 0, 0},
		{"adaptive", loadFixture(t, "adult-reduced", nil, 3), 64 << 10, true, 0.06, 0, 1},
		// 200 nominal rounds: selections in batches of 4 between fits.
		{"adaptive batched", loadFixture(t, "adult-reduced", nil, 3), 64 << 10, true, 0.06, 200, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Project{Rounds: c.rounds}
			for _, nb := range []Neighbours{ReplaceOne, AddRemove} {
				p0, err := s.Plan(&Shape{Budget: privacy.Budget{Eps: 1, Delta: 1e-9}, Workload: c.fx.wl, Model: Factored, MaxModelBytes: c.cap, Neighbours: nb})
				if err != nil {
					t.Fatal(err)
				}
				p1, err := s.Plan(&Shape{Budget: privacy.Budget{Eps: 1, Delta: 1e-9}, N: 48842, Workload: c.fx.wl, Model: Factored, MaxModelBytes: c.cap, Neighbours: nb})
				if err != nil {
					t.Fatal(err)
				}
				if (p1.factored.adaptive) != c.adaptive {
					t.Fatalf("adaptive = %v, want %v", p1.factored.adaptive, c.adaptive)
				}
				if !reflect.DeepEqual(p0.Charges, p1.Charges) {
					t.Errorf("%v: the factored plan depends on N", nb)
				}
				led, _ := privacy.NewLedger(privacy.Budget{Eps: 1, Delta: 1e-9}, nil)
				if err := led.Check(p1.Charges...); err != nil {
					t.Errorf("%v: plan exceeds its budget: %v", nb, err)
				}
			}
			p, _ := factoredProblem(t, c.fx, 1, 3, c.cap)
			plan, _ := s.Plan(&p.Shape)
			res, err := s.Solve(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Model.Close()
			if got := p.Ledger.Charges(); !reflect.DeepEqual(got, plan.Charges) {
				t.Errorf("charged %d charges, planned %d", len(got), len(plan.Charges))
			}
			if res.D != nil || res.Model == nil || len(res.Cliques) == 0 {
				t.Fatalf("result: D %v, model %v, cliques %v", res.D != nil, res.Model != nil, res.Cliques)
			}
			if c.adaptive {
				if spent, left := res.Plan.Params["rho_rounds_spent"], plan.Charges[len(plan.Charges)-1].Rho; !(spent <= left) || spent < 0.99*left {
					t.Errorf("rounds spent ρ %v of their charge %v: want all of it and never more", spent, left)
				}
				pp := res.Plan.Params
				if got := int(pp["batch"]); got != c.batch {
					t.Errorf("batch = %d, want %d", got, c.batch)
				}
				// Every fit but the last takes a whole batch.
				if fits, rounds := pp["fits"], pp["rounds"]; rounds == 0 || fits != math.Ceil(rounds/float64(c.batch)) {
					t.Errorf("%v fits for %v rounds in batches of %d", fits, rounds, c.batch)
				}
			}
			// The workload's answers from the model's marginals.
			worst := 0.0
			for _, m := range c.fx.wl.Marginals() {
				out := make([]float64, m.Cells)
				if err := res.Model.Marginal(m.Attrs, out); err != nil {
					t.Fatal(err)
				}
				sum := 0.0
				for i, v := range out {
					sum += v
					worst = max(worst, math.Abs(v-c.fx.answers[m.Offset+i]))
				}
				if math.Abs(sum-1) > 1e-9 {
					t.Errorf("marginal %v sums to %v", m.Attrs, sum)
				}
			}
			if worst > c.maxErr {
				t.Errorf("max error of the model's answers at ε = 1: %.4g, want <= %g", worst, c.maxErr)
			}
			// Cancellation.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			p2, _ := factoredProblem(t, c.fx, 1, 3, c.cap)
			if _, err := s.Solve(ctx, p2); !errors.Is(err, context.Canceled) {
				t.Errorf("Solve on a cancelled context: %v, want context.Canceled", err)
			}
		})
	}
}

// TestFactoredExactFit: without noise the factored fit reproduces the
// measured marginals (a wrong sign, step or broadcast shows up here).
func TestFactoredExactFit(t *testing.T) {
	fx := small(t)
	p, _ := factoredProblem(t, fx, 1, 1, 0)
	p.noPrivacy = true
	s := &Project{FitIters: 5000, FitTol: 1e-12, Converge: true}
	res, err := s.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	for _, m := range fx.wl.Marginals() {
		out := make([]float64, m.Cells)
		if err := res.Model.Marginal(m.Attrs, out); err != nil {
			t.Fatal(err)
		}
		for i, v := range out {
			if want := fx.answers[m.Offset+i]; math.Abs(v-want) > 1e-4 {
				t.Errorf("marginal %v cell %d = %.6f, want %.6f", m.Attrs, i, v, want)
			}
		}
	}
}

// TestFactoredRefusesOverspend: a ledger that cannot hold the plan refuses
// it before any count is read.
func TestFactoredRefusesOverspend(t *testing.T) {
	fx := loadFixture(t, "adult-reduced", nil, 3)
	p, spy := factoredProblem(t, fx, 1, 1, 64<<10)
	if err := p.Ledger.Charge(privacy.Charge{Label: "earlier", Cost: privacy.ZCDPCost(1e-4)}); err != nil {
		t.Fatal(err)
	}
	_, err := (&Project{}).Solve(context.Background(), p)
	if !errors.Is(err, privacy.ErrBudgetExceeded) {
		t.Fatalf("Solve over budget: %v, want ErrBudgetExceeded", err)
	}
	if spy.reads != 0 {
		t.Errorf("the data was read %d times before the refusal", spy.reads)
	}
}

func TestSupportSigmasRule(t *testing.T) {
	if got := supportSigmas(); got != 3 {
		t.Errorf("supportSigmas() = %v, want 3", got)
	}
	setVariant(t, &experiment{supportK: -1})
	if got := supportSigmas(); got != 0 {
		t.Errorf("supportSigmas with the experiment switch off = %v, want 0", got)
	}
}
