package solvers

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dpsynth/synth/privacy"
)

// TestProjectStagedPlan: under add/remove the explicit tuned plan is
// staged: two charges (the record count, then the tables) that sum to the
// budget's ρ, the same whatever N the caller sets (n is private), and a
// second stage holding the workload's top two orders.
func TestProjectStagedPlan(t *testing.T) {
	fx := loadFixture(t, "adult-reduced", nil, 3)
	b := privacy.Budget{Eps: 0.1, Delta: 1e-9}
	rho, err := b.Rho(privacy.Tight)
	if err != nil {
		t.Fatal(err)
	}
	var first *Plan
	for _, n := range []int{0, 10, 1_000_000} {
		plan, err := (&Project{}).Plan(&Shape{Budget: b, Workload: fx.wl, N: n})
		if err != nil {
			t.Fatal(err)
		}
		st := plan.stage
		if st == nil || len(plan.Charges) != 2 || len(plan.groups) != 0 {
			t.Fatalf("N = %d: stage %v, %d charges, %d groups; want a stage, 2 charges, 0 groups", n, st != nil, len(plan.Charges), len(plan.groups))
		}
		if got := plan.Total(); math.Abs(got-rho) > 1e-6*rho || got > rho {
			t.Errorf("N = %d: charges total ρ %v, want %v", n, got, rho)
		}
		if want := len(downwardClosure(fx.wl, 2)) + len(downwardClosure(fx.wl, 3)); len(st.keep) != want || st.top != 3 {
			t.Errorf("N = %d: second stage of %d tables, top %d; want %d, 3", n, len(st.keep), st.top, want)
		}
		if first == nil {
			first = plan
			continue
		}
		for i, c := range plan.Charges {
			if c.Label != first.Charges[i].Label || c.Rho != first.Charges[i].Rho {
				t.Errorf("N = %d: charge %d = %q (ρ %v), want %q (ρ %v) as for N = 0", n, i, c.Label, c.Rho, first.Charges[i].Label, first.Charges[i].Rho)
			}
		}
	}
}

// TestProjectStagedChoice: the second stage measures C_R alone when the
// budget resolves C_{R−1} well at the n it is given (ν_{R−1} <= 0.05),
// C_{R−1} and C_R when it resolves it (ν_{R−1} <= 1.5, from the plan's
// stage_records on), and else C_{R−1} alone; each alone is calibrated
// within the stage's charge.
func TestProjectStagedChoice(t *testing.T) {
	fx := loadFixture(t, "adult-reduced", nil, 3)
	s := &Project{}
	sh := &Shape{Budget: privacy.Budget{Eps: 0.1, Delta: 1e-9}, Workload: fx.wl}
	plan, err := s.Plan(sh)
	if err != nil {
		t.Fatal(err)
	}
	st := plan.stage
	nu1 := s.ratio(sh, 2, plan.Params["rho"], 1) // ν₂ at one record (the whole ρ): ν₂(n) = nu1/n
	for _, tt := range []struct {
		name   string
		nHat   float64
		order  int // the highest order measured
		lowest int // the lowest
	}{
		{"resolved", nu1 / (0.97 * stageThreshold), 3, 2},
		{"resolved well", nu1 / (0.97 * stageTopThreshold), 3, 3},
		{"large", 1e9, 3, 3},
		{"not quite resolved well", nu1 / (1.03 * stageTopThreshold), 3, 2},
		{"unresolved", nu1 / (1.03 * stageThreshold), 2, 2},
		{"one record", 1, 2, 2},
		{"at the plan's records", st.records * (1 + 1e-9), 3, 2},
		{"below the plan's records", st.records * (1 - 1e-9), 2, 2},
	} {
		groups, order := st.choose(tt.nHat)
		if order != tt.order {
			t.Errorf("%s: choose(n̂ = %g) = order %d, want %d", tt.name, tt.nHat, order, tt.order)
			continue
		}
		if order == 3 && tt.lowest == 2 {
			if len(groups) != len(st.keep) || groups[0].sigma != st.keep[0].sigma {
				t.Errorf("%s: %d groups, want the plan's %d", tt.name, len(groups), len(st.keep))
			}
			continue
		}
		cost := 0.0
		for _, g := range groups {
			if len(g.attrs) != tt.lowest {
				t.Fatalf("%s: group %v, want %d-way tables only", tt.name, g.attrs, tt.lowest)
			}
			cost += privacy.GaussianCost(math.Sqrt(g.sens2), g.sigma).Rho
		}
		if want := len(downwardClosure(fx.wl, tt.lowest)); len(groups) != want || cost > st.rho || cost < 0.999*st.rho {
			t.Errorf("%s: %d %d-way tables costing ρ %v, want %d within the stage's %v", tt.name, len(groups), tt.lowest, cost, want, st.rho)
		}
	}
}

// TestProjectStagedSolve: a staged solve records what the count chose. At
// ε = 1 on 48,842 records it measures the workload's pairs alone, at
// ε = 0.01 the pairs and the one-way tables; with a threshold no table
// meets it measures C_{R−1} (the one-way tables of the 2-way workload)
// alone. In each case n̂'s standard error is that of the count and the
// measured tables.
func TestProjectStagedSolve(t *testing.T) {
	fx := small(t)
	for _, tt := range []struct {
		name      string
		eps       float64
		threshold float64
		order     int
		groups    int
		lower     bool // order_1 recorded
	}{
		{"resolved well", 1, 0, 2, 3, false},
		{"resolved", 0.01, 0, 2, 3 + 3, true},
		{"unresolved", 1, 1e-12, 1, 3, true},
	} {
		p := fx.problem(t, tt.eps, 1e-9, 1)
		p.Neighbours = AddRemove
		res, err := (&Project{Threshold: tt.threshold}).Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		pr := res.Plan.Params
		if int(pr["tables_order"]) != tt.order || len(res.Plan.groups) != tt.groups || len(res.Bounds) != tt.groups {
			t.Errorf("%s: tables_order %v, %d groups, %d bounds; want %d, %d, %d", tt.name, pr["tables_order"], len(res.Plan.groups), len(res.Bounds), tt.order, tt.groups, tt.groups)
		}
		if _, ok := pr["order_2"]; ok != (tt.order == 2) {
			t.Errorf("%s: order_2 recorded %v, want %v", tt.name, ok, tt.order == 2)
		}
		if _, ok := pr["order_1"]; ok != tt.lower {
			t.Errorf("%s: order_1 recorded %v, want %v", tt.name, ok, tt.lower)
		}
		warned := false
		for _, w := range res.Plan.Warnings {
			warned = warned || strings.Contains(w, "is below the") && strings.Contains(w, "marginals were measured")
		}
		if warned != (tt.order == 1) {
			t.Errorf("%s: warnings %q; want the dropped order's warning %v", tt.name, res.Plan.Warnings, tt.order == 1)
		}
		if c := pr["count_estimate"]; math.Abs(c-float64(p.N)) > 6*res.Plan.stage.count.sd() {
			t.Errorf("%s: count_estimate %v, more than 6σ from n = %d", tt.name, c, p.N)
		}
		var vars []float64
		for _, g := range res.Plan.groups {
			vars = append(vars, float64(cellsOf(fx.wl.Domain(), g.attrs))*g.sigma*g.sigma)
		}
		sd := res.Plan.stage.count.sd()
		if got, want := pr["n_estimate_se"], estimateNSE(append(vars, sd*sd)); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: n_estimate_se = %v, want %v", tt.name, got, want)
		}
	}
}
