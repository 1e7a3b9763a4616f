package solvers

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/dpsynth/synth/privacy"
)

// CountShare is the share of its budget that dpfw, dpam, smd and mwem spend,
// under add/remove neighbours, on a noisy count n̂ of the records: n is
// private there, and the seed solvers' scores, steps and rules need a
// normaliser. Their own mechanisms plan with the rest: ρ·(1 − CountShare)
// under zCDP accounting, ε·(1 − CountShare) for a pure budget or a paper
// setting's own composition (with its δ).
const CountShare = 0.05

// countSlack lowers what is left for a solver's own mechanisms by a relative
// 10^-9 (the calibrations' slack), so that the noisy count's charge, rounded
// up, and the rest never sum above the budget in the ledger.
const countSlack = 1e-9

// countPlan is the noisy record count of a seed solver under add/remove
// neighbours: n̂ = max(1, n + Z), with Z an exact discrete Gaussian (zCDP
// accounting) or discrete Laplace (a pure budget, or a paper setting whose
// charges are pure or approximate DP).
//
// Privacy: one privacy unit adds or removes at most K = Shape.Unit()
// records, so n moves by at most K: ℓ1 and ℓ2 sensitivity K. The discrete
// Gaussian of parameter σ is then K²/(2σ²)-zCDP and the discrete Laplace of
// scale b is (K/b)-DP (Canonne, Kamath and Steinke 2020); the samplers are
// exact. The clamp to at least 1 and everything derived from n̂ (the
// normalised answers, the second plan's parameters, the default number of
// synthetic rows) are post-processing. n̂ itself is a public, noisy output
// (Plan.Params["n_estimate"]).
type countPlan struct {
	unit   int
	gauss  *privacy.DiscreteGaussian
	lap    *privacy.DiscreteLaplace
	noise  float64 // σ (Gaussian) or scale (Laplace), in records
	share  float64 // the share of the budget it takes
	charge privacy.Charge
}

// planCountZCDP plans the noisy count with CountShare of rho (a discrete
// Gaussian) and returns it with the ρ left for the solver's own mechanisms.
func planCountZCDP(solver string, rho float64, unit int) (*countPlan, float64, error) {
	return planCountShare(solver, rho, CountShare, unit)
}

// planCountShare is planCountZCDP with the count's share of rho given.
func planCountShare(solver string, rho, share float64, unit int) (*countPlan, float64, error) {
	K := float64(unit)
	sigma := privacy.CalibrateGaussian(share*rho, 1, K)
	g, err := privacy.NewDiscreteGaussian(sigma)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: the noisy record count: %w", solver, err)
	}
	cost := privacy.GaussianCost(K, sigma)
	if g.Cost(K).Rho > cost.Rho {
		return nil, 0, fmt.Errorf("%s: internal error: record count cost %v over %v", solver, g.Cost(K).Rho, cost.Rho)
	}
	c := &countPlan{unit: unit, gauss: g, noise: sigma, share: share, charge: privacy.Charge{
		Label: fmt.Sprintf("%s: discrete Gaussian on the record count (ℓ2 sensitivity %d counts, σ = %.4g counts)", solver, unit, sigma),
		Cost:  cost,
	}}
	return c, (rho - cost.Rho) * (1 - countSlack), nil
}

// planCountPure plans the noisy count with CountShare of eps (a discrete
// Laplace, pure ε) and returns it with the ε left for the solver's own
// mechanisms.
func planCountPure(solver string, eps float64, unit int) (*countPlan, float64, error) {
	K := float64(unit)
	scale := K / (CountShare * eps)
	l, err := privacy.NewDiscreteLaplace(scale)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: the noisy record count: %w", solver, err)
	}
	cost := l.Cost(K)
	c := &countPlan{unit: unit, lap: l, noise: scale, share: CountShare, charge: privacy.Charge{
		Label: fmt.Sprintf("%s: discrete Laplace on the record count (ℓ1 sensitivity %d counts, scale = %.4g counts)", solver, unit, scale),
		Cost:  cost,
	}}
	return c, (eps - cost.Eps) * (1 - countSlack), nil
}

// params records the count's public parameters in a plan.
func (c *countPlan) params(plan *Plan) {
	plan.Params["unit_rows"] = float64(c.unit)
	plan.Params["count_share"] = c.share
	if c.gauss != nil {
		plan.Params["count_sigma"] = c.noise
		plan.Params["count_rho"] = c.charge.Rho
	} else {
		plan.Params["count_scale"] = c.noise
		plan.Params["count_eps"] = c.charge.Eps
	}
}

// sd is the count noise's standard deviation: σ for the Gaussian, √2 times
// the scale for the Laplace.
func (c *countPlan) sd() float64 {
	if c.gauss != nil {
		return c.noise
	}
	return math.Sqrt2 * c.noise
}

// estimate draws n̂ = max(1, n + Z).
func (c *countPlan) estimate(r *privacy.Rand, n int) int {
	return int(max(1, c.draw(r, n)))
}

// draw draws n + Z, not clamped (an unbiased estimate of n).
func (c *countPlan) draw(r *privacy.Rand, n int) int64 {
	var z int64
	if c.gauss != nil {
		z = c.gauss.Sample(r)
	} else {
		z = c.lap.Sample(r)
	}
	return int64(n) + z
}

// planShape is the shape a seed solver plans with before any private step:
// under add/remove neighbours n is private, so N = 0.
func (p *Problem) planShape() *Shape {
	sh := p.Shape
	if sh.Neighbours == AddRemove {
		sh.N = 0
	}
	return &sh
}

// publicShape is the shape a public Plan call reads: under add/remove
// neighbours N is private and treated as unknown (0), whatever the caller
// set.
func publicShape(sh *Shape) *Shape {
	if sh.Neighbours != AddRemove || sh.N == 0 {
		return sh
	}
	c := *sh
	c.N = 0
	return &c
}

// chargeCount charges plan (made with planShape) to the ledger and, under
// add/remove neighbours, draws the noisy record count n̂ from p.Rand (n
// itself in the no-privacy test mode). It returns 0 under replace-one.
func (p *Problem) chargeCount(plan *Plan) (int, error) {
	if err := p.charge(plan); err != nil {
		return 0, err
	}
	if p.Neighbours != AddRemove {
		return 0, nil
	}
	if plan.count == nil {
		return 0, fmt.Errorf("%s: internal error: an add/remove plan without a record count", plan.Solver)
	}
	if p.noPrivacy {
		return p.N, nil
	}
	return plan.count.estimate(p.Rand, p.N), nil
}

// countedShape is the shape of the second plan under add/remove neighbours:
// N = n̂, a noisy, public count.
func (p *Problem) countedShape(nHat int) *Shape {
	sh := p.Shape
	sh.N = nHat
	return &sh
}

// replanned checks that the plan made with N = n̂ charges exactly what the
// plan made before any private step charged, and records n̂ in it.
func replanned(first, second *Plan, nHat int) error {
	if !slices.Equal(first.Charges, second.Charges) {
		return fmt.Errorf("%s: internal error: the plan's charges changed with the noisy count: %v vs %v", first.Solver, first.Charges, second.Charges)
	}
	second.Params["n_estimate"] = float64(nHat)
	return nil
}

// normalised returns a copy of p whose answers are fractions of the noisy
// count n̂ instead of the true n (a_j·n/n̂ = ⟨q_j, counts⟩/n̂) and whose N is
// n̂: the seed solvers' steps then read n̂ wherever they read the record
// count. Counts and Data still hold the true records.
func (p *Problem) normalised(nHat int) *Problem {
	q := *p
	q.N = nHat
	f := float64(p.N) / float64(nHat)
	q.Answers = make([]float64, len(p.Answers))
	for j, a := range p.Answers {
		q.Answers[j] = a * f
	}
	return &q
}

// begin is a seed solver's Solve up to its first private step, under either
// relation. It plans with planShape (N = 0 under add/remove), runs valid on
// the plan's parameters (checks that must come before any charge), charges
// the plan, and under add/remove draws n̂, plans again with N = n̂ (the same
// charges; the n-dependent parameters) and returns the problem normalised
// by n̂. Under replace-one it returns p and the one plan.
func begin[T any](ctx context.Context, p *Problem, plan func(*Shape) (*Plan, T, error), valid func(T) error) (*Problem, *Plan, T, error) {
	var zero T
	first, x, err := plan(p.planShape())
	if err != nil {
		return nil, nil, zero, err
	}
	if valid != nil {
		if err := valid(x); err != nil {
			return nil, nil, zero, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, zero, err
	}
	nHat, err := p.chargeCount(first)
	if err != nil {
		return nil, nil, zero, err
	}
	if p.Neighbours != AddRemove {
		return p, first, x, nil
	}
	second, x, err := plan(p.countedShape(nHat))
	if err != nil {
		return nil, nil, zero, err
	}
	if err := replanned(first, second, nHat); err != nil {
		return nil, nil, zero, err
	}
	return p.normalised(nHat), second, x, nil
}
