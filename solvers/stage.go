package solvers

import (
	"fmt"
	"math"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
)

// stageCountShare is the share of ρ the staged plan spends on its noisy
// record count (secondStage). The tables' σ grow by 1/√(1 − share), 0.5%;
// the count's standard error, 1/√(2·share·ρ) for K = 1, is 58, 112 and 531
// records at ε = 1, 0.5 and 0.1 (δ = 10⁻⁹). On tables of thousands of
// records that puts ν̂ within a few tens of percent of ν. On the suite's
// smallest (affairs, 601 records, where ν₂ is 17 and 3.7 at ε 0.1 and 0.5)
// ν̂₂ is above the threshold unless the count is 5.4 standard errors high
// at 0.1, and 1.2 at 0.5 (docs/BENCHMARKS.md).
const stageCountShare = 0.01

// secondStage is the explicit tuned plan under add/remove neighbours, where
// n is private and the plan cannot read it, in two stages:
//
//   - first a noisy record count n̂_c (discrete Gaussian, stageCountShare of
//     ρ);
//   - then the tables, with the rest. When the noise-to-signal ratio of the
//     order below the workload's top, ν̂_{R−1} (the rule's ν of
//     Project.Plan, at n̂_c and the whole ρ), is at most the threshold, the
//     tables are the plan's C_{R−1} and C_R at the σ it set. Otherwise the
//     budget does not resolve C_{R−1}, from which the fit would extrapolate
//     the top order, and the stage measures only the highest lower order r
//     whose ν̂_r is at most the threshold (the one-way tables if none), with
//     all the tables' budget.
//
// n̂ is then the inverse-variance mean of the count and the measured tables'
// noisy totals.
//
// Privacy: the count has ℓ2 sensitivity K (a unit adds or removes at most
// K records) and is charged as drawn; the tables are one charge ρ_2, the
// sum of the costs of C_{R−1} and C_R at the plan's σ. A lower order's
// tables are calibrated to at most ρ_2 in total. Which tables are measured
// is a function of the noisy count (post-processing), so the composition is
// adaptive zCDP composition with a fixed total.
type secondStage struct {
	count *countPlan
	top   int     // R, the workload's highest marginal order
	keep  []group // C_{R−1} and C_R at the plan's σ
	rho   float64 // ρ_2: the tables' budget (the sum of keep's costs)
	all   float64 // the plan's whole ρ, the budget ν is computed at
}

// planStaged plans the staged tables: the count with stageCountShare of
// rho, then groups (C_{R−1}, C_R and any non-marginal family, split in
// proportion to share) calibrated with the rest; n_estimate_se is the
// error when the tables are C_{R−1} and C_R.
func (s *Project) planStaged(plan *Plan, sh *Shape, groups []group, share []float64, top int, rho float64) error {
	count, rest, err := planCountShare(s.Name(), rho, stageCountShare, sh.Unit())
	if err != nil {
		return err
	}
	charges := calibrate(groups, share, rest, sh.Workload, s.Name())
	var vars []float64
	for _, g := range groups {
		if g.attrs != nil {
			vars = append(vars, float64(cellsOf(sh.Workload.Domain(), g.attrs))*g.sigma*g.sigma)
		}
	}
	sd := count.sd()
	plan.Params["n_estimate_se"] = estimateNSE(append(vars, sd*sd))
	s.stageTables(plan, sh.Workload, count, groups, charges, top, rho)
	return nil
}

// stageTables makes plan's marginal groups (C_{R−1} and C_R, calibrated
// with the rest of ρ after count) the second stage: the plan keeps the
// count and any non-marginal family with their charges, and the tables
// become one charge.
func (s *Project) stageTables(plan *Plan, w *query.Workload, count *countPlan, groups []group, charges []privacy.Charge, top int, rho float64) {
	st := &secondStage{count: count, top: top, all: rho}
	var fams []group
	var famCharges []privacy.Charge
	for i, g := range groups {
		if g.attrs == nil {
			fams = append(fams, g)
			famCharges = append(famCharges, charges[i])
			continue
		}
		st.keep = append(st.keep, g)
		st.rho += charges[i].Rho
	}
	plan.groups = fams
	plan.stage = st
	lower := len(downwardClosure(w, top-1))
	plan.Charges = append(append([]privacy.Charge{count.charge}, famCharges...), privacy.Charge{
		Label: fmt.Sprintf("%s: the tables, chosen with the noisy record count: discrete Gaussian (ℓ2 sensitivity %.4g counts) "+
			"on the %d order-%d and %d order-%d marginals (σ = %.4g counts each), or, when the count says the budget does not "+
			"resolve the order-%d marginals (noise-to-signal ratio above %g), on the marginals of the highest order it "+
			"resolves alone (the one-way marginals if none; total at most this ρ)",
			s.Name(), math.Sqrt(st.keep[0].sens2), lower, top-1, len(st.keep)-lower, top, st.keep[0].sigma, top-1, s.threshold()),
		Cost: privacy.ZCDPCost(st.rho),
	})
	count.params(plan)
	plan.Params["count_share"] = stageCountShare
}

// tables draws the stage's count and returns the groups it measures (the
// tables, then plan.groups' families), the order it resolved and the
// count as n̂'s prior.
func (s *Project) tables(p *Problem, plan *Plan) ([]group, int, *nPrior) {
	st := plan.stage
	v := float64(st.count.draw(p.Rand, p.N))
	if p.noPrivacy {
		v = float64(p.N)
	}
	sd := st.count.sd()
	prior := &nPrior{value: v, variance: sd * sd}
	groups, order := s.choose(st, &p.Shape, max(v, 1))
	return append(groups, plan.groups...), order, prior
}

// choose returns the tables the stage measures given the noisy count n̂_c
// and the highest order among them.
func (s *Project) choose(st *secondStage, sh *Shape, nHat float64) ([]group, int) {
	if s.ratio(sh, st.top-1, st.all, nHat) <= s.threshold() {
		return st.keep, st.top
	}
	r := st.top - 1
	for r > 1 && s.ratio(sh, r, st.all, nHat) > s.threshold() {
		r--
	}
	sens2 := st.keep[0].sens2
	var groups []group
	var share []float64
	for _, set := range downwardClosure(sh.Workload, r) {
		groups = append(groups, group{attrs: set, sens2: sens2})
		share = append(share, 1)
	}
	// Calibrated a hair under ρ_2 so that the rounding of the groups' costs
	// cannot take their sum above the charge.
	calibrate(groups, share, st.rho*(1-1e-9), sh.Workload, s.Name())
	return groups, r
}

// measureStaged measures a staged plan: the count, then the tables it
// chooses. It records the count (first_stage_n), the order resolved
// (second_stage_order, order_r), the groups measured and n̂'s standard
// error over them (n_estimate_se).
func (s *Project) measureStaged(p *Problem, plan *Plan) (*measured, error) {
	groups, order, prior := s.tables(p, plan)
	plan.Params["count_estimate"] = prior.value
	plan.Params["tables_order"] = float64(order)
	plan.Params[fmt.Sprintf("order_%d", order)] = 1
	if order == plan.stage.top {
		plan.Params[fmt.Sprintf("order_%d", order-1)] = 1
	}
	plan.groups = groups
	plan.Params["groups"] = float64(len(groups))
	ms, err := measureN(p, groups, p.Neighbours, nil, prior)
	if err != nil {
		return nil, err
	}
	var vars []float64
	for _, g := range groups {
		if g.attrs != nil {
			vars = append(vars, float64(cellsOf(p.Workload.Domain(), g.attrs))*g.sigma*g.sigma)
		}
	}
	plan.Params["n_estimate_se"] = estimateNSE(append(vars, prior.variance))
	return ms, nil
}
