package solvers

import (
	"math"
	"strings"
	"testing"

	"github.com/dpsynth/synth/privacy"
)

const exactDomain = `{"a": 3, "b": 4, "c": 2, "d": 5}`

const exactPairs = `{"families": [{"type": "marginals", "sets": [["a", "b"], ["a", "c"], ["a", "d"], ["b", "c"], ["b", "d"], ["c", "d"]]}]}`

// TestPlanExact: under AccountExact the staged explicit plan is the zCDP
// plan at a larger ρ, charged once at (ε, δ') with δ' the accountant's bound
// on that very plan, at most the budget's δ; a slightly larger ρ would not
// fit. The gain is that of continuous Gaussian noise at these budgets
// (1.106–1.120 at δ = 10⁻⁹, 1.160 at ε 0.5 and δ = 10⁻⁶).
func TestPlanExact(t *testing.T) {
	wl := fwWorkload(t, exactDomain, exactPairs)
	for _, b := range []privacy.Budget{{Eps: 0.1, Delta: 1e-9}, {Eps: 1, Delta: 1e-9}, {Eps: 0.5, Delta: 1e-6}} {
		s := &Project{}
		zc, err := s.Plan(&Shape{Budget: b, Neighbours: AddRemove, Workload: wl})
		if err != nil {
			t.Fatal(err)
		}
		sh := &Shape{Budget: b, Accounting: AccountExact, Neighbours: AddRemove, Workload: wl}
		ex, err := s.Plan(sh)
		if err != nil {
			t.Fatal(err)
		}
		if len(ex.Charges) != 1 || ex.Charges[0].Kind != privacy.Approx || ex.Charges[0].Eps != b.Eps ||
			!ex.Charges[0].Exact || !strings.Contains(ex.Charges[0].Label, ExactChargePrefix) {
			t.Fatalf("%v: charges %+v, want one exact (ε, δ) charge", b, ex.Charges)
		}
		gain := ex.Params["exact_gain"]
		if gain < 1.09 || gain > 1.17 {
			t.Errorf("%v: exact_gain = %v, want 1.09–1.17", b, gain)
		}
		rho := zc.Params["rho"]
		if !relClose(ex.Params["rho"], gain*rho, 1e-12) || !relClose(ex.Params["rho_zcdp_budget"], rho, 1e-12) {
			t.Errorf("%v: rho %v, rho_zcdp_budget %v; want %v × %v", b, ex.Params["rho"], ex.Params["rho_zcdp_budget"], gain, rho)
		}
		g, ok := stagedGaussian(ex)
		if !ok || len(g.Branches) != 3 {
			t.Fatalf("%v: the accountant's view %+v (%v), want a count and three branches", b, g, ok)
		}
		if d := g.Delta(b.Eps); d != ex.Params["exact_delta"] || d > b.Delta || ex.Charges[0].Delta != b.Delta {
			t.Errorf("%v: charged δ %v, exact_delta %v, the plan's bound %v", b, ex.Charges[0].Delta, ex.Params["exact_delta"], d)
		}
		if want := zc.stage.count.noise / math.Sqrt(gain); !relClose(g.CountSigma, want, 1e-9) {
			t.Errorf("%v: count σ %v, want the zCDP plan's / √gain = %v", b, g.CountSigma, want)
		}
		again, err := s.Plan(sh) // the remembered gain, checked again
		if err != nil {
			t.Fatal(err)
		}
		if again.Params["exact_gain"] != gain || again.stage.count.noise != ex.stage.count.noise || again.Charges[0] != ex.Charges[0] {
			t.Errorf("%v: planned again: gain %v, count σ %v; want %v, %v", b, again.Params["exact_gain"], again.stage.count.noise, gain, ex.stage.count.noise)
		}
		more, err := s.planAt(sh, rho*gain*(1+2e-4))
		if err != nil {
			t.Fatal(err)
		}
		if g, _ := stagedGaussian(more); g.Delta(b.Eps) <= b.Delta {
			t.Errorf("%v: ρ × %v × 1.0002 still fits: the search stopped short", b, gain)
		}
	}
}

// TestPlanExactFallsBack: plans the accountant does not describe, and
// accounting not asked for, keep their zCDP charges.
func TestPlanExactFallsBack(t *testing.T) {
	wl := fwWorkload(t, exactDomain, exactPairs)
	mixed := fwWorkload(t, exactDomain, `{"families": [{"type": "marginals", "sets": [["a", "b"]]}, {"type": "prefixes", "attribute": "d"}]}`)
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	for _, c := range []struct {
		name string
		s    *Project
		sh   Shape
	}{
		{"zcdp asked", &Project{}, Shape{Budget: b, Neighbours: AddRemove, Workload: wl}},
		{"unit of two rows", &Project{}, Shape{Budget: b, Accounting: AccountExact, Neighbours: AddRemove, UnitRows: 2, Workload: wl}},
		{"paper", &Project{Setting: Paper}, Shape{Budget: b, Accounting: AccountExact, Neighbours: AddRemove, Workload: wl}},
		{"prefixes", &Project{}, Shape{Budget: b, Accounting: AccountExact, Neighbours: AddRemove, Workload: mixed}},
		{"factored", &Project{}, Shape{Budget: b, Accounting: AccountExact, Neighbours: AddRemove, Workload: wl, Model: Factored}},
	} {
		plan, err := c.s.Plan(&c.sh)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, ch := range plan.Charges {
			if ch.Kind == privacy.Approx || ch.Exact || strings.Contains(ch.Label, ExactChargePrefix) {
				t.Errorf("%s: charge %+v, want zCDP", c.name, ch)
			}
		}
		if _, ok := plan.Params["exact_gain"]; ok {
			t.Errorf("%s: exact_gain set", c.name)
		}
	}
}

// TestPlanExactReplaceOne: under replace-one a record moves two cells of
// each table, so a plan of m tables is 2m counts to the accountant; the gain
// is the add/remove one's (both are Gaussian noise of the same μ), and the
// plans made before and after n is known (which may measure different
// tables) carry the same charge.
func TestPlanExactReplaceOne(t *testing.T) {
	wl := fwWorkload(t, exactDomain, `{"families": [{"type": "marginals", "sets": [["a", "b", "c"], ["a", "b", "d"], ["a", "c", "d"], ["b", "c", "d"]]}]}`)
	b := privacy.Budget{Eps: 0.5, Delta: 1e-9}
	s := &Project{}
	var charges []privacy.Charge
	for _, n := range []int{0, 100, 100000} {
		sh := &Shape{Budget: b, Accounting: AccountExact, Neighbours: ReplaceOne, N: n, Workload: wl}
		plan, err := s.Plan(sh)
		if err != nil {
			t.Fatal(err)
		}
		g, ok := stagedGaussian(plan)
		if !ok || g.CountSigma != 0 || len(g.Branches) != 1 || g.Branches[0].Tables != 2*len(plan.groups) {
			t.Fatalf("n = %d: the accountant's view %+v (%v) of %d tables", n, g, ok, len(plan.groups))
		}
		if gain := plan.Params["exact_gain"]; gain < 1.10 || gain > 1.12 {
			t.Errorf("n = %d: exact_gain %v, want about 1.11", n, gain)
		}
		if charges != nil && (plan.Charges[0].Eps != charges[0].Eps || plan.Charges[0].Delta != charges[0].Delta) {
			t.Errorf("n = %d: charge %+v, the plan without n %+v", n, plan.Charges[0].Cost, charges[0].Cost)
		}
		charges = plan.Charges
	}
}
