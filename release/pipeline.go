package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dpsynth/synth/eval"
	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/universe"
)

// Config is one release: where the data, domain and workload are, the
// budget, the solver and what to write. The CLI fills it from flags and a
// config file; the zero values of the optional fields are the documented
// defaults.
type Config struct {
	// Data is the private table (CSV or Parquet, or pre-aggregated counts
	// with CountColumn).
	Data        string
	DataFormat  ingest.Format
	CountColumn string
	// Policy lists the row-wise repairs the user allows (none by default).
	Policy universe.Policy
	// Inputs select the attributes and columns used (and stdin for "-").
	Inputs Inputs

	// Domain is the public domain file.
	Domain string
	// Workload is a workload file; when empty, Marginals > 0 asks for all
	// (or, with Sample > 0, Sample random) Marginals-way marginals, drawn
	// with WorkloadSeed.
	Workload     string
	Marginals    int
	Sample       int
	WorkloadSeed uint64

	// The privacy budget and its accounting.
	Epsilon, Delta float64
	Conversion     privacy.Conversion
	Neighbours     solvers.Neighbours

	// Solver and Setting name the solver ("" is project, tuned).
	Solver, Setting string

	// Rows is the number of synthetic rows; 0 means n (public under
	// replace-one neighbours; the private estimate under add/remove).
	Rows int64
	// Sampling draws the rows from D; the CLI's default is Balanced (the
	// zero value is Systematic).
	Sampling SampleMethod
	Values   DecodeSettings

	// Out is the output folder; Force allows replacing an earlier release
	// in it.
	Out   string
	Force bool

	// Seed, when set, makes the run reproducible and NOT private against
	// anyone who knows the seed (tests and demos only).
	Seed *uint64

	// Holdout keeps this fraction of the records out of the release, chosen
	// at random independently of the data, to estimate the error against
	// the data-generating distribution.
	Holdout float64
	// PublicReport writes reports that hold only a-priori error bounds
	// (safe to publish) instead of the internal ones.
	PublicReport bool

	// MemoryCap limits the explicit vectors over the universe (0: the
	// default of universe.DefaultMemoryCap).
	MemoryCap uint64

	// Title heads the reports (default: the data file's name and workload).
	Title string
	// Version and Commit identify the tool in the manifest.
	Version, Commit string
	// ConfigFile, if the settings came from one, is hashed into the manifest.
	ConfigFile string
	// DataName and DomainName, when set, replace the file paths in the
	// manifest and reports (e.g. for embedded files read from a scratch copy).
	DataName, DomainName string
}

// Hooks are the pipeline's optional callbacks.
type Hooks struct {
	// Log receives progress messages (nil: discarded).
	Log *slog.Logger
	// Progress is called after each solver iteration.
	Progress func(solvers.Progress)
}

// ConfigError is a problem with the settings themselves (CLI exit code 2).
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

func configErrorf(format string, args ...any) error {
	return &ConfigError{Msg: fmt.Sprintf(format, args...)}
}

// DataError is a problem with the private data found after reading it that
// no single row causes (e.g. no records at all). CLI exit code 65.
type DataError struct {
	File string
	Msg  string
}

func (e *DataError) Error() string { return e.File + ": " + e.Msg }

// Outcome summarises a finished release.
type Outcome struct {
	Dir     string   `json:"dir"`
	Files   []string `json:"files"`
	Rows    int64    `json:"rows"`
	Records int64    `json:"records"`
	Holdout int64    `json:"holdout_records,omitempty"`
	Solver  string   `json:"solver"`
	Setting string   `json:"setting"`
	Epsilon float64  `json:"epsilon"`
	Delta   float64  `json:"delta"`
	// Spent is the ε the charges compose to (at the budget's δ).
	Spent      float64 `json:"epsilon_spent"`
	Rho        float64 `json:"rho"`
	Randomness string  `json:"randomness"`
	// Errors are the workload errors of the released rows against the data:
	// internal, not differentially private; absent with PublicReport.
	Errors   *eval.Metrics `json:"internal_errors,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
	Seconds  float64       `json:"seconds"`
}

// Run performs a release. Everything that can be checked without the data
// — settings, domain, workload, budget, output folder — is checked before
// the data is opened; the privacy charges are checked against the budget
// before a record is read. On any error or cancellation nothing is left in
// the output folder.
func Run(ctx context.Context, cfg *Config, hooks *Hooks) (*Outcome, error) {
	start := time.Now()
	if hooks == nil {
		hooks = &Hooks{}
	}
	log := hooks.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	budget := privacy.Budget{Eps: cfg.Epsilon, Delta: cfg.Delta}
	if err := budget.Validate(); err != nil {
		return nil, &ConfigError{Msg: err.Error()}
	}

	// Public inputs.
	dom, err := universe.LoadDomain(cfg.Domain)
	if err != nil {
		return nil, err
	}
	if dom, err = cfg.Inputs.domain(dom); err != nil {
		return nil, err
	}
	if _, err := dom.CheckExplicit(cfg.MemoryCap); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Domain, err)
	}
	wl, wlDesc, err := loadWorkload(cfg.workloadSpec(), dom)
	if err != nil {
		return nil, err
	}
	solverName := cfg.Solver
	if solverName == "" {
		solverName = "project"
	}
	setting, err := solvers.ParseSetting(cfg.Setting)
	if err != nil {
		return nil, &ConfigError{Msg: err.Error()}
	}
	solver, err := solvers.New(solverName, setting)
	if err != nil {
		return nil, &ConfigError{Msg: err.Error()}
	}

	// The budget check, before any record is read.
	ledger, err := privacy.NewLedger(budget, &privacy.LedgerSettings{Conversion: cfg.Conversion, Neighbours: cfg.Neighbours.String()})
	if err != nil {
		return nil, &ConfigError{Msg: err.Error()}
	}
	shape := solvers.Shape{Budget: budget, Conversion: cfg.Conversion, Neighbours: cfg.Neighbours, Workload: wl}
	plan0, err := solver.Plan(&shape)
	if err != nil {
		if errors.Is(err, solvers.ErrUnsupported) {
			return nil, &ConfigError{Msg: err.Error()}
		}
		if budget.Delta == 0 {
			if refusal := pureRefusal(solver, &shape, ledger); refusal != nil {
				return nil, refusal
			}
		}
		return nil, err
	}
	if err := ledger.Check(plan0.Charges...); err != nil {
		return nil, err
	}
	log.Info("budget checked", "epsilon", cfg.Epsilon, "delta", cfg.Delta, "solver", solverName, "setting", setting.String(), "charges", len(plan0.Charges))

	var rnd *privacy.Rand
	if cfg.Seed != nil {
		rnd = privacy.NewSeeded(*cfg.Seed)
		log.Info("seeded run: " + rnd.Describe())
	} else if rnd, err = privacy.NewSecure(); err != nil {
		return nil, err
	}

	od, err := CreateOutDir(ctx, cfg.Out, &OutDirSettings{Force: cfg.Force})
	if err != nil {
		return nil, err
	}
	defer od.Abort()

	// The private data.
	log.Info("reading data", "file", cfg.Data)
	counts, stats, err := ingest.ReadFile(ctx, cfg.Data, dom, cfg.Inputs.options(cfg.DataFormat, cfg.CountColumn, cfg.Policy))
	if err != nil {
		return nil, err
	}
	if counts.Total() == 0 {
		return nil, &DataError{File: cfg.Data, Msg: "no records to release (every count is zero)"}
	}
	var warnings []string
	for _, r := range stats.Repairs {
		if r.Clamped > 0 {
			warnings = append(warnings, fmt.Sprintf("%d values of %q clamped into the declared bounds (--clamp)", r.Clamped, r.Attribute))
		}
		if r.MappedToOther > 0 {
			warnings = append(warnings, fmt.Sprintf("%d values of %q mapped to the declared other value (--unknown-to-other)", r.MappedToOther, r.Attribute))
		}
	}
	releaseCounts, holdoutCounts := counts, (*universe.Counts)(nil)
	if cfg.Holdout > 0 {
		releaseCounts, holdoutCounts, err = splitHoldout(counts, cfg.Holdout, rnd)
		if err != nil {
			return nil, err
		}
		if releaseCounts.Total() == 0 {
			return nil, &DataError{File: cfg.Data, Msg: fmt.Sprintf("no records left to release after holding out %.0f%%", 100*cfg.Holdout)}
		}
		log.Info("held out records", "holdout", holdoutCounts.Total(), "release", releaseCounts.Total())
	}
	n := releaseCounts.Total()
	log.Info("data read", "records", counts.Total(), "distinct_cells", stats.Distinct)

	op, err := wl.Compile(&query.CompileSettings{MemoryCap: cfg.MemoryCap})
	if err != nil {
		return nil, err
	}
	defer op.Close()
	truth := wl.AnswerCounts(releaseCounts, make([]float64, wl.M()))

	// Solve. The plan with n known must cost what was checked.
	shape.N = int(n)
	plan, err := solver.Plan(&shape)
	if err != nil {
		return nil, err
	}
	if !sameCost(plan0, plan) {
		return nil, fmt.Errorf("release: internal error: the plan's cost changed once n was known (ρ %v vs %v)", plan0.Total(), plan.Total())
	}
	log.Info("solving", "solver", solverName, "iterations", plan.Iterations)
	res, err := solver.Solve(ctx, &solvers.Problem{
		Shape: shape, Op: op, Counts: releaseCounts, Answers: truth,
		Rand: rnd, Ledger: ledger, Progress: hooks.Progress,
	})
	if err != nil {
		return nil, err
	}
	warnings = append(warnings, res.Plan.Warnings...)

	// Sample and decode.
	rows := cfg.Rows
	if rows == 0 {
		rows = n
		if cfg.Neighbours == solvers.AddRemove {
			rows = max(int64(math.Round(res.Plan.Params["n_estimate"])), 1)
		}
	}
	if rows > math.MaxUint32 {
		return nil, configErrorf("--rows %d: at most %d rows per release", rows, uint64(math.MaxUint32))
	}
	cells, err := Sample(nil, res.D, rows, cfg.Sampling, rnd)
	if err != nil {
		return nil, err
	}
	if cfg.Sampling == Balanced {
		var bs BalanceStats
		if cells, bs, err = Balance(cells, res.D, rows, op, MarginalTouch(wl), balanceRounds); err != nil {
			return nil, err
		}
		log.Info("balanced the rows", "rounds", bs.Rounds, "moves", bs.Moves, "rms_before", bs.Before, "rms_after", bs.After)
	}
	rowCells := Rows(nil, cells, rnd)
	dec, err := NewDecoder(dom, &cfg.Values, rnd)
	if err != nil {
		return nil, err
	}

	// Reports.
	synthAns := make([]float64, wl.M())
	op.Answer(Histogram(cells, make([]float64, op.K())), synthAns)
	distAns := make([]float64, wl.M())
	op.Answer(res.D, distAns)
	title := cfg.Title
	if title == "" {
		name := cfg.DataName
		if name == "" {
			name = filepath.Base(cfg.Data)
		}
		title = name + ", " + wlDesc
	}
	solverLabel := fmt.Sprintf("%s (%s)", solverName, setting)
	var (
		reportJSON []byte
		reportHTML strings.Builder
		metrics    *eval.Metrics
	)
	if cfg.PublicReport {
		pr, err := eval.Public(&eval.PublicInput{
			Workload: wl, Bounds: publicBounds(res.Bounds), Epsilon: cfg.Epsilon, Delta: cfg.Delta,
			Rows: rows, Title: title, Solver: solverLabel,
			Note: "A-priori bounds from the noise scales only: no statistic of the data appears here.",
		})
		if err != nil {
			return nil, err
		}
		if reportJSON, err = pr.JSON(); err != nil {
			return nil, err
		}
		if err := pr.WriteHTML(&reportHTML); err != nil {
			return nil, err
		}
	} else {
		in := &eval.Input{
			Workload: wl, True: truth, Synthetic: synthAns, Distribution: distAns,
			DataRows: n, SyntheticRows: rows, Title: title, Solver: solverLabel,
			RunTime: time.Since(start),
		}
		if holdoutCounts != nil {
			in.Holdout = wl.AnswerCounts(holdoutCounts, make([]float64, wl.M()))
			in.HoldoutRows = holdoutCounts.Total()
		}
		for _, st := range res.Trace {
			obj := st.MaxError
			if math.IsNaN(obj) {
				obj = st.Objective
			}
			if !math.IsNaN(obj) && !math.IsInf(obj, 0) {
				in.Trace = append(in.Trace, eval.TracePoint{Iteration: st.Iter, Objective: obj, Elapsed: st.Elapsed})
			}
		}
		rep, err := eval.Evaluate(in)
		if err != nil {
			return nil, err
		}
		m := rep.Errors.Synthetic
		metrics = &m
		if reportJSON, err = rep.JSON(); err != nil {
			return nil, err
		}
		if err := rep.WriteHTML(&reportHTML); err != nil {
			return nil, err
		}
	}

	// The manifest.
	spent := ledger.Spent()
	man := &Manifest{
		Schema:  ManifestSchema,
		Tool:    ToolInfo{Name: "synth", Version: cfg.Version, Commit: cfg.Commit},
		Started: Timestamp(start),
		Solver:  SolverInfo{Name: solverName, Setting: setting.String(), Iterations: res.Plan.Iterations},
		Privacy: PrivacyInfo{
			Neighbouring: cfg.Neighbours.String(),
			Accounting:   accounting(ledger),
			Budget:       Budget{Epsilon: cfg.Epsilon, Delta: cfg.Delta},
			Total:        Total{Epsilon: spent.Eps, Delta: spent.Delta},
		},
		Output: OutputInfo{
			Rows: rows, Sampling: cfg.Sampling.String(),
			IntegerValues: cfg.Values.Integer.String(), NumericValues: cfg.Values.Numeric.String(),
			Files: []string{SyntheticFile, ReportJSONFile, ReportHTMLFile, ManifestFile},
		},
		Warnings: warnings,
	}
	if spent.Rho > 0 {
		r := spent.Rho
		man.Privacy.Total.Rho = &r
	}
	for _, c := range ledger.Charges() {
		mc := Charge{Label: c.Label}
		switch c.Kind {
		case privacy.ZCDP:
			r := c.Rho
			mc.Rho = &r
		case privacy.Pure:
			r, e := c.Rho, c.Eps
			mc.Rho, mc.Epsilon = &r, &e
		case privacy.Approx:
			e, d := c.Eps, c.Delta
			mc.Epsilon, mc.Delta = &e, &d
		}
		man.Privacy.Charges = append(man.Privacy.Charges, mc)
	}
	if rnd.Secure() {
		man.Randomness = SecureRandomness()
	} else {
		man.Randomness = SeededRandomness()
	}
	for _, in := range []struct{ role, path, name string }{{"domain", cfg.Domain, cfg.DomainName}, {"workload", cfg.Workload, ""}, {"config", cfg.ConfigFile, ""}} {
		if in.path == "" {
			continue
		}
		h, err := HashFile(in.path)
		if err != nil {
			return nil, err
		}
		if in.name == "" {
			in.name = in.path
		}
		man.Inputs = append(man.Inputs, InputFile{Role: in.role, Path: in.name, SHA256: h})
	}
	man.Finished = Timestamp(time.Now())
	manJSON, err := man.JSON()
	if err != nil {
		return nil, err
	}

	// Write, manifest last.
	log.Info("writing", "dir", od.Dir(), "rows", rows)
	if err := od.Write(ctx, SyntheticFile, 0o644, func(w io.Writer) error {
		_, err := WriteParquet(ctx, w, rowCells, dec, &ParquetSettings{Metadata: [][2]string{{ManifestKey, string(manJSON)}}})
		return err
	}); err != nil {
		return nil, err
	}
	reportMode := os.FileMode(0o600)
	if cfg.PublicReport {
		reportMode = 0o644
	}
	if err := od.Write(ctx, ReportJSONFile, reportMode, writeBytes(reportJSON)); err != nil {
		return nil, err
	}
	if err := od.Write(ctx, ReportHTMLFile, reportMode, writeBytes([]byte(reportHTML.String()))); err != nil {
		return nil, err
	}
	if err := od.Write(ctx, ManifestFile, 0o644, writeBytes(manJSON)); err != nil {
		return nil, err
	}
	if err := od.Commit(ctx); err != nil {
		return nil, err
	}
	out := &Outcome{
		Dir: od.Dir(), Files: man.Output.Files, Rows: rows, Records: n,
		Solver: solverName, Setting: setting.String(), Epsilon: cfg.Epsilon, Delta: cfg.Delta,
		Spent: spent.Eps, Rho: spent.Rho, Randomness: man.Randomness.Source, Errors: metrics,
		Warnings: warnings, Seconds: time.Since(start).Seconds(),
	}
	if holdoutCounts != nil {
		out.Holdout = holdoutCounts.Total()
	}
	return out, nil
}

// pureRefusal explains why a solver that cannot plan under a pure budget
// (δ = 0; a zCDP solver has no ρ to spend then) is refused: it plans the
// same shape at a positive δ and lets the ledger judge those charges, so
// the refusal is the ledger's (privacy.ErrBudgetExceeded, exit 77), made
// before any record is read. It returns nil if the ledger would accept
// them, leaving the solver's own error to stand.
func pureRefusal(s solvers.Solver, shape *solvers.Shape, ledger *privacy.Ledger) error {
	probe := *shape
	probe.Budget.Delta = 1e-9
	p, err := s.Plan(&probe)
	if err != nil {
		return nil
	}
	err = ledger.Check(p.Charges...)
	var be *privacy.BudgetError
	if !errors.As(err, &be) {
		return nil
	}
	// One label for the whole plan instead of one per measurement.
	be.Labels = []string{fmt.Sprintf("%s (%d charges)", s.Name(), len(p.Charges))}
	return be
}

func writeBytes(b []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}

// sameCost reports whether two plans cost the same (ρ within rounding, and
// the same approximate (ε, δ)).
func sameCost(a, b *solvers.Plan) bool {
	ra, rb := a.Total(), b.Total()
	ea, da := a.ApproxTotal()
	eb, db := b.ApproxTotal()
	return math.Abs(ra-rb) <= 1e-9*math.Max(ra, rb) && ea == eb && da == db
}

func accounting(l *privacy.Ledger) string {
	for _, c := range l.Charges() {
		if c.Kind == privacy.Approx {
			return "advanced composition (paper), basic composition across mechanisms"
		}
	}
	return "zCDP, converted to (ε, δ) once"
}

// check validates the settings that need no file.
func (cfg *Config) check() error {
	switch {
	case cfg.Data == "":
		return configErrorf("no data file (--data)")
	case cfg.Domain == "":
		return configErrorf("no domain file (--domain)")
	case cfg.Out == "":
		return configErrorf("no output folder (--out)")
	case cfg.workloadSpec().Check() != nil:
		return cfg.workloadSpec().Check()
	case cfg.Rows < 0:
		return configErrorf("--rows must be positive, got %d", cfg.Rows)
	case !(cfg.Holdout >= 0 && cfg.Holdout < 1):
		return configErrorf("--holdout must be in [0, 1), got %v", cfg.Holdout)
	}
	return nil
}

func (cfg *Config) workloadSpec() WorkloadSpec {
	return WorkloadSpec{File: cfg.Workload, Marginals: cfg.Marginals, Sample: cfg.Sample, Seed: cfg.WorkloadSeed}
}

// loadWorkload loads the release's workload; an error of the shorthand is a
// settings error.
func loadWorkload(spec WorkloadSpec, dom *universe.Domain) (*query.Workload, string, error) {
	wl, desc, err := spec.Load(dom)
	if err != nil && spec.File == "" {
		return nil, "", &ConfigError{Msg: "--marginals: " + err.Error()}
	}
	return wl, desc, err
}

// WorkloadSpec names a workload the way the commands do: a workload file,
// or the shorthand of all (or Sample random, drawn with Seed) Marginals-way
// marginals.
type WorkloadSpec struct {
	File              string
	Marginals, Sample int
	Seed              uint64
}

// Check reports settings that name no workload, or two.
func (s WorkloadSpec) Check() error {
	switch {
	case s.File == "" && s.Marginals <= 0:
		return configErrorf("no workload: give --workload FILE or --marginals K")
	case s.File != "" && s.Marginals > 0:
		return configErrorf("give either --workload or --marginals, not both")
	case s.Sample > 0 && s.Marginals <= 0:
		return configErrorf("--sample needs --marginals")
	}
	return nil
}

// Load checks the spec, reads the workload file or builds the shorthand,
// and returns the workload with a one-line description.
func (s WorkloadSpec) Load(dom *universe.Domain) (*query.Workload, string, error) {
	if err := s.Check(); err != nil {
		return nil, "", err
	}
	if s.File != "" {
		wl, err := query.Load(s.File, dom)
		if err != nil {
			return nil, "", err
		}
		desc := filepath.Base(s.File)
		if fs := wl.Families(); len(fs) == 1 {
			desc = fs[0].Description
		}
		return wl, desc, nil
	}
	var (
		wl  *query.Workload
		err error
	)
	if s.Sample > 0 {
		wl, err = query.SampleKWay(dom, s.Marginals, s.Sample, s.Seed)
	} else {
		wl, err = query.KWay(dom, s.Marginals, nil)
	}
	if err != nil {
		return nil, "", err
	}
	return wl, wl.Families()[0].Description, nil
}

// splitHoldout moves each record to the holdout with probability frac,
// independently of its value (binomial thinning of each cell's count).
// The split uses only the run's randomness, never the data, so the release
// on the remaining records keeps its guarantee for the whole table: one
// changed record is one changed record in one of the parts.
func splitHoldout(c *universe.Counts, frac float64, r *privacy.Rand) (rel, hold *universe.Counts, err error) {
	dom := c.Domain()
	rel, hold = universe.NewCounts(dom), universe.NewCounts(dom)
	codes := make([]int, dom.Len())
	for i := range c.Distinct() {
		for j, v := range c.Codes(i) {
			codes[j] = int(v)
		}
		total := c.Count(i)
		var h int64
		for range total {
			if r.Float64() < frac {
				h++
			}
		}
		if h > 0 {
			if err := hold.Add(codes, h); err != nil {
				return nil, nil, err
			}
		}
		if total-h > 0 {
			if err := rel.Add(codes, total-h); err != nil {
				return nil, nil, err
			}
		}
	}
	return rel, hold, nil
}

// publicBounds converts the solver's a-priori bounds for the public report.
func publicBounds(bs []solvers.Bound) []eval.Bound {
	out := make([]eval.Bound, 0, len(bs))
	for _, b := range bs {
		scope := b.Scope
		if scope != "workload" && scope != "family" && scope != "marginal" {
			scope = "workload"
		}
		out = append(out, eval.Bound{Scope: scope, Name: b.Name, Queries: b.Queries, Error: b.Value, Confidence: b.Confidence, Method: b.Method})
	}
	return out
}

// MarshalOutcome renders an outcome as one JSON line (for --json).
func MarshalOutcome(o *Outcome) ([]byte, error) { return json.Marshal(o) }

// balanceRounds caps Balance's rounds in a release (one Answer and one
// Adjoint each): about 0.1 s on adult-reduced, halving the sampling error.
const balanceRounds = 20
