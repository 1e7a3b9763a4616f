package privacy

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"testing"
)

// reference holds values computed independently by testdata/reference.py.
type reference struct {
	EpsDeltaToRho []struct{ Eps, Delta, Tight, Standard float64 } `json:"eps_delta_to_rho"`
	RhoToEps      []struct{ Rho, Delta, Tight, Standard float64 } `json:"rho_to_eps"`
	RhoToDelta    []struct{ Rho, Eps, Delta float64 }             `json:"rho_to_delta"`
	Advanced      []struct {
		Eps0  float64 `json:"eps0"`
		K     int     `json:"k"`
		Delta float64 `json:"delta"`
		Eps   float64 `json:"eps"`
	} `json:"advanced"`
	Paper []struct {
		Eps0  float64 `json:"eps0"`
		K     int     `json:"k"`
		Delta float64 `json:"delta"`
		Eps   float64 `json:"eps"`
	} `json:"paper"`
}

func loadReference(t *testing.T) reference {
	t.Helper()
	b, err := os.ReadFile("testdata/conversions.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.EpsDeltaToRho) == 0 || len(ref.RhoToEps) == 0 || len(ref.RhoToDelta) == 0 {
		t.Fatal("testdata/conversions.json has no cases")
	}
	return ref
}

// close reports whether got is within a relative tol of want.
func close(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// TestConversionsReference compares the conversions with the reference
// values (relative tolerance 1e-6 for the tight searches, 1e-12 for closed
// forms), and checks that each result errs on the private side of the
// reference: ρ never above, ε and δ never below (beyond 1e-9 relative, the
// reference's own float error).
func TestConversionsReference(t *testing.T) {
	ref := loadReference(t)
	for _, c := range ref.EpsDeltaToRho {
		got := EpsToRho(c.Eps, c.Delta, Tight)
		if !close(got, c.Tight, 1e-6) || got > c.Tight*(1+1e-9) {
			t.Errorf("EpsToRho(%g, %g, Tight) = %.10g, want %.10g", c.Eps, c.Delta, got, c.Tight)
		}
		got = EpsToRho(c.Eps, c.Delta, Standard)
		if !close(got, c.Standard, 1e-12) || got > c.Standard*(1+1e-15) {
			t.Errorf("EpsToRho(%g, %g, Standard) = %.12g, want %.12g", c.Eps, c.Delta, got, c.Standard)
		}
	}
	for _, c := range ref.RhoToEps {
		got := RhoToEps(c.Rho, c.Delta, Tight)
		if !close(got, c.Tight, 1e-6) || got < c.Tight*(1-1e-9) {
			t.Errorf("RhoToEps(%g, %g, Tight) = %.10g, want %.10g", c.Rho, c.Delta, got, c.Tight)
		}
		got = RhoToEps(c.Rho, c.Delta, Standard)
		if !close(got, c.Standard, 1e-12) || got < c.Standard {
			t.Errorf("RhoToEps(%g, %g, Standard) = %.12g, want %.12g", c.Rho, c.Delta, got, c.Standard)
		}
	}
	for _, c := range ref.RhoToDelta {
		got := RhoToDelta(c.Rho, c.Eps)
		if !close(got, c.Delta, 1e-6) || got < c.Delta*(1-1e-9) {
			t.Errorf("RhoToDelta(%g, %g) = %.10g, want %.10g", c.Rho, c.Eps, got, c.Delta)
		}
	}
	for _, c := range ref.Advanced {
		got := AdvancedComposition(c.Eps0, c.K, c.Delta)
		if !close(got, c.Eps, 1e-12) || got < c.Eps {
			t.Errorf("AdvancedComposition(%g, %d, %g) = %.12g, want %.12g", c.Eps0, c.K, c.Delta, got, c.Eps)
		}
	}
	for _, c := range ref.Paper {
		got, err := PaperComposition(c.Eps0, c.K, c.Delta)
		if err != nil || !close(got, c.Eps, 1e-12) || got < c.Eps {
			t.Errorf("PaperComposition(%g, %d, %g) = %.12g, %v; want %.12g", c.Eps0, c.K, c.Delta, got, err, c.Eps)
		}
	}
}

// TestConversionKnownValue pins the headline case: (ε, δ) = (1, 1e-9).
func TestConversionKnownValue(t *testing.T) {
	tight := EpsToRho(1, 1e-9, Tight)
	std := EpsToRho(1, 1e-9, Standard)
	if !close(tight, 0.014973057673588527, 1e-6) || !close(std, 0.011781160395201457, 1e-12) {
		t.Errorf("ρ(1, 1e-9) = %.10g tight, %.12g standard; want 0.01497305767, 0.0117811603952", tight, std)
	}
	if tight <= std {
		t.Errorf("tight ρ %g is not above standard ρ %g", tight, std)
	}
	// Back: the ρ converts to at most ε = 1 with its own conversion.
	if e := RhoToEps(tight, 1e-9, Tight); e > 1 || e < 1-1e-6 {
		t.Errorf("RhoToEps(ρ_tight, 1e-9) = %.10g, want 1 (from below)", e)
	}
	// RhoToEps rounds its closed form up by a few ulps.
	if e := RhoToEps(std, 1e-9, Standard); e > 1+1e-14 || e < 1-1e-12 {
		t.Errorf("RhoToEps(ρ_std, 1e-9, Standard) = %.17g, want 1", e)
	}
	if d := RhoToDelta(tight, 1); d > 1e-9 {
		t.Errorf("RhoToDelta(ρ_tight, 1) = %g > 1e-9", d)
	}
}

// TestConversionMonotone: δ(ρ, ε) increases in ρ and decreases in ε;
// ε(ρ, δ) increases in ρ; ρ(ε, δ) increases in ε and in δ; the tight
// conversion never gives a larger ε than the standard one.
func TestConversionMonotone(t *testing.T) {
	rhos := []float64{1e-6, 1e-4, 1e-3, 0.01, 0.1, 0.5, 1, 5}
	for _, delta := range []float64{1e-12, 1e-9, 1e-6, 1e-3} {
		prev := 0.0
		for _, rho := range rhos {
			e := RhoToEps(rho, delta, Tight)
			s := RhoToEps(rho, delta, Standard)
			if e <= prev || e > s {
				t.Errorf("RhoToEps(%g, %g) = %g: previous %g, standard %g", rho, delta, e, prev, s)
			}
			prev = e
		}
	}
	for _, eps := range []float64{0.1, 1, 3} {
		prev := 0.0
		for _, rho := range rhos {
			d := RhoToDelta(rho, eps)
			if d < 0 || d > 1 || d < prev || (d == prev && d > 0 && d < 1) {
				t.Errorf("RhoToDelta(%g, %g) = %g after %g: not increasing in ρ", rho, eps, d, prev)
			}
			prev = d
		}
	}
	prevE := 0.0
	for _, eps := range []float64{0.01, 0.1, 0.5, 1, 2, 8} {
		r := EpsToRho(eps, 1e-9, Tight)
		if r <= prevE {
			t.Errorf("EpsToRho(%g, 1e-9) = %g not above %g", eps, r, prevE)
		}
		prevE = r
		if d := RhoToDelta(0.01, eps+0.01); d > RhoToDelta(0.01, eps) {
			t.Errorf("RhoToDelta(0.01, ε) increases in ε at %g", eps)
		}
	}
	if RhoToDelta(0, 1) != 0 || RhoToEps(0, 1e-9, Tight) != 0 {
		t.Error("ρ = 0 does not convert to (0, 0)")
	}
}

// TestCalibration: the calibrated parameter never makes the total exceed
// the target, and spends at least 1 − 3·10⁻⁹ of it.
func TestCalibration(t *testing.T) {
	for _, rho := range []float64{1.2e-4, 0.0118, 0.015, 0.5, 3} {
		for _, steps := range []int{1, 7, 1000, 48842, 1_000_000} {
			e := CalibrateExponential(rho, steps)
			spent := ExponentialMechanismCost(e).Times(steps).Rho
			if spent > rho || spent < rho*(1-3e-9) {
				t.Errorf("CalibrateExponential(%g, %d) = %g spends ρ = %.12g", rho, steps, e, spent)
			}
			e = CalibratePure(rho, steps)
			spent = ReportNoisyMaxCost(e).Times(steps).Rho
			if spent > rho || spent < rho*(1-3e-9) {
				t.Errorf("CalibratePure(%g, %d) = %g spends ρ = %.12g", rho, steps, e, spent)
			}
			for _, sens := range []float64{math.Sqrt2 / 48842, 1, 7} {
				s := CalibrateGaussian(rho, steps, sens)
				spent := GaussianCost(sens, s).Times(steps).Rho
				if spent > rho || spent < rho*(1-3e-9) {
					t.Errorf("CalibrateGaussian(%g, %d, %g) = %g spends ρ = %.12g", rho, steps, sens, s, spent)
				}
			}
		}
	}
	for _, eps := range []float64{0.1, 1, 4} {
		for _, steps := range []int{1, 100, 10000} {
			e := CalibrateAdvanced(eps, 1e-9, steps)
			if got := AdvancedComposition(e, steps, 1e-9); got > eps || got < eps*(1-3e-9) {
				t.Errorf("CalibrateAdvanced(%g, 1e-9, %d) = %g gives ε = %.12g", eps, steps, e, got)
			}
			p, err := CalibratePaper(eps, 1e-9, steps)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := PaperComposition(p, steps, 1e-9); err != nil || got > eps || got < eps*(1-3e-9) {
				t.Errorf("CalibratePaper(%g, 1e-9, %d) = %g gives ε = %.12g, %v", eps, steps, p, got, err)
			}
		}
	}
	// The seed's closed form: ε̃ = ε/(4√(2T ln(1/δ))).
	p, _ := CalibratePaper(1, 1e-9, 1000)
	if want := 1 / (4 * math.Sqrt(2*1000*math.Log(1e9))); !close(p, want, 3e-9) || p > want {
		t.Errorf("CalibratePaper(1, 1e-9, 1000) = %g, want %g from below", p, want)
	}
	if _, err := CalibratePaper(1000, 1e-2, 1); !errors.Is(err, ErrPaperCondition) {
		t.Errorf("CalibratePaper outside its condition: err = %v", err)
	}
}

// TestCalibrationThroughLedger: per-step charges made one by one from a
// calibration fit the ledger; one more step does not.
func TestCalibrationThroughLedger(t *testing.T) {
	b := Budget{Eps: 1, Delta: 1e-9}
	rho, err := b.Rho(Tight)
	if err != nil {
		t.Fatal(err)
	}
	const steps = 2000
	e0 := CalibrateExponential(rho, steps)
	l, _ := NewLedger(b, nil)
	for i := range steps {
		if err := l.Charge(Charge{Label: "select", Cost: ExponentialMechanismCost(e0)}); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := l.Check(Charge{Label: "one more", Cost: ExponentialMechanismCost(e0)}); !errors.Is(err, ErrBudgetExceeded) {
		t.Errorf("one more selection: err = %v, want ErrBudgetExceeded", err)
	}
	if s := l.Spent(); s.Eps > 1 || s.Eps < 1-1e-6 {
		t.Errorf("spent ε = %.10g, want just under 1", s.Eps)
	}
}

func TestAdvancedCompositionVsPaper(t *testing.T) {
	// On the seed's setting the paper bound is about 4× the exact DRV10 one.
	eps0, T, delta := 3.6e-7, 11_800_000_000, 1e-9
	paper, err := PaperComposition(eps0, T, delta)
	if err != nil {
		t.Fatal(err)
	}
	drv := AdvancedComposition(eps0, T, delta)
	if r := paper / drv; r < 3.9 || r > 4.01 {
		t.Errorf("paper/DRV10 = %g, want about 4", r)
	}
	if _, err := PaperComposition(1, 100, 0.5); !errors.Is(err, ErrPaperCondition) {
		t.Errorf("PaperComposition outside its condition: err = %v", err)
	}
}
