package solvers

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
)

// stageCountShare is the share of ρ the staged plan spends on its noisy
// record count (secondStage). The tables' σ grow by 1/√(1 − share), 0.5%;
// the count's standard error, 1/√(2·share·ρ) for K = 1, is 58, 112 and 531
// records at ε = 1, 0.5 and 0.1 (δ = 10⁻⁹). Half, twice and five times the
// share moved the releases near the stage's threshold only within the
// seeds' spread (docs/BENCHMARKS.md, "The stage decides at the count").
const stageCountShare = 0.01

// stageThreshold is the staged plan's largest ν_{R−1} at which it still
// measures C_R (Project.Threshold overrides it). On public samples of
// twelve tables, sized so that ν_{R−1} was 0.75–2.4 at ε 0.1, 0.5 and 1
// (189 points, 12 seeds), dropping C_R paid on both max error and L1 down
// to ν_{R−1} = 1.5 against the replace-one rule's 3 (0.965 / 0.964 on
// geometric mean at ν 1.5–2.4); below it, at 1, it still paid on L1 but
// cost max error (1.007 / 0.990). docs/BENCHMARKS.md, "The stage decides
// at the count".
const stageThreshold = 1.5

// stageTopThreshold is the staged plan's largest ν_{R−1} at which it
// measures C_R alone, with all the tables' budget: where the budget
// resolves C_{R−1} this well, the C_R tables imply it about as precisely as
// its own measurement would, and its share of ρ buys more in C_R. On the
// explicit tables of the suite with all their 3-way and all their 2-way
// marginals (84 points, seeds 1–6), C_R alone against C_{R−1} and C_R gave
// 0.91 / 0.94 (max / L1, geometric mean) over the points with ν_{R−1} at
// most 0.03, 0.05, 0.075 or 0.1 alike, and lost from 0.108 up (nltcs, 3-way,
// ε = 0.1: 1.09 / 1.05); 0.05 is the middle of that flat range
// (docs/BENCHMARKS.md, "The suite's tables on their 2-way marginals"). On
// samples of the tables at sizes no suite point has, near and below the
// size where the rule decides (37 points, seeds 1–6), the releases it
// changed gained 0.976 / 0.979 over 20 points (docs/BENCHMARKS.md, "The
// C_R-alone threshold on held-out samples").
const stageTopThreshold = 0.05

// secondStage is the explicit tuned plan under add/remove neighbours, where
// n is private and the plan cannot read it, in two stages:
//
//   - first a noisy record count n̂_c (discrete Gaussian, stageCountShare of
//     ρ);
//   - then the tables, with the rest, chosen by the noise-to-signal ratio
//     of the order below the top, ν_{R−1} (the rule's ν of Project.Plan
//     with the whole ρ), read at n̂_c:
//   - above stageThreshold, the budget does not resolve C_{R−1} well
//     enough for C_R to pay: the fit extrapolates the top order from
//     C_{R−1}, which the stage measures alone with all the tables' budget,
//     as the replace-one rule does when ν_R is above its threshold. The
//     count decides as it is, with no margin: the threshold is where the
//     two choices break even, and on tables sampled at and around it
//     dropping C_R on the count's word did as well or better than keeping
//     it (docs/BENCHMARKS.md, "The stage decides at the count");
//   - at most stageTopThreshold, C_R alone with all the tables' budget:
//     C_{R−1} is resolved, and C_R implies it;
//   - between the two, C_{R−1} and C_R at the plan's σ.
//
// n̂ is then the inverse-variance mean of the count and the measured tables'
// noisy totals.
//
// Privacy: the count has ℓ2 sensitivity K (a unit adds or removes at most
// K records) and is charged as drawn; the tables are one charge ρ_2, the
// sum of the costs of C_{R−1} and C_R at the plan's σ. C_{R−1} alone and
// C_R alone are each calibrated to at most ρ_2 in total. Which tables are
// measured is a function of the noisy count (post-processing), so the
// composition is adaptive zCDP composition with a fixed total.
type secondStage struct {
	count *countPlan
	top   int     // R, the workload's highest marginal order
	keep  []group // C_{R−1} and C_R at the plan's σ
	alone []group // C_{R−1} alone, calibrated to ρ_2
	upper []group // C_R alone, calibrated to ρ_2
	rho   float64 // ρ_2: the tables' budget (the sum of keep's costs)
	// records is the n at which ν_{R−1} (at the plan's whole ρ) is the
	// threshold: ν falls as 1/n, so the stage keeps C_R exactly when the
	// noisy count is at least this.
	records float64
	// upperRecords is the n at which ν_{R−1} is stageTopThreshold: from
	// it on the stage measures C_R alone (+Inf when a Project.Threshold at
	// or below stageTopThreshold leaves no room for both orders' branch
	// below it: then the stage never measures C_R alone).
	upperRecords float64
}

// planStaged plans the staged tables: the count with stageCountShare of
// rho, then groups (C_{R−1}, C_R and any non-marginal family, split in
// proportion to share) calibrated with the rest; n_estimate_se is the
// error when the tables are C_{R−1} and C_R.
func (s *Project) planStaged(plan *Plan, sh *Shape, groups []group, share []float64, top int, rho float64) error {
	count, rest, err := planCountShare(s.Name(), rho, stageShare(), sh.Unit())
	if err != nil {
		return err
	}
	charges := calibrate(groups, share, rest, sh.Workload, s.Name())
	sd := count.sd()
	plan.Params["n_estimate_se"] = groupsNSE(sh.Workload.Domain(), groups, sd*sd)
	records := s.ratio(sh, top-1, rho, 1) / s.threshold(stageThreshold) // ν(n) = ν(1)/n
	s.stageTables(plan, count, groups, charges, top, records, sh.Workload)
	plan.Params["stage_records"] = records
	return nil
}

// aloneTables returns the stage's tables of one order (C_{R−1} or C_R)
// calibrated to all of its budget: what the stage measures when the count
// says the budget does not resolve C_{R−1} (order R−1), or resolves it
// well enough for C_R to imply it (order R).
func (s *Project) aloneTables(st *secondStage, order int, w *query.Workload) []group {
	var groups []group
	var share []float64
	for _, g := range st.keep {
		if len(g.attrs) == order {
			groups = append(groups, g) // a copy: calibrate sets its own σ
			share = append(share, 1)
		}
	}
	// Calibrated a hair under ρ_2 so that the rounding of the groups' costs
	// cannot take their sum above the charge.
	calibrate(groups, share, st.rho*(1-1e-9), w, s.Name())
	return groups
}

// stageTables makes plan's marginal groups (C_{R−1} and C_R, calibrated
// with the rest of ρ after count) the second stage, with C_{R−1} alone
// calibrated to the same charge: the plan keeps the count and any
// non-marginal family with their charges, and the tables become one
// charge.
func (s *Project) stageTables(plan *Plan, count *countPlan, groups []group, charges []privacy.Charge, top int, records float64, w *query.Workload) {
	st := &secondStage{count: count, top: top, records: records, upperRecords: math.Inf(1)}
	if thr, top := s.threshold(stageThreshold), stageTop(); top > 0 && thr > top {
		st.upperRecords = records * thr / top // ν(n) = ν(records)·records/n
	}
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
	st.alone = s.aloneTables(st, top-1, w)
	st.upper = s.aloneTables(st, top, w)
	lower := len(st.alone)
	plan.Charges = append(append([]privacy.Charge{count.charge}, famCharges...), privacy.Charge{
		Label: fmt.Sprintf("%s: the tables, chosen with the noisy record count: discrete Gaussian (ℓ2 sensitivity %.4g counts) "+
			"on the %d order-%d and %d order-%d marginals (σ = %.4g counts each); when the count says the budget does not "+
			"resolve the order-%d marginals (noise-to-signal ratio above %g at the count), on the "+
			"order-%d marginals alone, and when it resolves them well (ratio at most %g), on the order-%d marginals alone "+
			"(each total at most this ρ)",
			s.Name(), math.Sqrt(st.keep[0].sens2), lower, top-1, len(st.keep)-lower, top, st.keep[0].sigma, top-1,
			s.threshold(stageThreshold), top-1, stageTop(), top),
		Cost: privacy.ZCDPCost(st.rho),
	})
	count.params(plan)
}

// noise lists the stage's tables by the record count that chooses them
// (choose), for Plan.Noise.
func (st *secondStage) noise() []Noise {
	lower, upper := len(st.alone), len(st.upper) // C_{R−1}, C_R
	both := fmt.Sprintf("each of the %d order-%d and %d order-%d marginals, if the table holds more than about %.0f records",
		lower, st.top-1, upper, st.top, st.records)
	var list []Noise
	if !math.IsInf(st.upperRecords, 1) {
		both += fmt.Sprintf(" and fewer than about %.0f", st.upperRecords)
		list = append(list, Noise{
			Table: fmt.Sprintf("each of the %d order-%d marginals alone, if the table holds more than about %.0f records "+
				"(the noisy record count decides)", upper, st.top, st.upperRecords),
			Sigma: st.upper[0].sigma,
		})
	} else {
		both += " (the noisy record count decides)"
	}
	return append(list, Noise{Table: both, Sigma: st.keep[0].sigma}, Noise{
		Table: fmt.Sprintf("each of the %d order-%d marginals alone, if fewer than about %.0f", lower, st.top-1, st.records),
		Sigma: st.alone[0].sigma,
	})
}

// tables draws the stage's count and returns the groups it measures (the
// tables, then plan.groups' families), the highest order among them and
// the count as n̂'s prior.
func (s *Project) tables(p *Problem, plan *Plan) ([]group, int, *nPrior) {
	st := plan.stage
	v := float64(st.count.draw(p.Rand, p.N))
	if p.noPrivacy {
		v = float64(p.N)
	}
	sd := st.count.sd()
	prior := &nPrior{value: v, variance: sd * sd}
	groups, order := st.choose(max(v, 1))
	return append(groups, plan.groups...), order, prior
}

// choose returns the tables the stage measures given n, the noisy count
// (tables), and the highest order among them: C_R alone with all the
// stage's budget when n is at least upperRecords (ν_{R−1} at n at most
// stageTopThreshold), C_{R−1} and C_R when n is at least records (ν_{R−1}
// at most the threshold), else C_{R−1} alone with all the stage's budget.
func (st *secondStage) choose(n float64) ([]group, int) {
	switch {
	case n >= st.upperRecords:
		return st.upper, st.top
	case n >= st.records:
		return st.keep, st.top
	}
	return st.alone, st.top - 1
}

// measureStaged measures a staged plan: the count, then the tables it
// chooses. It records the count (count_estimate), the highest order
// measured (tables_order, and order_r for each order), the groups measured
// and n̂'s standard error over them (n_estimate_se).
func (s *Project) measureStaged(p *Problem, plan *Plan) (*measured, error) {
	groups, order, prior := s.tables(p, plan)
	plan.Params["count_estimate"] = prior.value
	plan.Params["tables_order"] = float64(order)
	plan.Params[fmt.Sprintf("order_%d", order)] = 1
	if order == plan.stage.top {
		if slices.ContainsFunc(groups, func(g group) bool { return g.attrs != nil && len(g.attrs) == order-1 }) {
			plan.Params[fmt.Sprintf("order_%d", order-1)] = 1
		}
	} else {
		plan.Warnings = append(plan.Warnings, droppedTop(prior.value, plan.stage))
	}
	plan.groups = groups
	plan.Params["groups"] = float64(len(groups))
	ms, err := measureN(p, groups, p.Neighbours, nil, prior)
	if err != nil {
		return nil, err
	}
	plan.Params["n_estimate_se"] = groupsNSE(p.Workload.Domain(), groups, prior.variance)
	return ms, nil
}

// droppedTop is the warning of a stage whose count chose C_{R−1} alone: the
// order-R answers are the fit's extrapolation, and what would have kept
// them. It reads the noisy count and the plan (post-processing).
func droppedTop(count float64, st *secondStage) string {
	return fmt.Sprintf("the noisy record count (%.0f, standard error %.0f) is below the %.0f records "+
		"at which this budget resolves the order-%d marginals well enough for the order-%d ones to pay: only the order-%d marginals "+
		"were measured, and the order-%d answers are the fit's extrapolation from them; a larger ε would measure the order-%d "+
		"marginals too",
		count, st.count.sd(), st.records, st.top-1, st.top, st.top-1, st.top, st.top)
}
