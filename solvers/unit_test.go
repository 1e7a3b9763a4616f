package solvers

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
)

// TestProjectUnitSensitivity: under add/remove of a unit of up to K
// records every measured table's σ is K times a record's, at the same cost,
// on both models; the labels state the sensitivity K. Replace-one refuses a
// unit of more than one record.
func TestProjectUnitSensitivity(t *testing.T) {
	fx := small(t)
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	for _, model := range []ModelKind{Explicit, Factored} {
		p1, err := (&Project{}).Plan(&Shape{Budget: b, Workload: fx.wl, Model: model})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{2, 16} {
			pk, err := (&Project{}).Plan(&Shape{Budget: b, Workload: fx.wl, Model: model, UnitRows: k})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(pk.Total()-p1.Total()) > 1e-12*p1.Total() || len(pk.Charges) != len(p1.Charges) {
				t.Fatalf("%v, K = %d: %d charges of ρ %v, want %d of ρ %v", model, k, len(pk.Charges), pk.Total(), len(p1.Charges), p1.Total())
			}
			for i := range pk.Charges {
				s1, sk := chargeSigma(t, p1.Charges[i].Label), chargeSigma(t, pk.Charges[i].Label)
				if math.Abs(sk/s1-float64(k)) > 1e-3*float64(k) { // labels round σ to 4 digits
					t.Errorf("%v, K = %d: charge %q has σ %v, want K·%v", model, k, pk.Charges[i].Label, sk, s1)
				}
				if want := fmt.Sprintf("ℓ2 sensitivity %d counts", k); !strings.Contains(pk.Charges[i].Label, want) {
					t.Errorf("%v, K = %d: charge %q does not state %q", model, k, pk.Charges[i].Label, want)
				}
			}
		}
	}
	_, err := (&Project{}).Plan(&Shape{Budget: b, Workload: fx.wl, Neighbours: ReplaceOne, UnitRows: 2})
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("replace-one with K = 2: err = %v, want ErrUnsupported", err)
	}
	if _, err := (&Project{}).Plan(&Shape{Budget: b, Workload: fx.wl, UnitRows: -1}); err == nil {
		t.Error("K = -1: no error")
	}
}

// chargeSigma reads the σ a measurement's label states.
func chargeSigma(t *testing.T, label string) float64 {
	t.Helper()
	i := strings.Index(label, "σ = ")
	if i < 0 {
		t.Fatalf("charge %q states no σ", label)
	}
	var s float64
	if _, err := fmt.Sscanf(label[i+len("σ = "):], "%g", &s); err != nil {
		t.Fatalf("charge %q: %v", label, err)
	}
	return s
}

// TestProjectUnitNoise: the measured tables' noise has the σ the plan
// states for K = 8. Statistical: the noise of every cell of every measured
// table (97 cells) over 100 measurements, each divided by its group's σ:
// 9,700 draws whose mean square must be within 7% of 1 (its relative
// standard error is √(2/9700) ≈ 1.4%, so 7% is 5 standard errors: a false
// failure has probability below 10^-6; the draws are seeded, so the test
// always passes or always fails).
func TestProjectUnitNoise(t *testing.T) {
	fx := small(t)
	const k, reps = 8, 100
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	sh := Shape{Budget: b, Workload: fx.wl, UnitRows: k}
	plan, err := (&Project{}).Plan(&sh)
	if err != nil {
		t.Fatal(err)
	}
	p1, err := (&Project{}).Plan(&Shape{Budget: b, Workload: fx.wl})
	if err != nil {
		t.Fatal(err)
	}
	// Both plans are staged (add/remove): the tables they measure when the
	// count says the budget resolves them.
	plan.groups, p1.groups = plan.stage.keep, p1.stage.keep
	mw, err := marginalWorkload(fx.wl, plan.groups)
	if err != nil {
		t.Fatal(err)
	}
	truth := mw.AnswerCounts(fx.counts, make([]float64, mw.M()))
	n := float64(fx.counts.Total())
	sum2, draws := 0.0, 0
	for rep := range reps {
		p := &Problem{Shape: sh, Counts: fx.counts, Rand: privacy.NewSeeded(uint64(rep + 1))}
		p.N = int(n)
		ms, err := measure(p, plan.groups, AddRemove, nil)
		if err != nil {
			t.Fatal(err)
		}
		si := 0
		for gi, g := range plan.groups {
			if g.attrs == nil {
				continue
			}
			if want := k * p1.groups[gi].sigma; math.Abs(g.sigma-want) > 1e-9*want {
				t.Fatalf("group %d: σ = %v, want K·σ₁ = %v", gi, g.sigma, want)
			}
			m := mw.Marginals()[si]
			si++
			for c := m.Offset; c < m.Offset+m.Cells; c++ {
				d := (ms.y[c]*ms.nHat - truth[c]*n) / g.sigma
				sum2 += d * d
				draws++
			}
		}
	}
	if r := sum2 / float64(draws); r < 0.93 || r > 1.07 {
		t.Errorf("mean square of the noise over σ = %.4f over %d draws, want 1 within 7%%", r, draws)
	}
}

// TestFactoredScoreSensitivity: the adaptive rounds' selection scores have
// sensitivity K·max weight under add/remove and 2·max weight under
// replace-one.
func TestFactoredScoreSensitivity(t *testing.T) {
	fx := adultReduced(t)
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	sens := func(nb Neighbours, k int) float64 {
		t.Helper()
		p, err := (&Project{}).Plan(&Shape{Budget: b, Workload: fx.wl, Model: Factored, MaxModelBytes: 1 << 20, Neighbours: nb, UnitRows: k})
		if err != nil {
			t.Fatal(err)
		}
		v, ok := p.Params["score_sensitivity"]
		if !ok {
			t.Fatal("the plan has no adaptive rounds (no score_sensitivity)")
		}
		return v
	}
	one := sens(AddRemove, 1)
	for _, tc := range []struct {
		nb   Neighbours
		k    int
		want float64
	}{{AddRemove, 4, 4 * one}, {AddRemove, 64, 64 * one}, {ReplaceOne, 1, 2 * one}} {
		if got := sens(tc.nb, tc.k); got != tc.want {
			t.Errorf("score sensitivity (%v, K = %d) = %v, want %v", tc.nb, tc.k, got, tc.want)
		}
	}
}

// TestProjectNoisyCount: under add/remove a project plan that measures no
// marginal table (the paper setting, or a workload of ranges and
// predicates only) spends CountShare of ρ on a noisy record count of
// sensitivity K, charged first, and the whole plan still spends the budget's
// ρ; the solve estimates n from it.
func TestProjectNoisyCount(t *testing.T) {
	fx := small(t)
	ranges, err := query.Parse([]byte(`{"families": [
		{"type": "range", "attribute": "age", "lo": "2", "hi": "5"},
		{"type": "prefixes", "attribute": "race"},
		{"type": "predicate", "where": [{"attribute": "sex", "in": ["1"]}]}
	]}`), fx.dom)
	if err != nil {
		t.Fatal(err)
	}
	b := privacy.Budget{Eps: 1, Delta: 1e-9}
	rho, _ := b.Rho(privacy.Tight)
	for _, tc := range []struct {
		name string
		s    *Project
		wl   *query.Workload
	}{{"paper", &Project{Setting: Paper}, fx.wl}, {"ranges", &Project{}, ranges}} {
		for _, k := range []int{1, 4} {
			plan, err := tc.s.Plan(&Shape{Budget: b, Workload: tc.wl, UnitRows: k})
			if err != nil {
				t.Fatalf("%s, K = %d: %v", tc.name, k, err)
			}
			first := plan.Charges[0]
			if want := fmt.Sprintf("discrete Gaussian on the record count (ℓ2 sensitivity %d counts", k); !strings.Contains(first.Label, want) {
				t.Errorf("%s, K = %d: first charge %q, want the record count's (%q)", tc.name, k, first.Label, want)
			}
			if r := first.Rho / rho; math.Abs(r-CountShare) > 1e-6 {
				t.Errorf("%s, K = %d: the count costs %.6g of ρ, want %v", tc.name, k, r, CountShare)
			}
			if tot := plan.Total(); tot > rho || tot < rho*(1-1e-8) {
				t.Errorf("%s, K = %d: plan spends ρ %v of %v", tc.name, k, tot, rho)
			}
		}
		op, err := tc.wl.Compile(nil)
		if err != nil {
			t.Fatal(err)
		}
		led, _ := privacy.NewLedger(b, nil)
		p := &Problem{Shape: Shape{Budget: b, Workload: tc.wl, N: int(fx.counts.Total())}, Op: op, Counts: fx.counts,
			Answers: tc.wl.AnswerCounts(fx.counts, make([]float64, tc.wl.M())), Rand: privacy.NewSeeded(3), Ledger: led}
		res, err := tc.s.Solve(t.Context(), p)
		op.Close()
		if err != nil {
			t.Fatalf("%s: Solve: %v", tc.name, err)
		}
		n, nHat := float64(fx.counts.Total()), res.Plan.Params["n_estimate"]
		if math.Abs(nHat-n) > 0.01*n {
			t.Errorf("%s: n̂ = %v, want n = %v within 1%% (σ is about 58 records)", tc.name, nHat, n)
		}
	}
}
