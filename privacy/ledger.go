package privacy

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// DefaultNeighbours is the default neighbouring relation of every mechanism
// in this package, as printed in the manifest.
const DefaultNeighbours = "replace one record; n public"

// Budget is a total privacy budget (ε, δ). δ = 0 asks for pure ε-DP.
type Budget struct {
	Eps   float64 `json:"eps"`
	Delta float64 `json:"delta"`
}

// Validate reports an error unless ε is finite and positive and δ is in
// [0, 1).
func (b Budget) Validate() error {
	if math.IsNaN(b.Eps) || math.IsInf(b.Eps, 0) || b.Eps <= 0 {
		return fmt.Errorf("privacy: budget ε = %v: must be a finite number > 0", b.Eps)
	}
	if math.IsNaN(b.Delta) || b.Delta < 0 || b.Delta >= 1 {
		return fmt.Errorf("privacy: budget δ = %v: must be in [0, 1)", b.Delta)
	}
	return nil
}

// Rho returns the largest zCDP ρ that fits the budget under conversion c.
// A pure budget (δ = 0) admits no zCDP-only mechanism; Rho returns an error
// for it.
func (b Budget) Rho(c Conversion) (float64, error) {
	if err := b.Validate(); err != nil {
		return 0, err
	}
	if b.Delta == 0 {
		return 0, errors.New("privacy: a pure budget (δ = 0) converts to no ρ; use pure mechanisms or give δ > 0")
	}
	return EpsToRho(b.Eps, b.Delta, c), nil
}

// String formats the budget.
func (b Budget) String() string { return fmt.Sprintf("(ε = %g, δ = %g)", b.Eps, b.Delta) }

// Charge is one entry of a Ledger: a label saying what spent it (mechanism,
// solver, step count, setting) and its cost.
type Charge struct {
	Label string `json:"label"`
	Cost
	// Exact marks an Approx charge whose (ε, δ) comes from an exact
	// accountant of its mechanisms (the privacy-loss distribution of
	// discrete Gaussians) rather than from a zCDP conversion or a paper's
	// composition theorem: a report can then name the accounting without
	// reading the label. It changes nothing in how the ledger composes.
	Exact bool `json:"exact,omitempty"`
}

// LedgerSettings configures a Ledger. The zero value (or nil) means the
// tight conversion and DefaultNeighbours.
type LedgerSettings struct {
	// Conversion turns the zCDP total into (ε, δ); zero is Tight.
	Conversion Conversion
	// Neighbours states the neighbouring relation for the manifest; empty is
	// DefaultNeighbours.
	Neighbours string
}

// Ledger is a privacy budget and the list of charges against it. It refuses
// any charge that would take the total beyond the budget, before the
// mechanism runs: a release computes all its charges from public settings,
// checks them with Check (a plan), and charges them before reading data.
// A Ledger is safe for concurrent use.
//
// How charges compose. Let A be the Approx charges, P the Pure ones and Z
// the ZCDP ones, and δ_r = δ − Σ_A δ_i. Each composition below is valid
// (zCDP composition, then conversion, then basic composition of (ε, δ)
// guarantees), and the ledger uses the better of the two:
//
//	ε_spent = Σ_A ε_i + min( conv(Σ_P ρ_i + Σ_Z ρ_i, δ_r),
//	                         Σ_P ε_i + conv(Σ_Z ρ_i, δ_r) )
//
// where conv(0, ·) = 0 and conv(ρ > 0, 0) = +∞. A set of charges fits when
// Σ_A δ_i <= δ and, for one of the two, the zCDP part converts within the ε
// that is left at δ_r (tested as RhoToDelta(ρ, ε_left) <= δ_r for the tight
// conversion).
//
// A pure budget (δ = 0) accepts only Pure charges, composed by adding their
// ε: Gaussian (ZCDP) and "paper" (Approx) charges are refused.
type Ledger struct {
	mu      sync.Mutex
	total   Budget
	set     LedgerSettings
	charges []Charge
}

// ErrBudgetExceeded is wrapped by every refusal of a Ledger that is about
// the budget being too small (not about a malformed charge).
var ErrBudgetExceeded = errors.New("privacy budget exceeded")

// BudgetError is the error of a refused charge.
type BudgetError struct {
	Labels []string // the refused charges
	Total  Budget
	Spent  float64 // ε spent before the charges
	Would  float64 // ε the charges would bring the total to (+Inf if no (ε, δ) bound)
	Reason string  // set when the charges are of a kind the budget cannot take
}

func (e *BudgetError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("privacy: charge %q refused: %s", e.Labels, e.Reason)
	}
	return fmt.Sprintf("privacy: charge %q refused: it would bring ε to %.6g, over the budget %s (ε = %.6g spent so far)",
		e.Labels, e.Would, e.Total, e.Spent)
}

// Unwrap makes errors.Is(err, ErrBudgetExceeded) true.
func (e *BudgetError) Unwrap() error { return ErrBudgetExceeded }

// NewLedger returns an empty ledger for the total budget; it validates the
// budget. s may be nil.
func NewLedger(total Budget, s *LedgerSettings) (*Ledger, error) {
	if err := total.Validate(); err != nil {
		return nil, err
	}
	l := &Ledger{total: total}
	if s != nil {
		l.set = *s
	}
	if l.set.Neighbours == "" {
		l.set.Neighbours = DefaultNeighbours
	}
	if l.set.Conversion != Tight && l.set.Conversion != Standard {
		return nil, fmt.Errorf("privacy: unknown conversion %v", l.set.Conversion)
	}
	return l, nil
}

// Total returns the budget.
func (l *Ledger) Total() Budget { return l.total }

// Check reports whether the charges, together with those already made,
// fit the budget. It changes nothing: use it to validate a release's plan
// before any data is read.
func (l *Ledger) Check(cs ...Charge) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.check(cs)
}

// Charge records the charges if, all together, they fit the budget; if they
// do not, it returns a *BudgetError and the ledger is unchanged.
func (l *Ledger) Charge(cs ...Charge) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(cs); err != nil {
		return err
	}
	l.charges = append(l.charges, cs...)
	return nil
}

func labels(cs []Charge) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Label
	}
	return out
}

func (l *Ledger) check(cs []Charge) error {
	for _, c := range cs {
		if err := validCharge(c); err != nil {
			return err
		}
		if l.total.Delta == 0 && c.Kind != Pure {
			return &BudgetError{Labels: labels(cs), Total: l.total,
				Reason: fmt.Sprintf("%q is a %s cost and the budget is pure (δ = 0); only pure ε-DP mechanisms fit", c.Label, c.Kind)}
		}
	}
	all := sums(l.charges)
	spent := l.epsOf(all)
	all.add(cs)
	if !l.fits(all) {
		return &BudgetError{Labels: labels(cs), Total: l.total, Spent: spent, Would: l.epsOf(all)}
	}
	return nil
}

func validCharge(c Charge) error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }
	if c.Label == "" {
		return errors.New("privacy: a charge needs a label")
	}
	if bad(c.Rho) || bad(c.Eps) || bad(c.Delta) || c.Delta >= 1 {
		return fmt.Errorf("privacy: charge %q has an invalid cost %+v", c.Label, c.Cost)
	}
	switch c.Kind {
	case ZCDP, Pure, Approx:
	default:
		return fmt.Errorf("privacy: charge %q has an unknown kind %v", c.Label, c.Kind)
	}
	return nil
}

// totals are the sums the composition rule needs.
type totals struct {
	rhoZ, rhoP, epsP, epsA, deltaA float64
}

func sums(cs []Charge) totals {
	var t totals
	t.add(cs)
	return t
}

func (t *totals) add(cs []Charge) {
	for _, c := range cs {
		switch c.Kind {
		case ZCDP:
			t.rhoZ = addUp(t.rhoZ, c.Rho)
		case Pure:
			t.rhoP = addUp(t.rhoP, c.Rho)
			t.epsP = addUp(t.epsP, c.Eps)
		case Approx:
			t.epsA = addUp(t.epsA, c.Eps)
			t.deltaA = addUp(t.deltaA, c.Delta)
		}
	}
}

// addUp returns a + b rounded up: exact sums stay exact (four charges of
// 0.25 make 1), and an inexact one moves to the next float above, so that
// no number of tiny charges can vanish in rounding.
func addUp(a, b float64) float64 {
	s := a + b
	bb := s - a
	if err := (a - (s - bb)) + (b - bb); err > 0 { // Knuth's TwoSum
		s = math.Nextafter(s, math.Inf(1))
	}
	return s
}

// convFits reports whether ρ-zCDP implies (eps, delta)-DP.
func (l *Ledger) convFits(rho, eps, delta float64) bool {
	if rho == 0 {
		return eps >= 0
	}
	if eps <= 0 || delta <= 0 {
		return false
	}
	if l.set.Conversion == Standard {
		return rho+2*math.Sqrt(rho*math.Log(1/delta)) <= eps
	}
	return RhoToDelta(rho, eps) <= delta
}

func (l *Ledger) fits(t totals) bool {
	if l.total.Delta == 0 {
		return t.epsP <= l.total.Eps
	}
	dr := l.total.Delta - t.deltaA
	if dr < 0 {
		return false
	}
	left := l.total.Eps - t.epsA
	return l.convFits(t.rhoZ+t.rhoP, left, dr) || l.convFits(t.rhoZ, left-t.epsP, dr)
}

// conv converts ρ to ε at δ with the ledger's conversion.
func (l *Ledger) conv(rho, delta float64) float64 {
	if rho == 0 {
		return 0
	}
	if delta <= 0 {
		return math.Inf(1)
	}
	return RhoToEps(rho, delta, l.set.Conversion)
}

func (l *Ledger) epsOf(t totals) float64 {
	if l.total.Delta == 0 {
		return t.epsP
	}
	dr := l.total.Delta - t.deltaA
	eps := t.epsA + min(l.conv(t.rhoZ+t.rhoP, dr), t.epsP+l.conv(t.rhoZ, dr))
	if eps > l.total.Eps && l.fits(t) {
		// The charges fit the budget exactly (fits compares δ at the
		// budget's ε), so the budget's ε is a valid statement of the spent
		// ε; the conversion's search is only rounded up past it.
		eps = l.total.Eps
	}
	return eps
}

// Spent is what a ledger has spent.
type Spent struct {
	// Rho is the zCDP total of the ZCDP and Pure charges.
	Rho float64 `json:"rho"`
	// PureEps is the sum of the Pure charges' ε.
	PureEps float64 `json:"pure_eps"`
	// ApproxEps and ApproxDelta sum the Approx ("paper") charges.
	ApproxEps   float64 `json:"approx_eps"`
	ApproxDelta float64 `json:"approx_delta"`
	// Eps and Delta: all charges together are (Eps, Delta)-DP, with Delta
	// the budget's δ (see the composition rule on Ledger).
	Eps   float64 `json:"eps"`
	Delta float64 `json:"delta"`
}

// Remaining is what a ledger can still spend.
type Remaining struct {
	// Eps is the budget's ε minus Spent.Eps.
	Eps float64 `json:"eps"`
	// Rho is the largest ZCDP charge that would still be accepted (0 for a
	// pure budget).
	Rho float64 `json:"rho"`
	// PureEps is the largest Pure charge (counted as pure ε) that would
	// still be accepted.
	PureEps float64 `json:"pure_eps"`
}

// Spent reports what has been spent.
func (l *Ledger) Spent() Spent {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := sums(l.charges)
	return Spent{Rho: t.rhoZ + t.rhoP, PureEps: t.epsP, ApproxEps: t.epsA, ApproxDelta: t.deltaA,
		Eps: l.epsOf(t), Delta: l.total.Delta}
}

// Remaining reports what can still be spent. Rho and PureEps are found by
// bisection and rounded down: a charge of that size is accepted.
func (l *Ledger) Remaining() Remaining {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := sums(l.charges)
	rem := Remaining{Eps: max(0, l.total.Eps-l.epsOf(t))}
	rem.PureEps = l.largestFit(t, func(t totals, v float64) totals { t.add([]Charge{{Cost: PureCost(v)}}); return t })
	if l.total.Delta > 0 {
		rem.Rho = l.largestFit(t, func(t totals, v float64) totals { t.add([]Charge{{Cost: ZCDPCost(v)}}); return t })
	}
	return rem
}

// largestFit returns the largest v >= 0 such that fits(with(t, v)).
func (l *Ledger) largestFit(t totals, with func(totals, float64) totals) float64 {
	if !l.fits(with(t, 0)) {
		return 0
	}
	lo, hi := 0.0, l.total.Eps+1
	for l.fits(with(t, hi)) {
		lo, hi = hi, 2*hi
	}
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if l.fits(with(t, mid)) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// Charges returns a copy of the charges, in order.
func (l *Ledger) Charges() []Charge {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Charge(nil), l.charges...)
}

// Report is the ledger's state for the manifest (JSON).
type Report struct {
	Total      Budget    `json:"total"`
	Conversion string    `json:"conversion"`
	Neighbours string    `json:"neighbours"`
	Charges    []Charge  `json:"charges"`
	Spent      Spent     `json:"spent"`
	Remaining  Remaining `json:"remaining"`
}

// Report returns the ledger's state.
func (l *Ledger) Report() Report {
	return Report{
		Total:      l.total,
		Conversion: l.set.Conversion.String(),
		Neighbours: l.set.Neighbours,
		Charges:    l.Charges(),
		Spent:      l.Spent(),
		Remaining:  l.Remaining(),
	}
}
