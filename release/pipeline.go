package release

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"

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

	// Source, instead of Data, is a database to count in (postgres:// or
	// clickhouse:// DSN) with Table or Query: the engine computes the
	// marginal tables (the factored model) or the histogram (the explicit
	// one) and no record leaves it. MarginalCounts, instead, is a file of
	// marginal count tables (what synth sql's query returns); it serves the
	// project solver only.
	Source, Table, Query string
	MarginalCounts       string

	// Domain is the public domain file.
	Domain string
	// Workload is a workload file; when empty, Marginals > 0 asks for all
	// (or, with Sample > 0, Sample random) Marginals-way marginals, drawn
	// with WorkloadSeed.
	Workload     string
	Marginals    int
	Sample       int
	WorkloadSeed uint64

	// The privacy budget and its accounting. Neighbours' zero value is
	// add/remove of one privacy unit, the default.
	Epsilon, Delta float64
	Conversion     privacy.Conversion
	// Accounting is "exact", "zcdp", or "auto" ("" too, the default):
	// exact without a lifetime Ledger, zCDP with one (solvers.Accounting
	// says why).
	Accounting string
	Neighbours solvers.Neighbours
	// PrivacyUnit names the column that identifies a privacy unit (a
	// person, an account); "" makes every row its own unit. Each unit keeps
	// at most MaxRowsPerUnit rows, chosen at random (package contrib), before
	// any count, and the guarantee covers adding or removing one unit: every
	// sensitivity is MaxRowsPerUnit times a row's. The column is read and
	// never written: not in the rows, the manifest, the reports, the logs or
	// an error message. With MarginalCounts the tables must have been counted
	// with the same bound (synth sql --privacy-unit).
	PrivacyUnit    string
	MaxRowsPerUnit int
	// Ledger, when set, is the table's lifetime budget (a ledger file, or a
	// postgres:// DSN with LedgerName): the release reserves its charges
	// there before it reads data and is refused when they do not fit
	// (package ledger).
	Ledger, LedgerName string

	// Solver and Setting name the solver ("" is project, tuned).
	Solver, Setting string

	// Rows is the number of synthetic rows; 0 means n (public under
	// replace-one neighbours; the private estimate under add/remove).
	Rows int64
	// Sampling draws the rows from D; the CLI's default is Balanced (the
	// zero value is Systematic).
	Sampling SampleMethod
	// --- outputs: value rules, format and name of the synthetic file ---
	// Values: how buckets and bins are written (--bins).
	Values DecodeSettings
	// Output: --format parquet|csv and --synthetic-file NAME; the output
	// folder's file list and the manifest follow it (output.go).
	Output OutputSettings
	// --- end outputs ---

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

	// MemoryCap caps the release's estimated peak memory, in bytes (0: the
	// default of universe.DefaultMemoryCap); a release over it is refused
	// before the data is read.
	MemoryCap uint64
	// Model chooses the representation of the synthetic distribution:
	// ModelAuto (the default), ModelExplicit or ModelFactored.
	Model ModelChoice
	// MaxModelBytes caps a factored model's memory (0: the default of
	// solvers.DefaultMaxModelBytes).
	MaxModelBytes uint64

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
	// ProgressLog asks for progress lines with an estimate of the time
	// left on Log (at level Info, every 10 s) during long phases: for
	// batch logs, when stderr is not a terminal.
	ProgressLog bool
	// Internal receives messages for the operator only (stderr), never
	// written to a public file: statistics of the private data such as how
	// many values were repaired (nil: sent to Log as warnings).
	Internal func(msg string)
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
	Dir   string   `json:"dir"`
	Files []string `json:"files"`
	Rows  int64    `json:"rows"`
	// Records is the true number of records read. Under add/remove
	// neighbours it is private (RecordsPrivate): for the operator only.
	Records int64 `json:"records"`
	// RecordsKept, with a privacy unit, is how many of the records the
	// bound of MaxRowsPerUnit kept (Records counts every row read); private
	// like Records.
	RecordsKept    int64   `json:"records_kept,omitempty"`
	RecordsPrivate bool    `json:"records_private,omitempty"`
	Holdout        int64   `json:"holdout_records,omitempty"`
	Solver         string  `json:"solver"`
	Setting        string  `json:"setting"`
	Model          string  `json:"model"`
	Epsilon        float64 `json:"epsilon"`
	Delta          float64 `json:"delta"`
	// Spent is the ε the charges compose to (at the budget's δ).
	Spent float64 `json:"epsilon_spent"`
	// Relation is "add-remove" or "replace-one"; Unit describes the privacy
	// unit ("one row", or the column and K: UnitText).
	Relation   string  `json:"relation"`
	Unit       string  `json:"privacy_unit"`
	Rho        float64 `json:"rho"`
	Randomness string  `json:"randomness"`
	// Errors are the workload errors of the released rows against the data:
	// internal, not differentially private; absent with PublicReport.
	Errors *eval.Metrics `json:"internal_errors,omitempty"`
	// With a privacy unit, Errors are against every row read; KeptErrors
	// and KeptMarginalL1 are against the rows the bound kept: the noise
	// alone, without the bound's bias (internal, not DP).
	KeptErrors     *eval.Metrics `json:"internal_errors_kept,omitempty"`
	KeptMarginalL1 float64       `json:"internal_mean_marginal_l1_kept,omitempty"`
	Warnings       []string      `json:"warnings,omitempty"`
	Seconds        float64       `json:"seconds"`
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

// repairMessages describes the row-wise repairs of a read (internal: exact
// counts of the private data).
func repairMessages(rs []ingest.Repairs) []string {
	var out []string
	for _, r := range rs {
		if r.Clamped > 0 {
			out = append(out, fmt.Sprintf("%d values of %q clamped into the declared bounds (--clamp; internal, not DP, not written to the manifest)", r.Clamped, r.Attribute))
		}
		if r.MappedToOther > 0 {
			out = append(out, fmt.Sprintf("%d values of %q mapped to the declared other value (--unknown-to-other; internal, not DP, not written to the manifest)", r.MappedToOther, r.Attribute))
		}
	}
	return out
}

func writeBytes(b []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}

// sameCost reports whether two plans cost the same: ρ within the
// calibrations' rounding (each total lies within 2·10^-9 of the budget's ρ,
// from below; 10^-8 relative allows two calibrations), and the same
// approximate (ε, δ).
func sameCost(a, b *solvers.Plan) bool {
	ra, rb := a.Total(), b.Total()
	ea, da := a.ApproxTotal()
	eb, db := b.ApproxTotal()
	return math.Abs(ra-rb) <= 1e-8*math.Max(ra, rb) && ea == eb && da == db
}

func accounting(l *privacy.Ledger) string {
	if exactAccounting(l) {
		return "exact: the privacy-loss distribution of the discrete Gaussians, not zCDP"
	}
	for _, c := range l.Charges() {
		if c.Kind == privacy.Approx {
			return "advanced composition (paper), basic composition across mechanisms"
		}
	}
	return "zCDP, converted to (ε, δ) once"
}

// exactAccounting reports whether the ledger holds a charge made by exact
// accounting (solvers.AccountExact).
func exactAccounting(l *privacy.Ledger) bool {
	for _, c := range l.Charges() {
		if c.Exact {
			return true
		}
	}
	return false
}

// CheckAccounting validates an --accounting value: "auto" ("" too),
// "exact" or "zcdp" (Config.Accounting).
func CheckAccounting(s string) error {
	switch s {
	case "", "auto", "exact", "zcdp":
		return nil
	}
	return configErrorf("--accounting must be auto, exact or zcdp, got %q", s)
}

// accounting returns the solvers' accounting the settings ask for: Accounting
// "auto" (or "") is exact unless the release spends from a lifetime ledger,
// whose many releases compose far better in zCDP.
func (cfg *Config) accounting() (solvers.Accounting, error) {
	if err := CheckAccounting(cfg.Accounting); err != nil {
		return 0, err
	}
	switch cfg.Accounting {
	case "", "auto":
		if cfg.Ledger != "" {
			return solvers.AccountZCDP, nil
		}
		return solvers.AccountExact, nil
	}
	return solvers.ParseAccounting(cfg.Accounting)
}

// check validates the settings that need no file.
func (cfg *Config) check() error {
	switch {
	case cfg.Data == "" && cfg.Source == "" && cfg.MarginalCounts == "":
		return configErrorf("no data: give --data FILE, --source DSN (with --table or --query) or --marginal-counts FILE")
	case (cfg.Data != "") && (cfg.Source != "" || cfg.MarginalCounts != "") || cfg.Source != "" && cfg.MarginalCounts != "":
		return configErrorf("give one of --data, --source and --marginal-counts")
	case cfg.Source != "" && (cfg.Table == "") == (cfg.Query == ""):
		return configErrorf("--source needs exactly one of --table and --query")
	case cfg.Source == "" && (cfg.Table != "" || cfg.Query != ""):
		return configErrorf("--table and --query go with --source")
	case cfg.Holdout > 0 && cfg.Data == "":
		return configErrorf("--holdout needs the records (--data): a database or a count file serves only counts")
	case cfg.Domain == "":
		return configErrorf("no domain file (--domain)")
	case cfg.Out == "":
		return configErrorf("no output folder (--out)")
	case cfg.workloadSpec().Check() != nil:
		return cfg.workloadSpec().Check()
	case cfg.Output.Check() != nil:
		return cfg.Output.Check()
	case CheckAccounting(cfg.Accounting) != nil:
		return CheckAccounting(cfg.Accounting)
	case cfg.Rows < 0:
		return configErrorf("--rows must be positive, got %d", cfg.Rows)
	case !(cfg.Holdout >= 0 && cfg.Holdout < 1):
		return configErrorf("--holdout must be in [0, 1), got %v", cfg.Holdout)
	}
	return cfg.checkUnit()
}

func (cfg *Config) memoryCap() uint64 {
	if cfg.MemoryCap > 0 {
		return cfg.MemoryCap
	}
	return universe.DefaultMemoryCap
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
