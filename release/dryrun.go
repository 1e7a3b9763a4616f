package release

import (
	"context"
	"io"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/universe"
)

// Preview is the plan of a release, made from public inputs only (the
// settings, the domain, the workload and the budget) without opening the
// data: what `synth release --dry-run` prints. Every figure in it is public.
type Preview struct {
	Solver  string `json:"solver"`
	Setting string `json:"setting"`
	// Model is the representation the release would use and Reason why
	// (Estimate.Model and Estimate.Reason).
	Model  string `json:"model"`
	Reason string `json:"reason"`

	Universe      string  `json:"universe_cells"`
	UniverseLog10 float64 `json:"universe_log10"`
	Workload      string  `json:"workload"`
	Queries       int     `json:"queries"`

	Budget PreviewBudget `json:"budget"`
	// Charges are the plan's privacy charges, each with its ρ (zCDP) or
	// (ε, δ); Total is what they compose to.
	Charges []Charge `json:"charges"`
	Total   Total    `json:"total"`
	// Iterations is the number of private steps of an iterative solver (0
	// otherwise).
	Iterations int `json:"iterations,omitempty"`

	Memory PreviewMemory `json:"memory"`
	Time   PreviewTime   `json:"time"`

	// Noise lists the noise scale of every table the plan measures with
	// Gaussian noise, with the a-priori half-width of a 95% interval on
	// each measured count (1.96σ, in counts: n is not known before the data
	// is read). Empty when the solver measures nothing (its noise lies in
	// private selections).
	Noise     []PreviewNoise `json:"noise,omitempty"`
	NoiseNote string         `json:"noise_note"`

	// NEstimateSE, under add/remove with a solver that records it, is the
	// standard error (records) of the noisy record count n̂ the release will
	// estimate n by (0: not recorded). A table of fewer than about twice as
	// many records is not resolved at this budget: the release would warn.
	NEstimateSE float64 `json:"n_estimate_se,omitempty"`

	// Warnings are the budget sanity warnings that public inputs already
	// show (a large ε); the release would print them too.
	Warnings []string `json:"warnings,omitempty"`

	// Ledger, with Config.Ledger, is what the table's lifetime budget has
	// left before this release (the dry run reserves nothing).
	Ledger *PreviewLedger `json:"ledger,omitempty"`
}

// PreviewLedger is a lifetime budget's state as the dry run found it.
type PreviewLedger struct {
	Where        string  `json:"ledger"`
	RemainingEps float64 `json:"remaining_epsilon"`
	RemainingRho float64 `json:"remaining_rho"`
}

// PreviewBudget is the budget and how it is accounted.
type PreviewBudget struct {
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Rho        float64 `json:"rho,omitempty"`
	Conversion string  `json:"conversion"`
	Neighbours string  `json:"neighbouring"`
	Accounting string  `json:"accounting"`
}

// PreviewMemory is the memory estimate (Estimate) and its cap.
type PreviewMemory struct {
	PeakBytes uint64         `json:"peak_bytes"`
	CapBytes  uint64         `json:"cap_bytes"`
	Parts     []EstimatePart `json:"parts"`
	Text      string         `json:"text"` // Estimate.Describe
}

// PreviewTime is an estimate of the release's wall time, stage by stage
// (see estimateTime and its calibrated kernels).
type PreviewTime struct {
	// Seconds is the central estimate of the whole release; Low and High
	// bound the range the cost model states. 0 when the model does not
	// cover the shape.
	Seconds float64 `json:"seconds"`
	Low     float64 `json:"seconds_low"`
	High    float64 `json:"seconds_high"`
	// Solve is the solve stage's part of Seconds (0: not estimated);
	// Stages are every stage's.
	Solve  float64     `json:"solve_seconds"`
	Stages []StageTime `json:"stages,omitempty"`
	// Records is the record count the estimate assumes (0: not known, and
	// the per-record stages are left out); PerRecord is what each record
	// adds.
	Records   float64 `json:"records,omitempty"`
	PerRecord float64 `json:"seconds_per_record"`
	Method    string  `json:"method"`
}

// PreviewNoise is the noise of one measured table.
type PreviewNoise struct {
	// Table names what is measured ("marginal {age, sex}", "the record
	// count", …) and Cells how many counts it has (solvers.Noise.Cells: 0
	// when not one table).
	Table string `json:"table"`
	Cells int64  `json:"cells,omitempty"`
	// Sigma is the standard deviation of the noise on each measured
	// count; HalfWidth95 = 1.96·Sigma, both in counts (records).
	Sigma       float64 `json:"sigma_counts"`
	HalfWidth95 float64 `json:"half_width_95_counts"`
}

// DryRun plans a release without reading its data: it runs every public
// check of Run (settings, domain, workload, model and memory, the budget;
// the same errors, so the CLI gives the same exit codes: 2, 77, 78), checks
// that the data file exists (os.Stat: a missing file is the release's
// exit 66) and returns the plan. It neither opens the data file nor
// touches the output folder.
func DryRun(ctx context.Context, cfg *Config) (*Preview, error) {
	return dryRun(ctx, cfg, true)
}

func dryRun(ctx context.Context, cfg *Config, statData bool) (*Preview, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &runner{ctx: ctx, cfg: cfg, hooks: &Hooks{}, start: time.Now(),
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := r.plan(); err != nil {
		return nil, err
	}
	pl, err := r.checkLedger()
	if err != nil {
		return nil, err
	}
	if statData {
		// The data file must exist (a release would stop there, exit 66);
		// Stat opens nothing.
		if _, err := os.Stat(cfg.Data); err != nil {
			return nil, err
		}
	}
	p, err := r.preview()
	if p != nil {
		p.Ledger = pl
	}
	return p, err
}

// PlanOnly is DryRun for a release that names no data file or output
// folder yet (synth inspect): the same plan, model and memory estimate.
func PlanOnly(ctx context.Context, cfg *Config) (*Preview, error) {
	c := *cfg
	if c.Data == "" {
		c.Data = "(no data file: not read)"
	}
	if c.Out == "" {
		c.Out = "(no output folder: not written)"
	}
	return dryRun(ctx, &c, cfg.Data != "")
}

func (r *runner) preview() (*Preview, error) {
	cfg := r.cfg
	p := &Preview{
		Solver: r.solverName, Setting: r.setting.String(),
		Model: r.est.Model.String(), Reason: r.est.Reason,
		Universe: universe.FormatCount(r.dom.SizeBig()), UniverseLog10: r.dom.Log10Size(),
		Workload: r.wlDesc, Queries: r.wl.M(),
		Iterations: r.plan0.Iterations,
		Budget: PreviewBudget{Epsilon: cfg.Epsilon, Delta: cfg.Delta, Conversion: cfg.Conversion.String(),
			Neighbours: cfg.neighbourText()},
		Memory: PreviewMemory{PeakBytes: r.est.PeakBytes, CapBytes: cfg.memoryCap(), Parts: r.est.Parts, Text: r.est.Describe()},
		Time:   estimateTime(r.timeInputs(guessRecords(cfg.Data, cfg.DataFormat, r.dom))),
	}
	// Compose the plan on a ledger of its own, as the solver will.
	l, err := privacy.NewLedger(privacy.Budget{Eps: cfg.Epsilon, Delta: cfg.Delta}, &privacy.LedgerSettings{Conversion: cfg.Conversion, Neighbours: cfg.neighbourText()})
	if err != nil {
		return nil, err
	}
	if err := l.Charge(r.plan0.Charges...); err != nil {
		return nil, err
	}
	p.Budget.Rho = privacyFacts(cfg, l).Rho
	p.Budget.Accounting = accounting(l)
	spent := l.Spent()
	p.Total = Total{Epsilon: spent.Eps, Delta: spent.Delta}
	if spent.Rho > 0 {
		rho := spent.Rho
		p.Total.Rho = &rho
	}
	p.Charges = manifestCharges(l.Charges())
	p.Noise, p.NoiseNote = planNoise(r.plan0, r.wl)
	p.NEstimateSE = r.plan0.Params["n_estimate_se"]
	p.Warnings = BudgetWarnings(cfg.Epsilon, cfg.Delta)
	return p, nil
}

// manifestCharges converts ledger charges to the manifest's form.
func manifestCharges(cs []privacy.Charge) []Charge {
	var out []Charge
	for _, c := range cs {
		mc := Charge{Label: c.Label}
		switch c.Kind {
		case privacy.ZCDP:
			rho := c.Rho
			mc.Rho = &rho
		case privacy.Pure:
			rho, e := c.Rho, c.Eps
			mc.Rho, mc.Epsilon = &rho, &e
		case privacy.Approx:
			e, d := c.Eps, c.Delta
			mc.Epsilon, mc.Delta = &e, &d
		}
		out = append(out, mc)
	}
	return out
}

const z95 = 1.959963984540054

// planNoise lists the noise scales the plan states (solvers.Plan.Noise),
// and a note on what they cover.
func planNoise(plan *solvers.Plan, w *query.Workload) ([]PreviewNoise, string) {
	list, adaptive := plan.Noise(w)
	var out []PreviewNoise
	for _, n := range list {
		if !(n.Sigma > 0) || math.IsInf(n.Sigma, 0) {
			continue
		}
		out = append(out, PreviewNoise{Table: n.Table, Cells: n.Cells, Sigma: n.Sigma, HalfWidth95: z95 * n.Sigma})
	}
	switch {
	case len(out) == 0:
		return nil, "this plan states no noise scale of a measured table (its noise is in private selections or internal to the solver), so no a-priori bound is given"
	case adaptive:
		return out, "±1.96σ is a two-sided 95% interval on each measured count (counts, as n is not known before reading); the adaptive rounds' noise is set during the run (annealed or widened by the fits' moves) and is not listed; the fitted answers' error also includes the fit's bias, which this does not cover"
	}
	return out, "±1.96σ is a two-sided 95% interval on each measured count (counts, as n is not known before reading); the released answers are fitted to these measurements, and the fit's bias is not covered"
}
