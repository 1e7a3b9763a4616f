package solvers

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpsynth/synth/privacy"
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
		ms, err := measure(p, plan.groups, AddRemove)
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
