package solvers

// unresolved is the one-way start's treatment of the values its budget
// does not resolve: an attribute's value whose pooled (and smoothed)
// estimate is below κ times that estimate's noise, κ = supportSigmas() (3,
// the factored rounds' effective supports). The floor at half a record
// keeps every share positive, so the noise of many such values adds up to
// mass the records do not hold, and normalising takes it from the values
// that do: at ε = 0.1 on a table of 601 records (affairs) no value of most
// attributes is resolved, and the start's marginal L1 error was worse than
// the uniform distribution's. The unresolved values are therefore pooled
// in groups (an ordered attribute's runs of consecutive unresolved codes,
// each a group; a categorical attribute's unresolved values, one group):
// each value is moved towards its group's mean by the positive-part
// James–Stein factor b = max(0, 1 − (m − 3)·σ̄²/Σ(e − ē)²) of a group of m
// values (b = 0, the mean, for m ≤ 3), and a negative mean counts as 0.
// Resolved values keep their estimates, unlike a shrinkage of the whole
// table towards its mean, which draws the large cells towards the others.
// docs/BENCHMARKS.md "The one-way start pools the values the budget does
// not resolve".
//
// The groups and the noise are chosen once, at the first start, and kept
// for SURE's shadow (as the smoothing's half-widths are): the factor b is
// recomputed from the shadow's estimates, a continuous function of them.
//
// Privacy: it reads only the noisy estimates (post-processing).
type unresolved struct {
	groups [][]int   // value codes of each group (m ≥ 2)
	sd     []float64 // per value, the noise of its estimate
}

// newUnresolved chooses the groups of an attribute's estimate est (noise sd
// per value): the values below kappa·sd, in runs of consecutive codes below
// ordered (the attribute's ordered codes, smoothCodes), the rest together.
func newUnresolved(est, sd []float64, ordered int, kappa float64) *unresolved {
	u := &unresolved{sd: sd}
	low := func(v int) bool { return est[v] < kappa*sd[v] }
	for from, to := range codeRuns(ordered, low) {
		if to-from >= 2 {
			u.groups = append(u.groups, seq(from, to))
		}
	}
	var rest []int
	for v := ordered; v < len(est); v++ {
		if low(v) {
			rest = append(rest, v)
		}
	}
	if len(rest) >= 2 {
		u.groups = append(u.groups, rest)
	}
	return u
}

// shrink moves each group's values of est towards the group's mean (see
// unresolved).
func (u *unresolved) shrink(est []float64) {
	if u == nil {
		return
	}
	for _, g := range u.groups {
		m := float64(len(g))
		sum, noise := 0.0, 0.0
		for _, v := range g {
			sum += est[v]
			noise += u.sd[v] * u.sd[v]
		}
		mean := sum / m
		b := 0.0
		if len(g) > 3 {
			ss := 0.0
			for _, v := range g {
				ss += (est[v] - mean) * (est[v] - mean)
			}
			if ss > 0 {
				b = max(0, 1-(m-3)*(noise/m)/ss)
			}
		}
		for _, v := range g {
			est[v] = max(mean, 0) + b*(est[v]-mean)
		}
	}
}

// seq returns the codes from, from+1, …, to−1.
func seq(from, to int) []int {
	s := make([]int, 0, to-from)
	for v := from; v < to; v++ {
		s = append(s, v)
	}
	return s
}
