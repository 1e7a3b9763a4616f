package solvers

import (
	"math"
	"strings"
	"testing"

	"github.com/dpsynth/synth/privacy"
)

// TestPlanNoise: the noise a plan lists agrees with its charges. Every
// listed σ is the one its Gaussian charge was calibrated to, ρ = Δ²/(2σ²)
// (Δ = √2 for a marginal under replace-one, 1 under add/remove; the staged
// tables share one charge, ρ = tables·Δ²/(2σ²), whether the count keeps
// both orders, the lower alone or the higher alone); a marginal carries its
// cells; the record count and tuned MWEM's counts are one count each; the
// factored model's adaptive rounds are reported, not listed; a solver whose
// noise is in its selections lists only its record count.
func TestPlanNoise(t *testing.T) {
	fx := loadFixture(t, "adult-reduced", nil, 2)
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	dom := fx.wl.Domain()
	sets1, sets2 := len(downwardClosure(fx.wl, 1)), len(downwardClosure(fx.wl, 2))
	for _, tt := range []struct {
		name     string
		solver   Solver
		shape    Shape
		lines    int  // noise lines
		adaptive bool // the plan has adaptive rounds
		// sens2 is Δ² over the charge behind line i (the charge labelled
		// with on; "": the plan's i-th charge), ρ = sens2/(2σ²).
		sens2 func(i int, plan *Plan) (float64, string)
	}{
		{"explicit, replace-one", &Project{}, Shape{Neighbours: ReplaceOne, N: 48842}, sets1 + sets2, false,
			func(int, *Plan) (float64, string) { return 2, "" }},
		{"explicit, add/remove (staged)", &Project{}, Shape{Neighbours: AddRemove}, 4, false,
			func(i int, plan *Plan) (float64, string) {
				switch i {
				case 0:
					return 1, "on the record count"
				case 1:
					return float64(sets2), "the tables" // the order-2 tables alone, in the same charge
				case 2:
					return float64(sets1 + sets2), "the tables"
				}
				return float64(sets1), "the tables" // the order-1 tables alone, in the same charge
			}},
		{"factored, adaptive", &Project{}, Shape{Neighbours: AddRemove, Model: Factored, MaxModelBytes: 64 << 10}, len(dom.Sizes()), true,
			func(int, *Plan) (float64, string) { return 1, "" }},
		{"mwem, add/remove, T set", &MWEM{Setting: Tuned, T: 50}, Shape{Neighbours: AddRemove}, 2, false,
			func(i int, plan *Plan) (float64, string) {
				if i == 0 {
					return 1, "on the record count"
				}
				return float64(plan.Iterations), "measurements of one count" // T counts of sensitivity 1
			}},
		{"dpfw, add/remove", &DPFW{Setting: Tuned}, Shape{Neighbours: AddRemove}, 1, false,
			func(int, *Plan) (float64, string) { return 1, "on the record count" }},
		{"dpfw, replace-one", &DPFW{Setting: Tuned}, Shape{Neighbours: ReplaceOne, N: 48842}, 0, false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sh := tt.shape
			sh.Budget, sh.Workload = b, fx.wl
			plan, err := tt.solver.Plan(&sh)
			if err != nil {
				t.Fatal(err)
			}
			list, adaptive := plan.Noise(fx.wl)
			if len(list) != tt.lines || adaptive != tt.adaptive {
				t.Fatalf("Noise() = %d lines, adaptive %v; want %d, %v (%+v)", len(list), adaptive, tt.lines, tt.adaptive, list)
			}
			for i, n := range list {
				if !(n.Sigma > 0) || math.IsInf(n.Sigma, 0) {
					t.Fatalf("line %d %+v: σ not finite and positive", i, n)
				}
				switch {
				case strings.HasPrefix(n.Table, "marginal {"):
					cells := int64(1)
					for _, name := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(n.Table, "marginal {"), "}"), ", ") {
						a, ok := dom.Index(name)
						if !ok {
							t.Fatalf("line %d %+v: no attribute %q", i, n, name)
						}
						cells *= int64(dom.Attr(a).Size())
					}
					if n.Cells != cells {
						t.Errorf("line %d %+v: %d cells, want %d", i, n, n.Cells, cells)
					}
				case n.Table == "the record count" || strings.HasSuffix(n.Table, "measured counts"):
					if n.Cells != 1 {
						t.Errorf("line %d %+v: %d cells, want 1", i, n, n.Cells)
					}
				}
				s2, on := tt.sens2(i, plan)
				c := chargeOn(t, plan, i, on)
				if want := math.Sqrt(s2 / (2 * c.Rho)); math.Abs(n.Sigma-want) > 1e-6*want {
					t.Errorf("line %d %q: σ %v, want %v from the charge %q (ρ %v)", i, n.Table, n.Sigma, want, c.Label, c.Rho)
				}
			}
		})
	}
}

// chargeOn returns the plan's charge whose label contains on, or its i-th
// charge when on is empty.
func chargeOn(t *testing.T, plan *Plan, i int, on string) privacy.Charge {
	t.Helper()
	if on == "" {
		return plan.Charges[i]
	}
	for _, c := range plan.Charges {
		if strings.Contains(c.Label, on) {
			return c
		}
	}
	t.Fatalf("no charge %q among %d", on, len(plan.Charges))
	return privacy.Charge{}
}
