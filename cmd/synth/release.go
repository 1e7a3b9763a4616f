package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/universe"
)

// releaseOptions are the flags of "synth release".
type releaseOptions struct {
	dataOptions
	workloadOptions
	outputOptions
	Domain         string
	Epsilon        float64
	Delta          float64
	Conversion     string
	Accounting     string
	Neighbours     string
	PrivacyUnit    string
	MaxRowsPerUnit int
	Ledger         string
	LedgerName     string
	Solver         string
	Setting        string
	Rows           int64
	Sampling       string
	IntegerValues  string
	NumericValues  string
	Bins           string
	OutFormat      string
	SynthFile      string
	Out            string
	Force          bool
	Seed           string
	Holdout        float64
	PublicReport   bool
	Source         string
	Table          string
	Query          string
	MarginalCounts string
	MemoryCap      uint64
	MaxModelSize   uint64
	Model          string
	DryRun         bool
	Title          string

	flags *pflag.FlagSet // to tell a missing --epsilon from --epsilon 0
}

func (o *releaseOptions) AddFlags(fs *pflag.FlagSet) {
	o.flags = fs
	o.dataOptions.addFlags(fs, false)
	fs.StringVar(&o.Domain, "domain", "", "domain file (JSON): the public description of the table")
	fs.StringVar(&o.Source, "source", "", "count in a database instead of reading --data: postgres://… or clickhouse://… (credentials from the DSN or PGPASSWORD / CLICKHOUSE_PASSWORD; never printed); with --table or --query")
	fs.StringVar(&o.Table, "table", "", "the table to count in (--source)")
	fs.StringVar(&o.Query, "query", "", "a SELECT whose rows are the records (--source)")
	fs.StringVar(&o.MarginalCounts, "marginal-counts", "", "read marginal count tables (CSV or Parquet: one column per attribute holding the code or empty when grouped out, and count; what synth sql's query returns) instead of --data; project solver")
	o.workloadOptions.AddFlags(fs)
	fs.Float64Var(&o.Epsilon, "epsilon", 0, "privacy budget ε (required)")
	fs.Float64Var(&o.Delta, "delta", 1e-9, "privacy budget δ")
	fs.StringVar(&o.Conversion, "conversion", "tight", "zCDP to (ε, δ) conversion: tight (Canonne–Kamath–Steinke) or standard (ρ + 2√(ρ ln 1/δ))")
	fs.StringVar(&o.Accounting, "accounting", "auto", "how the release states its privacy: exact (a plan of discrete Gaussians alone, the default solver's explicit plan of a marginal workload with one row per unit, is calibrated by its privacy-loss distribution: about 11% more ρ than the zCDP conversion allows, charged as one (ε, δ)), zcdp (every cost in zCDP, converted once), or auto: exact, but zcdp with --ledger, whose releases compose better in zCDP")
	fs.StringVar(&o.Neighbours, "neighbours", "add-remove", "neighbouring relation: add-remove (one privacy unit added or removed, n private: the default, as in OpenDP, Tumult and private-pgm) or replace-one (one row replaced, n public: the seeds' setting; no --privacy-unit)")
	fs.StringVar(&o.PrivacyUnit, "privacy-unit", "", "column identifying a privacy unit (a person, an account): the guarantee covers all of a unit's rows, bounded by --max-rows-per-unit; the column is read, never written (default: each row is its own unit)")
	fs.StringVar(&o.Ledger, "ledger", "", "the table's lifetime budget (a ledger file, or postgres://… with --ledger-name; see synth ledger init): the release reserves its charges there before it reads data, and is refused (exit 77) when they do not fit")
	fs.StringVar(&o.LedgerName, "ledger-name", "", "the ledger's name in a PostgreSQL --ledger (default \"default\")")
	fs.IntVar(&o.MaxRowsPerUnit, "max-rows-per-unit", 0, "K: the most rows one privacy unit contributes; a unit with more keeps K of them at random (every sensitivity is K times a row's; synth inspect --privacy-unit COLUMN helps choose K)")
	fs.StringVar(&o.Solver, "solver", "project", "solver: "+strings.Join(solvers.Names(), ", "))
	fs.StringVar(&o.Setting, "setting", "tuned", "solver setting: tuned or paper (the seeds' printed parameters)")
	fs.Int64Var(&o.Rows, "rows", 0, "synthetic rows to write (default n; more rows cost no privacy)")
	fs.StringVar(&o.Sampling, "sampling", "balanced", "how rows are drawn from the distribution: balanced (each cell within one of N·D, workload answers kept close to D's), systematic (each cell within one of N·D, unbiased) or iid; on the factored model balanced is stratified rounding along the junction tree, each attribute drawn against its deficits with the attributes drawn before it (clique cells within a row or two of N·D)")
	fs.StringVar(&o.Bins, "bins", "", "numeric bins, integer buckets and date or timestamp bins become: midpoint (bin midpoint, bucket middle integer, a date or timestamp bin's start; the default), label (the text \"[20, 30)\", \"2020-03\"), lower-upper (two columns ATTR_lower, ATTR_upper) or uniform (a draw in the bin)")
	fs.StringVar(&o.IntegerValues, "integer-values", "", "integer buckets only, as --bins (point = the bucket's middle integer)")
	fs.StringVar(&o.NumericValues, "numeric-values", "", "numeric bins only, as --bins (point = midpoint)")
	fs.StringVar(&o.OutFormat, "format", "parquet", "format of the synthetic data: parquet (the domain and manifest in its metadata) or csv (header, RFC 4180, nulls as empty fields, gzip if the name ends in .gz; domain.json next to it)")
	fs.StringVar(&o.SynthFile, "synthetic-file", "", "name of the synthetic data file in --out (default synthetic.parquet or synthetic.csv)")
	fs.StringVar(&o.Out, "out", "", "output folder (created if needed)")
	fs.BoolVar(&o.Force, "force", false, "replace an earlier release in --out")
	fs.StringVar(&o.Seed, "seed", "", "seed the randomness (tests and demos: the output is NOT private against anyone who knows it); the same binary on a CPU with the same features and core count gives the same output, another CPU may not (AVX2 vs portable kernels)")
	fs.Float64Var(&o.Holdout, "holdout", 0, "hold out this fraction of records to estimate the error against the population")
	fs.BoolVar(&o.PublicReport, "public-report", false, "write reports with a-priori error bounds only (safe to publish) instead of the internal ones")
	o.MemoryCap = universe.DefaultMemoryCap
	fs.Var(sizeValue{&o.MemoryCap}, "memory-cap", "cap on the release's estimated peak memory (e.g. 8GiB; a bare number is MiB); a release over it is refused before the data is read (exit 78)")
	o.MaxModelSize = solvers.DefaultMaxModelBytes
	fs.Var(sizeValue{&o.MaxModelSize}, "max-model-size", "cap on the factored model's memory (e.g. 512MiB): the adaptive rounds measure only sets that keep the junction tree under it")
	fs.StringVar(&o.Model, "model", "auto", "representation of the synthetic distribution: auto (explicit for small universes, else factored), explicit (a vector over the universe) or factored (a junction tree over the measured attribute sets; project solver)")
	fs.StringVar(&o.Title, "title", "", "title of the reports")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print the plan (model and why, budget split, memory, the release's time stage by stage, noise per measured table) without reading the data or writing anything; exit codes as a release (77 over budget, 78 over memory); --json prints it as JSON")
	o.outputOptions.AddFlags(fs)
}

func init() {
	register(&command{
		name:    "release",
		summary: "release a differentially private synthetic table",
		usage: `Reads the data once, after the budget check, and writes to --out:
synthetic.parquet (or, with --format csv, synthetic.csv and domain.json),
report.json and report.html (internal: computed on the private data, not
differentially private; --public-report for bounds only) and manifest.json
(the privacy spent). Every output is written atomically. --data-format
names the format of --data when its extension does not.

Examples:
  synth release --data adult.csv --domain adult-domain.json --marginals 3 \
      --epsilon 1 --out release/
  synth release --data t.parquet --domain d.json --workload w.json \
      --epsilon 0.5 --delta 1e-9 --solver mwem --rows 100000 --out out/
  synth release --data t.csv --domain d.json --marginals 2 --epsilon 1 \
      --format csv --synthetic-file people.csv.gz --bins label --out out/
  synth release --config release.json --epsilon 2   # flags override the file
  synth release --dry-run --data t.csv --domain d.json --marginals 3 \
      --epsilon 1 --out out/      # the plan only: reads no data, writes nothing

--dry-run prints the model and why, every privacy charge and the total,
the estimated peak memory, the release's estimated time (stage by stage;
n guessed from the data file's size) and the noise (σ, in
counts) of every measured table, with the exit code the release would have
(77 over budget, 78 over --memory-cap). A release warns (stderr and the
manifest) when ε > 10 and when δ >= 1/n (n public under replace-one). It
removes temporary files that a killed release left in --out, and a folder
it created when it fails.`,
		setup: setupFor[releaseOptions](runRelease),
	})
}

// config turns the options into the pipeline's settings.
func (o *releaseOptions) config() (*release.Config, error) {
	switch {
	case o.Epsilon == 0 && (o.flags == nil || !o.flags.Changed("epsilon")):
		return nil, usagef("--epsilon is required")
	case !(o.Epsilon > 0) || math.IsInf(o.Epsilon, 0):
		return nil, usagef("--epsilon must be > 0 (and finite), got %v", o.Epsilon)
	}
	format, err := o.format()
	if err != nil {
		return nil, err
	}
	cfg := &release.Config{
		Source: o.Source, Table: o.Table, Query: o.Query, MarginalCounts: o.MarginalCounts,
		Data: o.Data, DataFormat: format, CountColumn: o.CountColumn, Policy: o.policy(), Inputs: o.inputs(nil),
		Domain: o.Domain, Workload: o.Workload, Marginals: o.Marginals, Sample: o.Sample, WorkloadSeed: o.WorkloadSeed,
		Epsilon: o.Epsilon, Delta: o.Delta, Solver: o.Solver, Setting: o.Setting, Rows: o.Rows,
		Out: o.Out, Force: o.Force, Holdout: o.Holdout, PublicReport: o.PublicReport,
		MemoryCap: o.MemoryCap, MaxModelBytes: o.MaxModelSize, Title: o.Title, ConfigFile: o.Config,
		Version: readBuildVersion().Version, Commit: readBuildVersion().manifestCommit(),
	}
	if cfg.Model, err = release.ParseModelChoice(o.Model); err != nil {
		return nil, usagef("--model: %v", err)
	}
	switch o.Conversion {
	case "tight":
		cfg.Conversion = privacy.Tight
	case "standard":
		cfg.Conversion = privacy.Standard
	default:
		return nil, usagef("--conversion must be tight or standard, got %q", o.Conversion)
	}
	if cfg.Neighbours, err = solvers.ParseNeighbours(o.Neighbours); err != nil {
		return nil, usagef("--neighbours must be add-remove or replace-one, got %q", o.Neighbours)
	}
	cfg.PrivacyUnit, cfg.MaxRowsPerUnit = o.PrivacyUnit, o.MaxRowsPerUnit
	cfg.Ledger, cfg.LedgerName = o.Ledger, o.LedgerName
	if err := release.CheckAccounting(o.Accounting); err != nil {
		return nil, usagef("%v", err)
	}
	cfg.Accounting = o.Accounting
	if cfg.Sampling, err = release.ParseSampleMethod(o.Sampling); err != nil {
		return nil, usagef("--sampling: %v", err)
	}
	if o.Bins != "" && (o.IntegerValues != "" || o.NumericValues != "") {
		return nil, usagef("give --bins, or --integer-values and --numeric-values, not both")
	}
	for _, v := range []struct {
		flag, val string
		rule      *release.ValueRule
	}{{"bins", o.Bins, &cfg.Values.Integer}, {"bins", o.Bins, &cfg.Values.Numeric}, {"bins", o.Bins, &cfg.Values.Time},
		{"integer-values", o.IntegerValues, &cfg.Values.Integer}, {"numeric-values", o.NumericValues, &cfg.Values.Numeric}} {
		if v.val == "" {
			continue
		}
		if *v.rule, err = release.ParseValueRule(v.val); err != nil {
			return nil, usagef("--%s: %v", v.flag, err)
		}
	}
	if cfg.Output.Format, err = release.ParseOutputFormat(o.OutFormat); err != nil {
		return nil, usagef("--format: %v", err)
	}
	cfg.Output.SyntheticFile = o.SynthFile
	if o.Seed != "" {
		s, err := strconv.ParseUint(o.Seed, 10, 64)
		if err != nil {
			return nil, usagef("--seed must be a non-negative integer, got %q", o.Seed)
		}
		cfg.Seed = &s
	}
	return cfg, nil
}

func runRelease(ctx context.Context, e *env, o *releaseOptions) error {
	cfg, err := o.config()
	if err != nil {
		return err
	}
	cfg.Inputs.Stdin = e.stdin
	log, err := o.logger(e)
	if err != nil {
		return err
	}
	if o.DryRun {
		return runDryRun(ctx, e, o, cfg)
	}
	if cfg.Seed != nil {
		o.warn(e, log, "--seed given: "+privacy.SeededWarning)
	}
	// Warnings that public inputs already show come first, so that a
	// batch log has them before the run's progress lines.
	early := release.BudgetWarnings(cfg.Epsilon, cfg.Delta)
	for _, wn := range early {
		o.warn(e, log, wn)
	}
	bar := newProgress(e, o.Quiet)
	out, err := release.Run(ctx, cfg, &release.Hooks{Log: log, Progress: bar.update,
		// Batch logs (stderr not a terminal) get progress lines with an
		// estimate of the time left instead of the bar.
		ProgressLog: !e.tty && !o.Quiet,
		Internal:    func(msg string) { o.notice(e, log, msg) }})
	bar.done()
	if err != nil {
		return err
	}
	for _, wn := range out.Warnings {
		if !slices.Contains(early, wn) {
			o.warn(e, log, wn)
		}
	}
	if o.JSON {
		return printJSONLine(e.stdout, out)
	}
	if !o.Quiet {
		printOutcome(e, out)
	}
	return nil
}

// printOutcome prints the summary of a release on stdout (its warnings are
// the caller's to report).
func printOutcome(e *env, out *release.Outcome) {
	w := e.stdout
	switch {
	case out.RecordsKept > 0:
		fmt.Fprintf(w, "released %d synthetic rows from %d records, %d kept by the privacy unit's bound (the counts are internal, not DP) to %s\n", out.Rows, out.Records, out.RecordsKept, out.Dir)
	case out.RecordsPrivate:
		// Under add/remove neighbours n is private: the operator may see it,
		// labelled, but it is in no public file.
		fmt.Fprintf(w, "released %d synthetic rows from %d records (the record count is internal, not DP: n is private under add/remove) to %s\n", out.Rows, out.Records, out.Dir)
	default:
		fmt.Fprintf(w, "released %d synthetic rows from %d records to %s\n", out.Rows, out.Records, out.Dir)
	}
	for _, f := range out.Files {
		fmt.Fprintf(w, "  %s\n", f)
	}
	setting := out.Setting
	if out.Model != "" {
		setting += ", " + out.Model + " model"
	}
	fmt.Fprintf(w, "privacy: (ε = %.6g, δ = %g) spent of (ε = %g, δ = %g) by %s (%s); randomness %s\n",
		out.Spent, out.Delta, out.Epsilon, out.Delta, out.Solver, setting, out.Randomness)
	hint := ""
	if out.Unit == release.UnitText("", 1) && out.Relation == solvers.AddRemove.Flag() {
		hint = " (a person with several rows needs --privacy-unit COLUMN)"
	}
	fmt.Fprintf(w, "privacy unit: %s, %s neighbours%s\n", out.Unit, out.Relation, hint)
	if out.Errors != nil {
		fmt.Fprintf(w, "workload error of the rows (internal, not DP): max %.4g, mean %.3g, RMSE %.3g\n",
			out.Errors.Max, out.Errors.Mean, out.Errors.RMSE)
	}
	fmt.Fprintf(w, "done in %.2f s\n", out.Seconds)
}
