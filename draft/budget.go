package draft

import (
	"fmt"
	"math"

	"github.com/dpsynth/synth/privacy"
)

// voteShare is the share of a column's ρ spent on its kind vote; the rest
// goes to its values stage (partition selection or bounds). A typed
// boolean column, which has no values stage, spends all of it on the vote.
const voteShare = 0.25

// rhoSlack lowers the ρ of the plan by a relative 1e-9, so that the costs,
// each rounded up, fit the budget.
const rhoSlack = 1 - 1e-9

// plan is the budget split of a draft, computed from public inputs only
// (the schema and the settings) before any record is read.
//
// The split. Let C be the number of drafted columns and S the number of
// text columns (the ones that may need partition selection). When S > 0,
// δ is split in halves: δ_sel = δ/2 for partition selection, δ_sel/S per
// text column, and δ/2 for the conversion of zCDP to (ε, δ); otherwise all
// of δ goes to the conversion. ρ is the largest zCDP ρ that converts to ε
// at the conversion's δ (privacy.EpsToRho, tight conversion), lowered by a
// relative 1e-9. Each column gets ρ/C: voteShare of it for its kind vote
// (a discrete Gaussian of ℓ2 sensitivity K), the rest for its values stage,
// which is either partition selection (a discrete Gaussian of ℓ2
// sensitivity √K, with the column's δ_sel/S) or four exponential mechanisms
// for its bounds (each ε0 with 4·ε0²/8 = the values share). Which stage a
// text column runs depends on its noisy kind; each is charged at its
// planned share, so the plan's total holds whichever runs (an unused share
// is not given back).
//
// Composition: the zCDP charges add up (ρ), the selections' δ_sel add up,
// and the total is δ_sel-approximately ρ-zCDP (Bun and Steinke 2016,
// Section 8: approximate zCDP composes adaptively by adding ρ and δ), hence
// (ε, δ_sel + δ_conv)-DP with ε = RhoToEps(ρ, δ_conv) <= Settings.Epsilon:
// the conversion (tight, Canonne, Kamath and Steinke 2020) applies to the
// distributions conditioned on the good events, and the bad events add
// δ_sel. The privacy.Ledger that checks the plan before
// any record is read computes the same: it adds the ApproxCost(0, δ_sel/S)
// charges to the zCDP total converted at the δ left.
type plan struct {
	rho       float64 // ρ of the whole draft
	deltaConv float64
	deltaSel  float64
	cols      []colPlan
	charges   []privacy.Charge
}

// colPlan is one column's share and calibration.
type colPlan struct {
	cells     []cell
	rho       float64
	voteRho   float64
	vote      *privacy.DiscreteGaussian // ℓ2 sensitivity K
	valuesRho float64
	ps        *privacy.DiscreteGaussian // partition selection, ℓ2 sensitivity √K (text columns)
	sel       selection
	emEps     float64 // ε0 of each of the four quantile EMs (not for booleans)
}

// gaussianFor returns the exact discrete Gaussian sampler of smallest σ
// (within 1e-12) whose cost at ℓ2 sensitivity l2 is at most rho.
func gaussianFor(l2, rho float64) (*privacy.DiscreteGaussian, error) {
	sigma := l2 / math.Sqrt(2*rho)
	for range 1000 {
		if !(sigma <= privacy.MaxDiscreteScale) {
			return nil, fmt.Errorf("draft: the budget is too small for this many columns (a noise scale σ = %.3g is beyond the sampler's 2^40): raise epsilon or exclude columns", sigma)
		}
		g, err := privacy.NewDiscreteGaussian(sigma)
		if err != nil {
			return nil, fmt.Errorf("draft: %w", err)
		}
		if g.Cost(l2).Rho <= rho {
			return g, nil
		}
		sigma = math.Nextafter(sigma*(1+1e-12), math.Inf(1))
	}
	return nil, fmt.Errorf("draft: cannot calibrate a discrete Gaussian to ρ = %g", rho)
}

// newPlan splits the budget over the columns (see plan).
func newPlan(t *table, st *settings) (*plan, error) {
	p := &plan{deltaConv: st.Delta}
	text := 0
	for _, c := range t.cols {
		if c.src == srcText {
			text++
		}
	}
	if text > 0 {
		p.deltaSel = st.Delta / 2
		p.deltaConv = st.Delta - p.deltaSel
	}
	p.rho = privacy.EpsToRho(st.Epsilon, p.deltaConv, privacy.Tight) * rhoSlack
	if !(p.rho > 0) {
		return nil, fmt.Errorf("draft: ε = %g, δ = %g leaves no zCDP budget", st.Epsilon, st.Delta)
	}
	rhoCol := p.rho / float64(len(t.cols))
	p.cols = make([]colPlan, len(t.cols))
	for i, c := range t.cols {
		cp := &p.cols[i]
		cp.cells = layout(c, st)
		cp.rho = rhoCol
		cp.voteRho = voteShare * rhoCol
		if c.src == srcBool {
			cp.voteRho = rhoCol
		}
		cp.valuesRho = rhoCol - cp.voteRho
		var voteCost privacy.Cost
		var err error
		if cp.vote, voteCost, err = newVoteNoise(st.k, cp.voteRho); err != nil {
			return nil, err
		}
		label := fmt.Sprintf("draft: column %q", c.name)
		p.charges = append(p.charges, privacy.Charge{
			Label: label + fmt.Sprintf(": kind vote (discrete Gaussian σ = %.4g, ℓ2 sensitivity %d)", cp.vote.Sigma(), st.k),
			Cost:  voteCost})
		if c.src == srcBool {
			continue
		}
		cp.emEps = newBoundsEps(cp.valuesRho)
		values := boundsCost(cp.emEps)
		what := fmt.Sprintf("bounds (%d exponential mechanisms, ε0 = %.4g, sensitivity %d)", boundEMs, cp.emEps, st.k)
		if c.src == srcText {
			var ps, psDelta privacy.Cost
			if cp.ps, cp.sel, ps, psDelta, err = newSelectionNoise(st.k, cp.valuesRho, p.deltaSel/float64(text)); err != nil {
				return nil, err
			}
			what = fmt.Sprintf("partition selection (discrete Gaussian σ = %.4g, ℓ2 sensitivity √%d, threshold %d) or %s", cp.ps.Sigma(), st.k, cp.sel.tau, what)
			values = privacy.ZCDPCost(max(values.Rho, ps.Rho))
			p.charges = append(p.charges, privacy.Charge{Label: label + ": partition selection's δ", Cost: psDelta})
		}
		if values.Rho > cp.valuesRho {
			return nil, fmt.Errorf("draft: internal error: column %q's values stage costs ρ = %g over its share %g", c.name, values.Rho, cp.valuesRho)
		}
		p.charges = append(p.charges, privacy.Charge{Label: label + ": " + what, Cost: privacy.ZCDPCost(values.Rho)})
	}
	return p, nil
}

// charge checks the plan against the budget and charges it, before any
// record is read.
func (p *plan) charge(st *settings) (*privacy.Ledger, error) {
	l, err := privacy.NewLedger(privacy.Budget{Eps: st.Epsilon, Delta: st.Delta}, &privacy.LedgerSettings{
		Neighbours: "add or remove one privacy unit"})
	if err != nil {
		return nil, fmt.Errorf("draft: %w", err)
	}
	if err := l.Charge(p.charges...); err != nil {
		return nil, fmt.Errorf("draft: the plan does not fit the budget: %w", err)
	}
	return l, nil
}

// notes states the draft's privacy guarantee and budget split.
func (p *plan) notes(t *table, st *settings) []string {
	unit := "one row (a person with r rows is protected at about r·ε; name a privacy-unit column to protect people)"
	if st.PrivacyUnit != "" {
		unit = fmt.Sprintf("all rows with the same value of column %q, at most %d of them kept (chosen at random) before any count", st.PrivacyUnit, st.k)
	}
	out := []string{
		fmt.Sprintf("privacy: this draft is (ε = %g, δ = %g)-differentially private for the addition or removal of one privacy unit: %s", st.Epsilon, st.Delta, unit),
		fmt.Sprintf("budget: ρ = %.4g (zCDP, converted at δ = %g) split equally over %d columns, %g%% of each for the kind vote and the rest for its categories or bounds; δ = %g for partition selection", p.rho, p.deltaConv, len(t.cols), 100*voteShare, p.deltaSel),
		"every kind, category, bound and null token below is a noisy estimate: check it against public knowledge (a code book, a schema, published ranges) before a release; the domain you release with is public input",
	}
	return out
}
