package privacy

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestBudgetValidate(t *testing.T) {
	bad := []Budget{
		{0, 1e-9}, {-1, 1e-9}, {math.NaN(), 1e-9}, {math.Inf(1), 1e-9},
		{1, -1e-9}, {1, 1}, {1, 2}, {1, math.NaN()}, {1, math.Inf(1)},
	}
	for _, b := range bad {
		if err := b.Validate(); err == nil {
			t.Errorf("%+v.Validate() = nil, want an error", b)
		}
		if _, err := NewLedger(b, nil); err == nil {
			t.Errorf("NewLedger(%+v) succeeded", b)
		}
	}
	for _, b := range []Budget{{1, 0}, {0.1, 1e-9}, {10, 0.5}} {
		if err := b.Validate(); err != nil {
			t.Errorf("%+v.Validate() = %v", b, err)
		}
	}
	if _, err := (Budget{1, 0}).Rho(Tight); err == nil {
		t.Error("a pure budget converted to ρ")
	}
}

func mustLedger(t *testing.T, b Budget, s *LedgerSettings) *Ledger {
	t.Helper()
	l, err := NewLedger(b, s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLedgerRefusesOverspend(t *testing.T) {
	b := Budget{Eps: 1, Delta: 1e-9}
	l := mustLedger(t, b, nil)
	rho, _ := b.Rho(Tight)
	if err := l.Charge(Charge{Label: "half", Cost: ZCDPCost(rho / 2)}); err != nil {
		t.Fatal(err)
	}
	before := l.Report()
	err := l.Charge(Charge{Label: "too much", Cost: ZCDPCost(rho * 0.51)})
	var be *BudgetError
	if !errors.Is(err, ErrBudgetExceeded) || !errors.As(err, &be) || be.Would <= 1 {
		t.Fatalf("overspend: err = %v, want a *BudgetError past ε = 1", err)
	}
	if !strings.Contains(err.Error(), "too much") {
		t.Errorf("error %q does not name the charge", err)
	}
	after := l.Report()
	if len(after.Charges) != 1 || after.Spent != before.Spent {
		t.Errorf("refused charge changed the ledger: %+v -> %+v", before, after)
	}
	// All or nothing: a batch with one charge too many is refused whole.
	err = l.Charge(Charge{Label: "a", Cost: ZCDPCost(rho / 4)}, Charge{Label: "b", Cost: ZCDPCost(rho / 2)})
	if !errors.Is(err, ErrBudgetExceeded) || len(l.Charges()) != 1 {
		t.Errorf("batch overspend: err = %v, %d charges", err, len(l.Charges()))
	}
	// What is left fits exactly.
	rem := l.Remaining()
	if err := l.Charge(Charge{Label: "rest", Cost: ZCDPCost(rem.Rho)}); err != nil {
		t.Errorf("charging Remaining().Rho = %g: %v", rem.Rho, err)
	}
	if !close(rem.Rho, rho/2, 1e-6) {
		t.Errorf("remaining ρ = %g, want about %g", rem.Rho, rho/2)
	}
	if s := l.Spent(); s.Eps > 1 || s.Eps < 1-1e-5 {
		t.Errorf("spent ε = %.10g after using everything", s.Eps)
	}
	if err := l.Charge(Charge{Label: "crumb", Cost: ZCDPCost(rho * 1e-6)}); !errors.Is(err, ErrBudgetExceeded) {
		t.Errorf("charge after exhaustion: err = %v", err)
	}
}

func TestLedgerCheckIsAPlan(t *testing.T) {
	l := mustLedger(t, Budget{Eps: 1, Delta: 1e-9}, nil)
	e0 := CalibrateExponential(EpsToRho(1, 1e-9, Tight), 500)
	plan := []Charge{{Label: "dpfw selections ×500", Cost: ExponentialMechanismCost(e0).Times(500)}}
	if err := l.Check(plan...); err != nil {
		t.Fatalf("plan refused: %v", err)
	}
	if len(l.Charges()) != 0 {
		t.Fatal("Check recorded charges")
	}
	bigger := []Charge{{Label: "dpfw selections ×501", Cost: ExponentialMechanismCost(e0).Times(501)}}
	if err := l.Check(bigger...); !errors.Is(err, ErrBudgetExceeded) {
		t.Errorf("over-budget plan: err = %v", err)
	}
	if err := l.Charge(plan...); err != nil {
		t.Fatal(err)
	}
}

// TestLedgerPureBudget: δ = 0 accepts only pure charges, composed by adding
// ε exactly.
func TestLedgerPureBudget(t *testing.T) {
	l := mustLedger(t, Budget{Eps: 1, Delta: 0}, nil)
	for _, c := range []Charge{{Label: "gauss", Cost: GaussianCost(1, 10)}, {Label: "paper", Cost: ApproxCost(0.1, 1e-9)}} {
		err := l.Charge(c)
		if !errors.Is(err, ErrBudgetExceeded) || !strings.Contains(err.Error(), "pure") {
			t.Errorf("pure budget took %s: err = %v", c.Cost, err)
		}
	}
	for i := range 4 {
		if err := l.Charge(Charge{Label: "em", Cost: ExponentialMechanismCost(0.25)}); err != nil {
			t.Fatalf("charge %d of ε = 0.25: %v", i, err)
		}
	}
	if err := l.Charge(Charge{Label: "em", Cost: ExponentialMechanismCost(1e-12)}); !errors.Is(err, ErrBudgetExceeded) {
		t.Errorf("fifth charge: err = %v", err)
	}
	s := l.Spent()
	if s.Eps != 1 || s.Delta != 0 {
		t.Errorf("spent = %+v, want ε = 1, δ = 0", s)
	}
	if r := l.Remaining(); r.Rho != 0 || r.PureEps != 0 {
		t.Errorf("remaining = %+v", r)
	}
}

// TestLedgerComposition checks the composition rule on cases whose answer
// is known: a single pure charge of the whole ε fits (counted as pure),
// though ε²/2 as zCDP would not; zCDP charges use the conversion; "paper"
// charges add (ε, δ) and shrink the δ left for the zCDP part.
func TestLedgerComposition(t *testing.T) {
	b := Budget{Eps: 1, Delta: 1e-9}
	l := mustLedger(t, b, nil)
	if err := l.Charge(Charge{Label: "laplace", Cost: PureCost(1)}); err != nil {
		t.Errorf("one pure charge of the whole ε: %v", err)
	}
	if s := l.Spent(); s.Eps != 1 || s.PureEps != 1 {
		t.Errorf("spent = %+v", s)
	}

	l = mustLedger(t, b, nil)
	if err := l.Charge(Charge{Label: "paper", Cost: ApproxCost(0.5, 4e-10)}); err != nil {
		t.Fatal(err)
	}
	rem := l.Remaining()
	want := EpsToRho(0.5, 6e-10, Tight)
	if !close(rem.Rho, want, 1e-6) {
		t.Errorf("after a paper charge (0.5, 4e-10): remaining ρ = %g, want ρ(0.5, 6e-10) = %g", rem.Rho, want)
	}
	if err := l.Charge(Charge{Label: "paper δ", Cost: ApproxCost(0, 7e-10)}); !errors.Is(err, ErrBudgetExceeded) {
		t.Errorf("δ overspend: err = %v", err)
	}

	// Standard conversion: less ρ fits.
	ls := mustLedger(t, b, &LedgerSettings{Conversion: Standard})
	if r, rt := ls.Remaining().Rho, mustLedger(t, b, nil).Remaining().Rho; !(r < rt) || !close(r, EpsToRho(1, 1e-9, Standard), 1e-6) {
		t.Errorf("remaining ρ: standard %g, tight %g", r, rt)
	}
}

func TestLedgerRejectsMalformedCharges(t *testing.T) {
	l := mustLedger(t, Budget{Eps: 1, Delta: 1e-9}, nil)
	for _, c := range []Charge{
		{Label: "", Cost: ZCDPCost(0.001)},
		{Label: "nan", Cost: Cost{Kind: ZCDP, Rho: math.NaN()}},
		{Label: "neg", Cost: Cost{Kind: Pure, Eps: -1}},
		{Label: "inf", Cost: Cost{Kind: ZCDP, Rho: math.Inf(1)}},
		{Label: "delta", Cost: Cost{Kind: Approx, Eps: 0.1, Delta: 1}},
		{Label: "kind", Cost: Cost{Kind: Kind(9), Rho: 0.001}},
	} {
		if err := l.Charge(c); err == nil || errors.Is(err, ErrBudgetExceeded) {
			t.Errorf("malformed charge %+v: err = %v", c, err)
		}
	}
	if len(l.Charges()) != 0 {
		t.Error("a malformed charge was recorded")
	}
}

func TestLedgerReportJSON(t *testing.T) {
	l := mustLedger(t, Budget{Eps: 1, Delta: 1e-9}, nil)
	_ = l.Charge(Charge{Label: "mwem select ×10", Cost: ExponentialMechanismCost(0.05).Times(10)},
		Charge{Label: "mwem measure ×10", Cost: GaussianCost(1, 40).Times(10)})
	b, err := json.Marshal(l.Report())
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Neighbours != DefaultNeighbours || back.Conversion != "tight" || len(back.Charges) != 2 ||
		back.Charges[0].Kind != Pure || back.Charges[1].Kind != ZCDP || back.Spent.Eps <= 0 {
		t.Errorf("report round trip: %s", b)
	}
}

func TestLedgerConcurrent(t *testing.T) {
	l := mustLedger(t, Budget{Eps: 1, Delta: 0}, nil)
	done := make(chan error)
	for range 8 {
		go func() {
			var err error
			for range 100 {
				if e := l.Charge(Charge{Label: "c", Cost: PureCost(0.001)}); e != nil {
					err = e
				}
			}
			done <- err
		}()
	}
	refused := 0
	for range 8 {
		if err := <-done; err != nil {
			refused++
		}
	}
	// 800 charges of 0.001 against ε = 1: about 1000 would fit, all fit.
	if n := len(l.Charges()); n != 800 || refused != 0 {
		t.Errorf("%d charges recorded, %d goroutines refused", n, refused)
	}
}

// TestLedgerSpentNeverAboveBudget: a budget spent in full reports at most
// the budget's ε, however small ε is (the conversion's search used to stop
// at a floor near 1e-60 and report more than a 1e-300 budget).
func TestLedgerSpentNeverAboveBudget(t *testing.T) {
	for _, eps := range []float64{1e-300, 1e-100, 1e-20, 1e-6, 0.1, 1, 10} {
		for _, conv := range []Conversion{Tight, Standard} {
			b := Budget{Eps: eps, Delta: 1e-9}
			l, err := NewLedger(b, &LedgerSettings{Conversion: conv})
			if err != nil {
				t.Fatal(err)
			}
			rho, err := b.Rho(conv)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Charge(Charge{Label: "all", Cost: ZCDPCost(rho)}); err != nil {
				t.Fatalf("ε = %g, %v: charging the budget's own ρ = %g: %v", eps, conv, rho, err)
			}
			if got := l.Spent().Eps; !(got <= eps) || (got <= 0 && rho > 0) {
				t.Errorf("ε = %g, %v: Spent().Eps = %g, want in (0, %g]", eps, conv, got, eps)
			}
			if got := RhoToEps(rho, 1e-9, conv); got > 2*eps {
				t.Errorf("RhoToEps(%g, 1e-9, %v) = %g, want about %g", rho, conv, got, eps)
			}
		}
	}
}
