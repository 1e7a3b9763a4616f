package solvers

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
)

// exactMaxGain bounds the search for the exact accounting's ρ: at most this
// multiple of the zCDP conversion's. The bound allows 1.106–1.12 at
// δ = 10⁻⁹ and ε 1–0.1 (as continuous Gaussian noise would), 1.16 at
// δ = 10⁻⁶ and ε 0.5, and more at larger δ or smaller ε, up to this cap.
const exactMaxGain = 1.5

// exactSteps is the number of bisection steps on the gain: the ρ found is
// within a relative (exactMaxGain − 1)·2⁻¹⁶, about 10⁻⁵, of the largest the
// bound allows.
const exactSteps = 16

// exactEligible reports whether the plan under sh is made only of exact
// discrete Gaussians on counts that move by one, and exact accounting was
// asked for: the explicit tuned plan of a marginal workload under add/remove
// of one record (one cell of each table moves) or replace-one (two cells of
// each table move, or none).
func (s *Project) exactEligible(sh *Shape) bool {
	if sh.Accounting != AccountExact || sh.Neighbours == AddRemove && sh.Unit() != 1 ||
		sh.Model == Factored || s.Setting != Tuned || !(sh.Budget.Delta > 0) || !s.measuresMarginals(sh.Workload) {
		return false
	}
	for _, f := range sh.Workload.Families() {
		if f.Kind != query.Marginals {
			return false
		}
	}
	return true
}

// planExact plans with the largest multiple of rho (the zCDP conversion's
// budget) whose plan the exact accountant (privacy.StagedGaussian) puts at
// δ ≤ the budget's δ at its ε, and charges the plan as that one (ε, δ)
// cost. The plan's structure (what is measured, each table's share) is the
// zCDP plan's at the larger ρ. When the accountant cannot describe the plan,
// or finds it no better than zCDP, the zCDP plan stands.
//
// Privacy: the charge is the accountant's bound on the whole plan: the
// staged count and whichever tables it chooses (every branch the count can
// pick is in the bound), so the release is (ε, δ')-DP with δ' at most the
// budget's δ. It depends on the public budget and shape only (and on n
// under replace-one, where n is public).
func (s *Project) planExact(sh *Shape, rho float64) (*Plan, error) {
	eps, delta := sh.Budget.Eps, sh.Budget.Delta
	best, err := s.planAt(sh, rho)
	if err != nil {
		return nil, err
	}
	g, ok := stagedGaussian(best)
	if !ok {
		return best, nil
	}
	key := exactKey(g, eps, delta)
	if gain, ok := exactGains.get(key); ok {
		// The same plan was calibrated before (a release plans three
		// times): its gain, checked again on the plan it gives.
		p, err := s.planAt(sh, rho*gain)
		if err != nil {
			return nil, err
		}
		if g, ok := stagedGaussian(p); ok {
			if d := g.Delta(eps); d <= delta {
				s.chargeExact(p, rho, gain, eps, d, delta)
				return p, nil
			}
		}
	}
	bestDelta := g.Delta(eps)
	if bestDelta > delta {
		return best, nil
	}
	lo, hi := 1.0, exactMaxGain
	for range exactSteps {
		mid := (lo + hi) / 2
		p, err := s.planAt(sh, rho*mid)
		if err != nil {
			return nil, err
		}
		d := 1.0
		if g, ok := stagedGaussian(p); ok {
			d = g.Delta(eps)
		}
		if d <= delta {
			lo, best, bestDelta = mid, p, d
		} else {
			hi = mid
		}
	}
	s.chargeExact(best, rho, lo, eps, bestDelta, delta)
	exactGains.put(key, lo)
	return best, nil
}

// exactGains remembers the gains planExact found, by the accountant's view
// of the plan at the zCDP ρ and the budget: a release plans the same shape
// up to three times, and each search takes 17 evaluations of the bound.
var exactGains gainCache

// exactKey identifies a calibration: the plan's σ and tables at the zCDP
// ρ, which fix them at every multiple of it, and the budget.
func exactKey(g privacy.StagedGaussian, eps, delta float64) string {
	return fmt.Sprintf("%x %v %x %x", math.Float64bits(g.CountSigma), g.Branches, math.Float64bits(eps), math.Float64bits(delta))
}

// gainCache is a small map safe for concurrent use, emptied when full.
type gainCache struct {
	mu sync.Mutex
	m  map[string]float64
}

func (c *gainCache) get(k string) (float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *gainCache) put(k string, v float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= 64 {
		c.m = make(map[string]float64)
	}
	c.m[k] = v
}

// chargeExact replaces plan's zCDP charges by one (ε, δ) charge at the
// budget's (ε, δ), which the exact accountant's bound delta is at most,
// and records the accounting's parameters. Charging the budget's δ rather
// than the bound keeps the charge the same for the plans made before and
// after n is known under replace-one, whose tables may differ.
func (s *Project) chargeExact(plan *Plan, rho, gain, eps, delta, budgetDelta float64) {
	labels := make([]string, len(plan.Charges))
	for i, c := range plan.Charges {
		labels[i] = c.Label
	}
	plan.Charges = []privacy.Charge{{
		Label: fmt.Sprintf("%s: %s %s (the σ above are those of ρ = %.6g, %.4g times the zCDP conversion's; δ at most %.4g)",
			s.Name(), ExactChargePrefix, strings.Join(labels, "; "), rho*gain, gain, delta),
		Cost:  privacy.ApproxCost(eps, budgetDelta),
		Exact: true,
	}}
	plan.Params["rho_zcdp_budget"] = rho
	plan.Params["exact_gain"] = gain
	plan.Params["exact_delta"] = delta
}

// ExactChargePrefix starts the label of a charge made by exact accounting
// (after the solver's name), for people reading the manifest; programs read
// the charge's Exact field.
const ExactChargePrefix = "exact accounting (the discrete Gaussians' privacy-loss distribution, not zCDP) of"

// stagedGaussian describes plan to the exact accountant: its noisy count
// (when staged) and every set of tables it may measure. ok is false when
// the plan holds anything else.
func stagedGaussian(plan *Plan) (privacy.StagedGaussian, bool) {
	var g privacy.StagedGaussian
	st := plan.stage
	if st == nil {
		if plan.count != nil {
			return g, false
		}
		b, ok := gaussianBranch(plan.groups)
		g.Branches = append(g.Branches, b)
		return g, ok
	}
	if len(plan.groups) > 0 || st.count.gauss == nil {
		return g, false
	}
	g.CountSigma = st.count.noise
	sets := [][]group{st.keep, st.alone}
	if !math.IsInf(st.upperRecords, 1) {
		sets = append(sets, st.upper)
	}
	for _, gs := range sets {
		b, ok := gaussianBranch(gs)
		if !ok {
			return g, false
		}
		g.Branches = append(g.Branches, b)
	}
	return g, true
}

// gaussianBranch describes marginal tables of one σ whose neighbours differ
// by one in sens2 cells each (sens2 = 1 under add/remove of one record, 2
// under replace-one): the accountant's counts are the tables' changed cells.
// A record replaced within one cell changes none, which the bound covers:
// leaving a table's draws out never raises δ.
func gaussianBranch(gs []group) (privacy.GaussianBranch, bool) {
	if len(gs) == 0 {
		return privacy.GaussianBranch{}, false
	}
	cells := gs[0].sens2
	for _, g := range gs {
		if g.attrs == nil || g.sens2 != cells || (cells != 1 && cells != 2) || g.sigma != gs[0].sigma {
			return privacy.GaussianBranch{}, false
		}
	}
	return privacy.GaussianBranch{Tables: len(gs) * int(cells), Sigma: gs[0].sigma}, true
}
