package continual

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/dpsynth/synth/model"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/solvers"
)

// ReleaseSettings configure the release of a period.
type ReleaseSettings struct {
	// Out is the output folder; Force replaces a release in it.
	Out   string
	Force bool
	// Rows is the number of synthetic rows (0: the noisy estimate of the
	// cumulative table's records).
	Rows int64
	// Output and Values are the format and the value rules, as for a
	// release.
	Output release.OutputSettings
	Values release.DecodeSettings
	// Version names the tool in the manifest.
	Version string
}

// Manifest is the public record of a continual period's release
// (manifest.json, and the Parquet footer's synth.manifest).
type Manifest struct {
	Schema  string `json:"schema"`
	Tool    string `json:"tool"`
	Created string `json:"created"`
	// Period is the period released, Periods the number of periods the
	// release covers (the cumulative table of periods 1..Periods).
	Period  string `json:"period"`
	Periods int    `json:"periods"`
	Horizon int    `json:"horizon"`
	// Privacy is the whole horizon's: charged once, at init.
	Privacy ManifestPrivacy `json:"privacy"`
	// Noise is the standard deviation (counts) of every cell of the
	// released prefix tables, from the plan alone.
	PrefixSigma float64 `json:"prefix_sigma"`
	// NEstimate is the records of the cumulative table, estimated from the
	// noisy tables (differentially private).
	NEstimate float64    `json:"n_estimate"`
	Sets      [][]string `json:"sets"`
	Fitted    [][]string `json:"fitted_sets"`
	Rows      int64      `json:"rows"`
	Files     []string   `json:"files"`
	// Randomness says where the sampling's randomness came from.
	Randomness string `json:"randomness"`
}

// ManifestPrivacy states the guarantee of the whole horizon.
type ManifestPrivacy struct {
	Relation  string           `json:"relation"`
	Mechanism string           `json:"mechanism"`
	Levels    int              `json:"levels"`
	Sigma     float64          `json:"node_sigma"`
	Epsilon   float64          `json:"epsilon"`
	Delta     float64          `json:"delta"`
	Rho       float64          `json:"rho"`
	Charges   []privacy.Charge `json:"charges"`
	Note      string           `json:"note"`
}

// ManifestSchema names the manifest's format.
const ManifestSchema = "synth.continual.manifest/1"

// WriteRelease writes the release of the first p.Index+1 periods from the
// state in dir: the measured tables' prefix estimates, a factored model
// fitted to them, and rows sampled from it, with the manifest. It reads no
// data and draws no privacy noise: everything is post-processing of the
// released nodes (r drives the sampling only).
func WriteRelease(ctx context.Context, dir string, s *State, p Period, set ReleaseSettings, r *privacy.Rand) (*Manifest, error) {
	plan := s.Plan
	dom, sets, err := plan.Resolve()
	if err != nil {
		return nil, err
	}
	t := p.Index + 1
	tabs, sigma, err := Estimates(dir, plan, t)
	if err != nil {
		return nil, err
	}
	ms := make([]solvers.NoisyMarginal, len(sets))
	for i, set := range sets {
		ms[i] = solvers.NoisyMarginal{Set: set, Counts: tabs[i], Sigma: sigma}
	}
	fit, err := solvers.FitNoisy(ctx, dom.Sizes(), ms, plan.MaxModelBytes, 0)
	if err != nil {
		return nil, err
	}
	defer fit.Model.Close()
	rows := set.Rows
	if rows == 0 {
		rows = max(int64(math.Round(fit.N)), 1)
	}
	man := &Manifest{Schema: ManifestSchema, Tool: "synth " + set.Version, Created: time.Now().UTC().Format(time.RFC3339),
		Period: p.Label, Periods: t, Horizon: plan.Horizon, PrefixSigma: sigma, NEstimate: fit.N, Sets: plan.Sets, Rows: rows,
		Files: []string{set.Output.Name(), release.ManifestFile}, Randomness: r.Describe(),
		Privacy: ManifestPrivacy{Relation: plan.Relation, Mechanism: plan.Mechanism, Levels: plan.Levels, Sigma: plan.Sigma,
			Epsilon: plan.Epsilon, Delta: plan.Delta, Rho: plan.Rho, Charges: plan.Charges(),
			Note: "the whole horizon's budget, charged once at init: every period's release is post-processing of the released tree nodes"}}
	for _, f := range fit.Sets {
		names := make([]string, len(f))
		for i, a := range f {
			names[i] = dom.Attr(a).Name
		}
		man.Fitted = append(man.Fitted, names)
	}
	manJSON, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, err
	}
	od, err := release.CreateOutDir(ctx, set.Out, &release.OutDirSettings{Force: set.Force, Files: man.Files})
	if err != nil {
		return nil, err
	}
	defer od.Abort()
	dec, err := release.NewDecoder(dom, &set.Values, r)
	if err != nil {
		return nil, err
	}
	if err := set.Output.WriteSyntheticRows(ctx, od, dom, dec, manJSON, func(rw release.RowWriter) error {
		return fit.Model.Sample(ctx, rows, model.Stratified, r, 0, func(rows []int32) error { return rw.WriteRows(ctx, rows) })
	}); err != nil {
		return nil, err
	}
	if err := od.Write(ctx, release.ManifestFile, 0o644, func(w io.Writer) error {
		_, err := w.Write(append(manJSON, '\n'))
		return err
	}); err != nil {
		return nil, err
	}
	if err := od.Commit(ctx); err != nil {
		return nil, err
	}
	return man, nil
}

// Status is what "synth continual status" reports.
type Status struct {
	Horizon   int     `json:"horizon"`
	Done      int     `json:"periods_done"`
	Remaining int     `json:"periods_remaining"`
	Mechanism string  `json:"mechanism"`
	Epsilon   float64 `json:"epsilon"`
	Delta     float64 `json:"delta"`
	Rho       float64 `json:"rho"`
	Sigma     float64 `json:"node_sigma"`
	// Periods lists each committed period with the nodes it released and
	// the σ of its release's prefix tables.
	Periods []PeriodStatus `json:"periods"`
	Note    string         `json:"note"`
}

// PeriodStatus is one committed period.
type PeriodStatus struct {
	Label       string  `json:"label"`
	Index       int     `json:"index"`
	Committed   string  `json:"committed"`
	Nodes       int     `json:"nodes_released"`
	PrefixSigma float64 `json:"prefix_sigma"`
}

// StatusOf summarises a state.
func StatusOf(s *State) *Status {
	p := s.Plan
	st := &Status{Horizon: p.Horizon, Done: len(s.Periods), Remaining: p.Horizon - len(s.Periods), Mechanism: p.Mechanism,
		Epsilon: p.Epsilon, Delta: p.Delta, Rho: p.Rho, Sigma: p.Sigma,
		Note: fmt.Sprintf("the whole horizon's (ε = %g, δ = %g) was charged at init; a period costs nothing more, and a period past the %d-th is refused", p.Epsilon, p.Delta, p.Horizon)}
	v := Variances(p.Levels, p.Mechanism == Reweighted)
	for _, per := range s.Periods {
		total := 0.0
		for _, n := range Prefix(per.Index + 1) {
			total += v[n.Level]
		}
		st.Periods = append(st.Periods, PeriodStatus{Label: per.Label, Index: per.Index, Committed: per.Committed,
			Nodes: len(per.Nodes), PrefixSigma: p.Sigma * math.Sqrt(total)})
	}
	return st
}
