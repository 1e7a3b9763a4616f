package release

import (
	"fmt"
	"strconv"

	"github.com/dpsynth/synth/solvers"
)

// BudgetWarnings are the sanity warnings a budget gets from its public
// values alone: an ε above 10 promises little.
func BudgetWarnings(eps, delta float64) []string {
	var out []string
	if eps > 10 {
		out = append(out, fmt.Sprintf("ε = %g is above 10: the release is differentially private in name only (an adversary's odds on any record may grow by a factor up to e^%g)", eps, eps))
	}
	return out
}

// DeltaWarning warns when δ ≥ 1/n, n the number of records released: a
// mechanism may then reveal a whole record with probability δ and still
// meet the guarantee. Under replace-one neighbours n is public; under
// add/remove the caller must pass a noisy estimate of n (never the true n).
func DeltaWarning(delta float64, n float64, what string) string {
	if delta <= 0 || n <= 0 || delta < 1/n {
		return ""
	}
	return fmt.Sprintf("δ = %g is at least 1/n (n = %s, %s): the guarantee allows revealing a whole record (or unit) with probability δ; choose δ well below 1/n (e.g. 1e-9)", delta, strconv.FormatFloat(n, 'f', 0, 64), what)
}

// sizeWarnings are the warnings that need n: δ ≥ 1/n. Under replace-one
// neighbours n (the records released) is public; under add/remove it is
// private, and only the solver's noisy estimate of it (a DP output, if the
// plan has one) may be compared, never the true n.
func (r *runner) sizeWarnings() []string {
	var n float64
	what := "the number of records released, public under replace-one neighbours"
	if r.cfg.Neighbours == solvers.AddRemove {
		if r.res == nil || r.res.Plan == nil {
			return nil
		}
		est, ok := r.res.Plan.Params["n_estimate"]
		if !ok {
			return nil
		}
		n, what = est, "the noisy estimate of n: the true n is private under add/remove neighbours"
		if r.cfg.PrivacyUnit != "" {
			// With units 1/δ should exceed the number of units, which is at
			// most the rows kept: δ ≥ 1/n̂ may mean δ ≥ 1/units.
			what = "the noisy estimate of the rows kept, at least the number of privacy units: the true count is private under add/remove neighbours"
		}
	} else {
		n = float64(r.n)
	}
	if w := DeltaWarning(r.cfg.Delta, n, what); w != "" {
		return []string{w}
	}
	return nil
}
