package release

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dpsynth/synth/privacy"
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

// PreviewTime is a rough estimate of the solve's wall time (see
// EstimateTime).
type PreviewTime struct {
	// Seconds is the central estimate of the solve; Low and High bound the
	// range the cost model was seen to miss by on calibration runs.
	Seconds float64 `json:"solve_seconds"`
	Low     float64 `json:"solve_seconds_low"`
	High    float64 `json:"solve_seconds_high"`
	// PerRecord is the cost of reading the data and writing the rows, per
	// record (n is not known before reading).
	PerRecord float64 `json:"seconds_per_record"`
	Method    string  `json:"method"`
}

// PreviewNoise is the noise of one measured table.
type PreviewNoise struct {
	// Table names what is measured ("marginal {age, sex}", "the 14 one-way
	// marginals", …) and Cells how many counts it has (0 if not known).
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
		Time:   EstimateTime(r.solverName, r.est, r.plan0, r.dom),
	}
	p.Budget.Rho = privacyFacts(cfg, r.ledger).Rho
	// Compose the plan on a ledger of its own, as the solver will.
	l, err := privacy.NewLedger(privacy.Budget{Eps: cfg.Epsilon, Delta: cfg.Delta}, &privacy.LedgerSettings{Conversion: cfg.Conversion, Neighbours: cfg.neighbourText()})
	if err != nil {
		return nil, err
	}
	if err := l.Charge(r.plan0.Charges...); err != nil {
		return nil, err
	}
	p.Budget.Accounting = accounting(l)
	spent := l.Spent()
	p.Total = Total{Epsilon: spent.Eps, Delta: spent.Delta}
	if spent.Rho > 0 {
		rho := spent.Rho
		p.Total.Rho = &rho
	}
	p.Charges = manifestCharges(l.Charges())
	p.Noise, p.NoiseNote = planNoise(r.plan0, r.dom)
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

// The labels of Gaussian measurements state their noise scale
// (solvers/measure.go, solvers/factored.go): "…discrete Gaussian on TABLE
// (ℓ2 sensitivity D counts[ each], σ = S counts)". TestDryRunNoise pins the
// wording against the solvers' real plans.
var (
	gaussLabel = regexp.MustCompile(`discrete Gaussian on (.+) \(ℓ2 sensitivity [0-9.e+-]+ counts(?: each)?, σ = ([0-9.e+-]+) counts\)`)
)

const z95 = 1.959963984540054

// planNoise lists the noise scales the plan states, and a note on what
// they cover.
func planNoise(plan *solvers.Plan, dom *universe.Domain) ([]PreviewNoise, string) {
	var out []PreviewNoise
	adaptive := false
	for _, c := range plan.Charges {
		if strings.Contains(c.Label, "adaptive rounds") {
			adaptive = true
		}
		m := gaussLabel.FindStringSubmatch(c.Label)
		if m == nil {
			continue
		}
		sigma, err := strconv.ParseFloat(m[2], 64)
		if err != nil || !(sigma > 0) || math.IsInf(sigma, 0) {
			continue
		}
		out = append(out, PreviewNoise{Table: m[1], Cells: tableCells(m[1], dom), Sigma: sigma, HalfWidth95: z95 * sigma})
	}
	if plan.Solver == "mwem" && plan.Iterations > 0 {
		// Tuned MWEM measures one count per round with a discrete Gaussian
		// whose σ (counts, K included) the plan records.
		for _, c := range plan.Charges {
			if sigma := plan.Params["noise_counts"]; c.Kind == privacy.ZCDP && strings.Contains(c.Label, "Gaussian measurements of one count") && sigma > 0 {
				out = append(out, PreviewNoise{Table: fmt.Sprintf("each of the %d measured counts", plan.Iterations), Cells: 1, Sigma: sigma, HalfWidth95: z95 * sigma})
			}
		}
	}
	switch {
	case len(out) == 0:
		return nil, "this plan states no noise scale of a measured table (its noise is in private selections or internal to the solver), so no a-priori bound is given"
	case adaptive:
		return out, "±1.96σ is a two-sided 95% interval on each measured count (counts, as n is not known before reading); the adaptive rounds' noise is set by budget annealing during the run and is not listed; the fitted answers' error also includes the fit's bias, which this does not cover"
	}
	return out, "±1.96σ is a two-sided 95% interval on each measured count (counts, as n is not known before reading); the released answers are fitted to these measurements, and the fit's bias is not covered"
}

// tableCells returns the number of counts of a measured table named as in
// a charge label, or 0 if it cannot tell.
func tableCells(table string, dom *universe.Domain) int64 {
	inner, ok := strings.CutPrefix(table, "marginal {")
	if !ok || !strings.HasSuffix(inner, "}") {
		return 0
	}
	cells := int64(1)
	for _, name := range strings.Split(strings.TrimSuffix(inner, "}"), ", ") {
		i, ok := dom.Index(name)
		if !ok {
			return 0
		}
		cells *= int64(dom.Attr(i).Size())
	}
	return cells
}

// The time model's constants, calibrated on this kind of machine (2 cores)
// by timing the solve stage of releases at ε = 1, δ = 1e-9 (project,
// tuned). Explicit model (seconds measured / estimated): adult-reduced
// 2-way 0.84 / 0.71, 3-way 0.43 / 1.01; nltcs 2-way 0.61 / 0.31, 3-way
// 0.95 / 0.68. Factored model: adult 2-way 2.46 / 2.49, 3-way 9.07 / 9.05;
// titanic 2-way 0.018 / 0.019, 3-way 0.038 / 0.053 (three constants fitted
// to four runs: rough). Factored model holding the whole workload (one fit,
// no rounds; --model factored): adult-reduced 2-way 20.0 / 14.2, 3-way 18.0
// / 28.5; nltcs 2-way 29.1 / 13.9; titanic 1-way 0.006 / 0.017.
const (
	// explicitSecPerCell is the explicit project solve's seconds per
	// universe cell per √(measured tables).
	explicitSecPerCell = 4e-7
	// A factored round costs factoredSecPerCandCell per candidate cell
	// (scoring the candidates) plus factoredSecPerRound·k^0.2 (the fit; the
	// junction tree grows with the universe).
	factoredSecPerCandCell = 1.4e-9
	factoredSecPerRound    = 3e-6
	// A factored fit of the whole workload costs factoredSecPerTreeCell
	// per junction-tree cell per measured table.
	factoredSecPerTreeCell = 5e-7
	// secPerRecord is reading the data plus writing the rows, per record
	// (adult-reduced, 48,842 records: 0.16 s).
	secPerRecord = 3e-6
	timeSpread   = 3.0
	// maxEstimate (a day) bounds the estimates the model gives: above it
	// the model is outside what it was calibrated on.
	maxEstimate = 86400.0
)

// EstimateTime estimates the solve's wall time from the public plan with a
// rough cost model (its constants above): explicit project ∝ universe
// cells × √(measured tables); factored with rounds ∝ nominal rounds ×
// (candidate cells + a per-round fit cost growing as k^0.2); factored in
// one fit ∝ junction-tree cells × measured tables. It is rough: the stopping rules
// (SURE, budget annealing) end runs early by amounts the plan does not
// know, and the machine's speed and load change everything. The other
// solvers' iteration counts depend on n, which is not known before the
// data is read: their solve is not estimated (Seconds 0).
func EstimateTime(solver string, est *Estimate, plan *solvers.Plan, dom *universe.Domain) PreviewTime {
	t := PreviewTime{PerRecord: secPerRecord}
	if solver != "project" {
		t.Method = solver + "'s number of iterations depends on n, which is not known before the data is read: the solve is not estimated"
		t.Method += fmt.Sprintf("; reading and writing take about %g µs per record", secPerRecord*1e6)
		return t
	}
	k := math.Pow(10, dom.Log10Size())
	switch {
	case est.Model == solvers.Factored && plan.Params["rounds_nominal"] == 0:
		cells := plan.Params["model_bytes"] / 8
		t.Seconds = factoredSecPerTreeCell * cells * float64(max(len(plan.Charges), 1))
		t.Method = "rough cost model: junction-tree cells × measured tables × 0.5 µs"
	case est.Model == solvers.Factored:
		rounds := max(plan.Params["rounds_nominal"], 1)
		cells := plan.Params["candidate_cells"]
		t.Seconds = rounds * (factoredSecPerCandCell*cells + factoredSecPerRound*math.Pow(k, 0.2))
		t.Method = "rough cost model: nominal rounds × (candidate cells × 1.4 ns + 3 µs × k^0.2)"
	default:
		g := float64(len(plan.Charges))
		t.Seconds = explicitSecPerCell * k * math.Sqrt(max(g, 1))
		t.Method = "rough cost model: universe cells × √(measured tables) × 0.4 µs"
	}
	if !(t.Seconds <= maxEstimate) {
		// The factored term grows with the universe (k^0.2), not with the
		// junction tree the rounds build: past a few shipped shapes it
		// means nothing (10^25 h on 200 columns that release in 8 min).
		t.Seconds = 0
		t.Method = "the rough cost model does not cover this shape (its fit term grows with the universe's size, not with the model the rounds build): the solve is not estimated; the report states each stage's actual time"
		return t
	}
	t.Method += fmt.Sprintf(", calibrated on a few releases of the shipped datasets on a 2-core machine; the stopping rules and the machine's load can move it by a factor of %g either way; reading the data, writing the rows and scoring them come on top (about %g µs per record, more for large workloads: 0.2 s on titanic, 4 s on adult with all 3-way marginals)", timeSpread, secPerRecord*1e6)
	t.Low, t.High = t.Seconds/timeSpread, t.Seconds*timeSpread
	return t
}
