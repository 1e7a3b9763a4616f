package solvers

// variant is the evidence harness's override of the factored rules (and
// of the fit's trace); nil, its value in every ordinary build, means the
// documented rules.
var variant *experiment

// experiment is the evidence harness's override of the factored rules: a
// field that is set replaces its rule (a zero field leaves the rule as
// documented), so that a variant of the rules can run through the whole
// release and `synth bench` on the accuracy suite. nil means the documented
// rules; only the evidence build (experiment_evidence.go, build tag
// evidence: SYNTH_EXPERIMENT) and the tests (setVariant), the evidence
// tests among them, set it.
type experiment struct {
	fitTrace   func(int, float64, []float64) // called after each step
	selShare   float64                       // share of a round's ρ on the selection (0: the rule's, selectShare)
	anneal     float64                       // annealing allowance factor (0: 1)
	pairsMode  bool                          // measure the order below the workload's, fit the sets that fit
	supportK   float64                       // κ of the effective supports (0: the rule's; negative: off)
	oneAlloc   float64                       // one-way σ_a ∝ cells_a^(−oneAlloc) (0: oneWayPower; negative: equal σ)
	oneScale   float64                       // the one-way tables' ρ times this (0: the rule's, oneWayScale)
	coarse     float64                       // coarse pairs' share (0: the rule's, coarseShare; negative: off)
	perAttr    int                           // nominal rounds per attribute (0: tunedRounds)
	adaptive   bool                          // the adaptive rounds even where the measured sets fit one tree
	smoothMax  int                           // one-way smoothing's largest half-width (0: 4; negative: off)
	capBytes   uint64                        // the factored model's cap (0: the shape's)
	widenMoves float64                       // the widening test's move, in allowances (0: widenMoves)
	widenRun   float64                       // the widening test's rounds run, in rounds left (0: widenRun)
	stageShare float64                       // the staged plan's count share of ρ (0: stageCountShare)
	stageTop   float64                       // the staged plan's C_R-alone threshold (0: stageTopThreshold; negative: off)
	settle     int                           // the annealing test's settling steps (0: settleSteps; negative: none)
}

// stageShare returns the staged plan's count share: stageCountShare (the
// evidence harness may set another).
func stageShare() float64 {
	if v := variant; v != nil && v.stageShare > 0 {
		return v.stageShare
	}
	return stageCountShare
}

// stageTop returns the staged plan's largest ν_{R−1} for C_R alone:
// stageTopThreshold (the evidence harness may set another, or none: 0).
func stageTop() float64 {
	if v := variant; v != nil && v.stageTop != 0 {
		return max(v.stageTop, 0)
	}
	return stageTopThreshold
}

// projectSettings, when not nil, sets exported settings of every new
// Project (Rounds, RoundIters, Orders, Threshold): only the evidence build
// sets it (SYNTH_EXPERIMENT's keys rounds, riters, order and threshold); in
// every other build it is nil and New returns the default settings.
var projectSettings func(*Project)

func newProject(s Setting) Solver {
	p := &Project{Setting: s}
	if projectSettings != nil {
		projectSettings(p)
	}
	return p
}
