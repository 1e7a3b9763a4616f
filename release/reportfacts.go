package release

import (
	"math"

	"github.com/dpsynth/synth/eval"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/universe"
)

// privacyFacts states the release's privacy for the reports: the budget
// (ε, δ), its ρ under the chosen conversion (0 for a pure budget, and for
// exact accounting, whose plan is not ρ-zCDP at that ρ), the neighbouring
// relation and the accounting. All public.
func privacyFacts(cfg *Config, ledger *privacy.Ledger) eval.PrivacyInfo {
	b := privacy.Budget{Eps: cfg.Epsilon, Delta: cfg.Delta}
	p := eval.PrivacyInfo{Epsilon: cfg.Epsilon, Delta: cfg.Delta, Neighbours: cfg.neighbourText(), Accounting: accounting(ledger)}
	if b.Delta > 0 && !exactAccounting(ledger) {
		if rho, err := b.Rho(cfg.Conversion); err == nil {
			p.Rho = rho
		}
	}
	return p
}

// solverParams lists a plan's parameters for a report, dropping values that
// are not finite (parameters not yet known).
func solverParams(setting string, params map[string]float64) []eval.Param {
	clean := make(map[string]float64, len(params))
	for k, v := range params {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			clean[k] = v
		}
	}
	return append([]eval.Param{{Name: "setting", Value: setting}}, eval.FloatParams(clean)...)
}

// publicParams are the solver parameters a public report may state: the
// plan made for the public shape before the solve. Under replace-one
// neighbours n is public, so the plan with n known qualifies (it holds the
// iteration counts that depend on n); under add/remove only the plan made
// without n does. Neither holds anything computed by the solve.
func publicParams(cfg *Config, setting string, plan0, plan *solvers.Plan) []eval.Param {
	if cfg.Neighbours == solvers.ReplaceOne && plan != nil {
		return solverParams(setting, plan.Params)
	}
	return solverParams(setting, plan0.Params)
}

// oneWayCounts computes the one-way tables of the data and of a synthetic
// table read as counts (synth eval).
func oneWayCounts(data, syn *universe.Counts) []eval.AttributeDist {
	t, s := NewOneWay(data.Domain()), NewOneWay(data.Domain())
	t.AddCounts(data)
	s.AddCounts(syn)
	return OneWayDists(t, s)
}
