package privacy

import (
	"errors"
	"math"
	"testing"
)

// FuzzLedger drives a ledger with arbitrary charges and checks its
// invariants: a refused charge leaves it unchanged; after every accepted
// one the spent ε is within the budget; Check agrees with Charge.
func FuzzLedger(f *testing.F) {
	f.Add(uint8(3), []byte{0, 10, 1, 200, 2, 50, 0, 255, 1, 1})
	f.Add(uint8(0), []byte{1, 128, 1, 128, 1, 128})
	f.Add(uint8(1), []byte{2, 1, 0, 1, 1, 1})
	f.Fuzz(func(t *testing.T, budgetSel uint8, ops []byte) {
		budgets := []Budget{{1, 1e-9}, {1, 0}, {0.1, 1e-6}, {5, 1e-5}}
		b := budgets[int(budgetSel)%len(budgets)]
		l, err := NewLedger(b, &LedgerSettings{Conversion: Conversion(budgetSel / 4 % 2)})
		if err != nil {
			t.Fatal(err)
		}
		for len(ops) >= 2 {
			kind, size := ops[0]%3, float64(ops[1])/255
			ops = ops[2:]
			var c Cost
			switch kind {
			case 0:
				c = ZCDPCost(size * 0.01)
			case 1:
				c = PureCost(size * 0.5)
			case 2:
				c = ApproxCost(size*0.3, size*1e-9)
			}
			ch := Charge{Label: "fuzz", Cost: c}
			before := l.Spent()
			n := len(l.Charges())
			checkErr := l.Check(ch)
			err := l.Charge(ch)
			if (checkErr == nil) != (err == nil) {
				t.Fatalf("Check and Charge disagree on %v: %v, %v", c, checkErr, err)
			}
			if err != nil {
				if !errors.Is(err, ErrBudgetExceeded) {
					t.Fatalf("charge %v: unexpected error %v", c, err)
				}
				if l.Spent() != before || len(l.Charges()) != n {
					t.Fatalf("refused charge %v changed the ledger", c)
				}
				continue
			}
			s := l.Spent()
			if s.Eps > b.Eps || math.IsNaN(s.Eps) || s.ApproxDelta > b.Delta {
				t.Fatalf("after %v: spent %+v exceeds %v", c, s, b)
			}
		}
	})
}

// FuzzConversions checks the conversions against each other: ε(ρ, δ)
// gives back at most δ, ρ(ε, δ) converts to at most ε, and the tight
// conversion never allows less ρ than the standard one.
func FuzzConversions(f *testing.F) {
	f.Add(uint64(0x3f8a36e2eb1c432d), uint64(0x3e112e0be826d695))
	f.Add(uint64(0x3fb999999999999a), uint64(0x3eb0c6f7a0b5ed8d))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		x := math.Float64frombits(a)
		y := math.Float64frombits(b)
		// Map to ρ or ε in [1e-8, 20] and δ in [1e-15, 0.5].
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
			return
		}
		v := 1e-8 + math.Mod(math.Abs(x), 20)
		delta := 1e-15 + math.Mod(math.Abs(y), 0.5)
		eps := RhoToEps(v, delta, Tight)
		if d := RhoToDelta(v, eps); d > delta {
			t.Fatalf("RhoToDelta(%g, RhoToEps(%g, %g) = %g) = %g > δ", v, v, delta, eps, d)
		}
		if s := RhoToEps(v, delta, Standard); eps > s {
			t.Fatalf("tight ε %g > standard ε %g for ρ = %g, δ = %g", eps, s, v, delta)
		}
		rho := EpsToRho(v, delta, Tight)
		if d := RhoToDelta(rho, v); d > delta {
			t.Fatalf("RhoToDelta(EpsToRho(%g, %g) = %g, %g) = %g > δ", v, delta, rho, v, d)
		}
		if rs := EpsToRho(v, delta, Standard); rs > rho || rs+2*math.Sqrt(rs*math.Log(1/delta)) > v {
			t.Fatalf("standard ρ %g (tight %g) for ε = %g, δ = %g", rs, rho, v, delta)
		}
	})
}
