package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/continual"
	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/ledger"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/sqlsrc"
	"github.com/dpsynth/synth/universe"
)

// continualInitOptions are the flags of "synth continual init".
type continualInitOptions struct {
	State  string
	Domain string
	workloadOptions
	Measure      int
	Periods      int
	Epsilon      float64
	Delta        float64
	Mechanism    string
	Ledger       string
	LedgerName   string
	MaxModelSize uint64
	PrivacyUnit  string
}

func (o *continualInitOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.State, "state", "", "the state folder to create (required)")
	fs.StringVar(&o.Domain, "domain", "", "domain file (JSON), the public description of the table")
	o.workloadOptions.AddFlags(fs)
	fs.IntVar(&o.Measure, "measure", 0, "count all K-way marginals of the workload's attributes every period (default: the workload's largest set size, at most 2)")
	fs.IntVar(&o.Periods, "periods", 0, "the horizon T: how many periods the budget covers (required)")
	fs.Float64Var(&o.Epsilon, "epsilon", 0, "ε over the whole horizon (required)")
	fs.Float64Var(&o.Delta, "delta", 1e-9, "δ over the whole horizon")
	fs.StringVar(&o.Mechanism, "mechanism", continual.Reweighted, "continual counting mechanism: tree-reweighted (the default) or tree")
	fs.StringVar(&o.Ledger, "ledger", "", "charge the whole horizon to the table's lifetime budget (a ledger file or postgres://…)")
	fs.StringVar(&o.LedgerName, "ledger-name", "", "the ledger's name in a PostgreSQL database")
	o.MaxModelSize = 0
	fs.Var(sizeValue{&o.MaxModelSize}, "max-model-size", "cap on the fitted model's memory (default 128 MiB)")
	fs.StringVar(&o.PrivacyUnit, "privacy-unit", "", "not supported here: see synth continual init --help")
}

// continualAddOptions are the flags of "synth continual add".
type continualAddOptions struct {
	State       string
	Period      string
	Data        string
	Source      string
	Table       string
	Query       string
	Out         string
	Rows        int64
	OutFormat   string
	Bins        string
	Seed        string
	Force       bool
	Clamp       bool
	Unknown     bool
	PrivacyUnit string
}

func (o *continualAddOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.State, "state", "", "the state folder (required)")
	fs.StringVar(&o.Period, "period", "", "the period's label, e.g. 2026-11-27 (required; a label already added re-writes its release without reading data)")
	fs.StringVar(&o.Data, "data", "", "this period's rows only: CSV or Parquet, a folder or quoted glob of part files")
	fs.StringVar(&o.Source, "source", "", "or count this period's rows in a database: postgres://… or clickhouse://… with --table or --query")
	fs.StringVar(&o.Table, "table", "", "the table of this period's rows (--source)")
	fs.StringVar(&o.Query, "query", "", "a SELECT of this period's rows (--source)")
	fs.StringVar(&o.Out, "out", "", "the release's output folder: the cumulative table of the periods so far (without it the period is committed and nothing is written, e.g. to backfill a history)")
	fs.Int64Var(&o.Rows, "rows", 0, "synthetic rows (default: the noisy estimate of the cumulative table's records)")
	fs.StringVar(&o.OutFormat, "format", "parquet", "synthetic data format: parquet or csv")
	fs.StringVar(&o.Bins, "bins", "", "how bins are written: midpoint (default), label, lower-upper or uniform")
	fs.StringVar(&o.Seed, "seed", "", "seed the sampling of rows (for tests only: not private against anyone who knows it; the tree's noise is always from crypto/rand)")
	fs.BoolVar(&o.Force, "force", false, "replace a release in --out")
	fs.BoolVar(&o.Clamp, "clamp", false, "clamp integer and numeric values outside the declared bounds")
	fs.BoolVar(&o.Unknown, "unknown-to-other", false, "map unknown categories to the attribute's declared \"other\" value")
	fs.StringVar(&o.PrivacyUnit, "privacy-unit", "", "not supported here: see synth continual init --help")
}

// continualStatusOptions are the flags of "synth continual status".
type continualStatusOptions struct {
	State string
	JSON  bool
}

func (o *continualStatusOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.State, "state", "", "the state folder (required)")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object")
}

const continualUnitRefusal = "--privacy-unit: a continual release protects one record of one period; a person whose rows span periods enters the tree's nodes once per period, and its accounting (bounding rows per person over the whole horizon) is not implemented: release per-person tables, or use synth release --privacy-unit per release"

func init() {
	register(&command{
		name:    "continual init",
		summary: "plan a continual release of a growing table over T periods under one budget",
		usage: `Creates the state folder of a continual release: a table that grows every
period (day, week) is released every period for a horizon of T periods
under one budget (ε, δ), with the binary-tree mechanism of continual
counting, so that the error of period t's release grows like log T, not √T,
and each period reads only its own rows.

The plan is fixed here from public inputs only: the horizon, the marginal
tables counted every period (--measure K: all K-way marginals of the
workload's attributes; default the workload's set size, at most 2), the
mechanism and the noise of every node. The whole horizon is charged now
(to --ledger when given): later periods cost nothing more, and a period past
the horizon is refused (exit 77).

Examples:
  synth continual init --state people.continual --domain people.json --marginals 2 \
      --periods 365 --epsilon 1 --ledger people.ledger.json`,
		setup: setupFor[continualInitOptions](runContinualInit),
	})
	register(&command{
		name:    "continual add",
		summary: "add one period's rows to a continual release and release the table so far",
		usage: `Reads only this period's rows (--data, or --source with --table or --query),
counts the plan's tables, releases with discrete Gaussian noise every tree
node the period completes, commits them to the state, then writes the
release of the cumulative table so far into --out (rows, manifest naming the
period and the horizon), atomically. The noisy nodes are committed before the
release is written: adding a committed period again reads no data, draws no
noise and re-writes its release from the state. A period past the horizon
exits 77 without reading anything.

The state's folder private/ holds the exact partial sums of the tree nodes
that are not complete yet (at most one count vector per level): keep it as
private as the data. The rest of the state (the plan, the noisy nodes) is
public.

Examples:
  synth continual add --state people.continual --period 2026-11-27 \
      --data export/day=2026-11-27/ --out releases/2026-11-27`,
		setup: setupFor[continualAddOptions](runContinualAdd),
	})
	register(&command{
		name:    "continual status",
		summary: "show the periods of a continual release and what remains",
		usage: `Lists the periods added, the nodes each released, the noise of each period's
release, and what remains of the horizon.

Examples:
  synth continual status --state people.continual --json`,
		setup: setupFor[continualStatusOptions](runContinualStatus),
	})
}

func runContinualInit(ctx context.Context, e *env, o *continualInitOptions) error {
	switch {
	case o.PrivacyUnit != "":
		return usagef("%s", continualUnitRefusal)
	case o.State == "" || o.Domain == "":
		return usagef("--state and --domain are required")
	case o.Periods < 1:
		return usagef("--periods T (T >= 1) is required")
	case o.Epsilon <= 0:
		return usagef("--epsilon is required")
	case o.Workload == "" && o.Marginals == 0:
		return usagef("give --marginals K or --workload F")
	}
	domJSON, err := os.ReadFile(o.Domain)
	if err != nil {
		return err
	}
	dom, err := universe.LoadDomain(o.Domain)
	if err != nil {
		return err
	}
	wl, _, err := o.spec().Load(dom)
	if err != nil {
		return err
	}
	sets, err := measuredSets(dom, wl.Marginals(), o.Measure)
	if err != nil {
		return err
	}
	plan, err := continual.NewPlan(domJSON, dom, sets, o.Periods, o.Epsilon, o.Delta, o.Mechanism)
	if err != nil {
		return usagef("%v", err)
	}
	plan.MaxModelBytes = o.MaxModelSize
	if o.Ledger != "" {
		l, err := ledger.Open(ctx, ledger.Location{Path: o.Ledger, Name: o.LedgerName})
		if err != nil {
			return err
		}
		defer l.Close()
		out := o.State
		if abs, err := filepath.Abs(out); err == nil {
			out = abs
		}
		res, err := l.Reserve(ctx, ledger.Request{Charges: plan.Charges(), What: "continual release", Solver: "continual " + plan.Mechanism,
			Out: out, Neighbours: continual.Relation})
		if err != nil {
			return err
		}
		// The horizon's budget is spent from now on, whatever happens next.
		if err := res.Finish(ctx, ledger.Complete); err != nil {
			return err
		}
	}
	if err := continual.Create(o.State, plan); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "created %s: %d periods, %d tables counted per period, %s over %d levels, node σ = %.4g; (ε = %g, δ = %g) charged for the whole horizon\n",
		o.State, plan.Horizon, len(plan.Sets), plan.Mechanism, plan.Levels, plan.Sigma, plan.Epsilon, plan.Delta)
	return nil
}

// measuredSets are the sets counted every period: all k-way sets of the
// workload's attributes (k = the workload's largest set, at most 2, when
// measure is 0).
func measuredSets(dom *universe.Domain, ms []query.Marginal, k int) ([][]int, error) {
	used := map[int]bool{}
	largest := 0
	for _, m := range ms {
		largest = max(largest, len(m.Attrs))
		for _, a := range m.Attrs {
			used[a] = true
		}
	}
	if len(used) == 0 {
		return nil, usagef("the workload has no marginals: a continual release measures marginal tables")
	}
	if k == 0 {
		k = min(largest, 2)
	}
	var names []string
	for a := range dom.Len() {
		if used[a] {
			names = append(names, dom.Attr(a).Name)
		}
	}
	if k < 1 || k > len(names) {
		return nil, usagef("--measure %d: want 1..%d (the workload's attributes)", k, len(names))
	}
	// Every k-way set of those attributes, as a kway family builds it (the
	// plan's own cap on a table's cells, 2^24, is the one that applies).
	kw, err := query.Build(dom, &query.Spec{MaxCells: 1 << 24, Families: []query.FamilySpec{{Type: "kway", K: k, Attributes: names}}})
	if err != nil {
		return nil, err
	}
	var out [][]int
	for _, m := range kw.Marginals() {
		out = append(out, m.Attrs)
	}
	return out, nil
}

func runContinualAdd(ctx context.Context, e *env, o *continualAddOptions) error {
	switch {
	case o.PrivacyUnit != "":
		return usagef("%s", continualUnitRefusal)
	case o.State == "" || o.Period == "":
		return usagef("--state and --period are required")
	case o.Data != "" && o.Source != "":
		return usagef("give --data or --source, not both")
	}
	s, err := continual.Load(o.State)
	if err != nil {
		return err
	}
	if _, done := s.Find(o.Period); !done && o.Data == "" && o.Source == "" {
		return usagef("give this period's rows with --data or --source")
	}
	dom, _, err := s.Plan.Resolve()
	if err != nil {
		return err
	}
	pol := universe.Policy{Clamp: o.Clamp, UnknownToOther: o.Unknown}
	count := func(ctx context.Context, sets [][]int) ([][]int64, error) {
		if o.Source != "" {
			src, err := sqlsrc.Open(ctx, o.Source, dom, &sqlsrc.Options{Table: o.Table, Query: o.Query, Policy: pol})
			if err != nil {
				return nil, err
			}
			defer src.Close()
			return src.Marginals(ctx, sets)
		}
		c, _, err := ingest.ReadFile(ctx, o.Data, dom, ingest.Options{Policy: pol})
		if err != nil {
			return nil, err
		}
		return c.Marginals(ctx, sets)
	}
	// The tree's noise always comes from crypto/rand.
	noise, err := privacy.NewSecure()
	if err != nil {
		return err
	}
	p, again, err := continual.Add(ctx, o.State, o.Period, count, noise)
	if err != nil {
		return err
	}
	if s, err = continual.Load(o.State); err != nil {
		return err
	}
	if o.Out == "" {
		fmt.Fprintf(e.stdout, "period %q (%d of %d) committed (%d nodes released); no --out: no release written\n", p.Label, p.Index+1, s.Plan.Horizon, len(p.Nodes))
		return nil
	}
	set := continual.ReleaseSettings{Out: o.Out, Force: o.Force, Rows: o.Rows, Version: readBuildVersion().Version}
	if set.Output.Format, err = release.ParseOutputFormat(o.OutFormat); err != nil {
		return usagef("--format: %v", err)
	}
	if o.Bins != "" {
		r, err := release.ParseValueRule(o.Bins)
		if err != nil {
			return usagef("--bins: %v", err)
		}
		set.Values = release.DecodeSettings{Integer: r, Numeric: r, Time: r}
	}
	sampling, err := draftRand(o.Seed)
	if err != nil {
		return err
	}
	stop := heartbeat(e, fmt.Sprintf("writing the release of period %q (fitting the model to the prefix tables, then sampling)", p.Label))
	man, err := continual.WriteRelease(ctx, o.State, s, p, set, sampling)
	stop()
	if err != nil {
		return err
	}
	what := "added"
	if again {
		what = "already committed (no data read, no noise drawn); re-wrote its release"
	}
	fmt.Fprintf(e.stdout, "period %q (%d of %d) %s: released %d rows of the cumulative table to %s (prefix σ = %.4g per cell, %d nodes released this period)\n",
		p.Label, p.Index+1, s.Plan.Horizon, what, man.Rows, o.Out, man.PrefixSigma, len(p.Nodes))
	return nil
}

func runContinualStatus(ctx context.Context, e *env, o *continualStatusOptions) error {
	if o.State == "" {
		return usagef("--state is required")
	}
	s, err := continual.Load(o.State)
	if err != nil {
		return err
	}
	st := continual.StatusOf(s)
	if o.JSON {
		return printJSONLine(e.stdout, st)
	}
	fmt.Fprintf(e.stdout, "continual release %s: %d of %d periods done, %d remaining; %s, node σ = %.4g\n%s\n",
		o.State, st.Done, st.Horizon, st.Remaining, st.Mechanism, st.Sigma, st.Note)
	for _, p := range st.Periods {
		fmt.Fprintf(e.stdout, "  %4d  %-20s  committed %s  %d nodes  prefix σ = %.4g\n", p.Index+1, p.Label, p.Committed, p.Nodes, p.PrefixSigma)
	}
	return nil
}

// continualEvery spaces the progress lines of a long continual step.
var continualEvery = 10 * time.Second

// heartbeat prints a line on stderr every continualEvery while a long step
// runs, when stderr is not a terminal (a batch log), so that the log never
// goes quiet; it returns the function that stops it.
func heartbeat(e *env, what string) func() {
	if e.tty {
		return func() {}
	}
	t0 := time.Now()
	return release.Heartbeat(continualEvery, func() {
		fmt.Fprintf(e.stderr, "synth: working: %s, %s so far\n", what, time.Since(t0).Round(time.Second))
	})
}
