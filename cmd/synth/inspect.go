package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/sqlsrc"
	"github.com/dpsynth/synth/universe"
)

// inspectOptions are the flags of "synth inspect".
type inspectOptions struct {
	Domain string
	dataOptions
	workloadOptions
	Solver       string
	Model        string
	MemoryCap    uint64
	MaxModelSize uint64
	Source       string
	Table        string
	Query        string
	PrivacyUnit  string
	MaxRows      int
	JSON         bool
}

func (o *inspectOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Domain, "domain", "", "domain file (JSON), the public description of the table")
	o.dataOptions.AddFlags(fs)
	o.workloadOptions.AddFlags(fs)
	fs.StringVar(&o.Source, "source", "", "validate and count the data in a database instead of --data: postgres://… or clickhouse://… with --table or --query")
	fs.StringVar(&o.Table, "table", "", "the table to check (--source)")
	fs.StringVar(&o.Query, "query", "", "a SELECT whose rows are the records (--source)")
	fs.StringVar(&o.PrivacyUnit, "privacy-unit", "", "with --data: the column that identifies a person; prints how many rows the units have and what each --max-rows-per-unit K keeps (internal, not DP)")
	fs.IntVar(&o.MaxRows, "max-rows-per-unit", 0, "with --privacy-unit: count the data as a release bounded to K rows per unit would")
	fs.StringVar(&o.Solver, "solver", "project", "with a workload: the solver whose release is estimated: "+strings.Join(solvers.Names(), ", "))
	fs.StringVar(&o.Model, "model", "auto", "with a workload: auto, explicit or factored (as synth release --model)")
	o.MemoryCap = universe.DefaultMemoryCap
	fs.Var(sizeValue{&o.MemoryCap}, "memory-cap", "with a workload: the memory cap of the estimated release (as synth release --memory-cap)")
	o.MaxModelSize = solvers.DefaultMaxModelBytes
	fs.Var(sizeValue{&o.MaxModelSize}, "max-model-size", "with a workload: the factored model's cap (as synth release --max-model-size)")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object on stdout instead of the text (the data part is marked internal, not DP)")
}

func init() {
	register(&command{
		name:    "inspect",
		summary: "describe a domain and validate data against it",
		usage: `Prints the attribute table, the universe size (exact and log10) and the memory of
one explicit vector over it. With --data, reads the whole file, checks every
value against the domain and prints n, the distinct cells seen and the
validation result; bad values are listed (the first 20, with file, row
(1-based, header not counted) and column), counted, and the repairs that
would apply are suggested. --data takes a file, a folder or quoted glob of
part files (CSV or Parquet; gzip and zstd CSV too), or - for CSV on stdin.
--columns and --exclude-columns select attributes: the universe printed is
the projected one.

With --workload (or --marginals K), reports the workload's shape: the number
of queries m, its families, each marginal set with its cells, and the memory
of its operator over the universe; then the estimate synth release makes
before it reads any data: the model it would choose (--model auto) and why,
and its estimated peak memory for --solver under --memory-cap (a release over
the cap is refused with exit 78; inspect only reports it).

Examples:
  synth inspect --domain adult-reduced-domain.json
  synth inspect --domain adult-reduced-domain.json --marginals 3
  synth inspect --domain adult-domain.json --marginals 3 --memory-cap 1GiB
  synth inspect --domain adult-domain.json --workload workload.json
  synth inspect --domain adult-reduced-domain.json --data adult-reduced.csv
  synth inspect --domain people.json --data people.parquet --clamp --unknown-to-other
  synth inspect --domain people.json --data counts.csv --count-column n
  synth inspect --domain people.json --data 'export/part-*.csv.gz'
  zcat people.csv.gz | synth inspect --domain people.json --data -
  synth inspect --domain people.json --data wide.parquet --columns sex,age

Pre-aggregated data has the attribute columns plus a count column, e.g. the
output of: SELECT sex, age, COUNT(*) AS n FROM people GROUP BY sex, age

With --privacy-unit COLUMN (and --data), prints how many rows each unit (a
person, an account) has: the number of units, the minimum, median, 90th and
99th percentiles and maximum of rows per unit, and for K = 1, 2, 4, … the
share of rows a release with --max-rows-per-unit K would keep and the share
of units it would truncate, to help choose K. These are exact statistics of
the private data: for the operator, not for publication (internal, not DP).

  synth inspect --domain ratings-domain.json --data ratings.csv --privacy-unit user_id`,
		setup: setupFor[inspectOptions](runInspect),
	})
}

func runInspect(ctx context.Context, e *env, o *inspectOptions) error {
	if o.Domain == "" {
		return usagef("--domain is required")
	}
	opts, err := o.ingestOptions(e)
	if err != nil {
		return err
	}
	if o.Data == "" && (o.CountColumn != "" || o.Clamp || o.UnknownToOther || opts.Format != ingest.Auto || o.IgnoreExtraColumns || o.PrivacyUnit != "") {
		return usagef("--format, --count-column, --clamp, --unknown-to-other, --ignore-extra-columns and --privacy-unit need --data")
	}
	if o.MaxRows != 0 && o.PrivacyUnit == "" || o.MaxRows < 0 {
		return usagef("--max-rows-per-unit K (K >= 1) goes with --privacy-unit COLUMN")
	}
	d, err := universe.LoadDomain(o.Domain)
	if err != nil {
		return err
	}
	if d, err = opts.Domain(d); err != nil {
		return usagef("%v", err)
	}
	if o.PrivacyUnit != "" {
		if err := unitReadOptions(&opts, o.PrivacyUnit, o.MaxRows); err != nil {
			return err
		}
	}
	if o.JSON {
		return inspectJSON(ctx, e, o, d, opts)
	}
	fmt.Fprintf(e.stdout, "domain: %s\n\n", o.Domain)
	printUniverse(e.stdout, d)
	if o.Workload != "" || o.Marginals > 0 {
		wl, _, err := o.spec().Load(d)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout)
		if err := wl.Describe(e.stdout, o.MemoryCap); err != nil {
			return err
		}
		if err := o.printEstimate(ctx, e.stdout); err != nil {
			return err
		}
	}
	if o.Source != "" {
		return inspectSource(ctx, e, o, d)
	}
	if o.Data == "" {
		return nil
	}
	_, st, err := ingest.ReadFile(ctx, o.Data, d, opts)
	if err != nil {
		fmt.Fprintf(e.stdout, "\ndata: %s\nvalidation: failed (see the error below)\n", o.Data)
		return err
	}
	fmt.Fprintln(e.stdout)
	printData(e.stdout, d, st, o.CountColumn)
	if st.RowsPerUnit != nil {
		printUnits(e.stdout, o.PrivacyUnit, o.MaxRows, st)
	}
	return nil
}

// printUniverse prints the attribute table and the universe's size.
func printUniverse(w io.Writer, d *universe.Domain) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "attribute\tkind\tsize\tdomain\n")
	for _, a := range d.Attrs() {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", a.Name, a.Kind, a.Size(), a.Describe())
	}
	tw.Flush()
	fmt.Fprintf(w, "\nattributes: %d\nuniverse size: %s (10^%.2f)\none explicit vector: %s (a release holds several; --marginals K or --workload F gives its estimate)\n",
		d.Len(), universe.FormatCount(d.SizeBig()), d.Log10Size(), universe.FormatBytes(d.ExplicitBytes()))
}

// printEstimate prints the model and peak memory synth release would
// plan for the workload (release.PlanOnly: no data is read).
func (o *inspectOptions) printEstimate(ctx context.Context, w io.Writer) error {
	est, err := o.estimate(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nrelease estimate (solver %s, --model %s, --memory-cap %s; planned at ε = 1, δ = 1e-9):\n",
		est.Solver, est.Model, universe.FormatBytes(new(big.Int).SetUint64(o.MemoryCap)))
	if est.Refused != "" {
		fmt.Fprintf(w, "refused: %s\n(synth release would exit %d before reading the data)\n", est.Refused, ExitMemory)
		return nil
	}
	_, err = io.WriteString(w, est.Memory.Text)
	return err
}

// printData prints what a read found.
func printData(w io.Writer, d *universe.Domain, st *ingest.Stats, countColumn string) {
	fmt.Fprintf(w, "data: %s (%s)\n", st.File, st.Format)
	if len(st.Parts) > 0 {
		fmt.Fprintf(w, "part files: %d\n", len(st.Parts))
	}
	if countColumn != "" {
		fmt.Fprintf(w, "rows: %s (pre-aggregated, count column %q)\n", fmtInt(st.Rows), countColumn)
	} else {
		fmt.Fprintf(w, "rows: %s\n", fmtInt(st.Rows))
	}
	share := float64(st.Distinct) / math.Pow(10, d.Log10Size())
	fmt.Fprintf(w, "n: %s\ndistinct cells: %s (%.3g%% of the universe)\n", fmtInt(st.N), fmtInt(int64(st.Distinct)), 100*share)
	if st.Repaired() == 0 {
		fmt.Fprintf(w, "validation: ok, every value is inside the declared domain\n")
		return
	}
	fmt.Fprintf(w, "validation: ok, %s values repaired as asked (no row dropped):\n", fmtInt(st.Repaired()))
	for _, r := range st.Repairs {
		if r.Clamped > 0 {
			fmt.Fprintf(w, "  %s: clamped into bounds: %s\n", r.Attribute, fmtInt(r.Clamped))
		}
		if r.MappedToOther > 0 {
			fmt.Fprintf(w, "  %s: unknown categories mapped to %q: %s\n", r.Attribute, attrOther(d, r.Attribute), fmtInt(r.MappedToOther))
		}
	}
}

func attrOther(d *universe.Domain, name string) string {
	i, _ := d.Index(name)
	return d.Attr(i).Other
}

// spec names the workload the flags ask for.
func (o *workloadOptions) spec() release.WorkloadSpec {
	return release.WorkloadSpec{File: o.Workload, Marginals: o.Marginals, Sample: o.Sample, Seed: o.WorkloadSeed}
}

// inspectSource checks the data in a database: one query counts the rows
// and, per column, the values outside the domain (and the repairs of the
// policy), without moving a record out of the engine.
func inspectSource(ctx context.Context, e *env, o *inspectOptions, d *universe.Domain) error {
	src, err := o.openSource(ctx, d)
	if err != nil {
		return err
	}
	defer src.Close()
	fmt.Fprintf(e.stdout, "\nsource: %s (%s)\n", sqlsrc.RedactDSN(o.Source), src.Dialect())
	rep, err := src.Check(ctx)
	if rep != nil {
		fmt.Fprintf(e.stdout, "n: %s\n", fmtInt(rep.Rows))
		for _, c := range rep.Columns {
			switch {
			case c.Bad > 0:
				ex := "not printed (--show-values prints one)"
				if o.ShowValues || c.Example == sqlsrc.NullMarker {
					ex = strconv.Quote(c.Example)
				}
				fmt.Fprintf(e.stdout, "  %s: %s values outside the domain, e.g. %s\n", c.Column, fmtInt(c.Bad), ex)
			case c.Repaired > 0:
				fmt.Fprintf(e.stdout, "  %s: %s values repaired by the policy\n", c.Column, fmtInt(c.Repaired))
			}
		}
	}
	if err != nil {
		fmt.Fprintln(e.stdout, "validation: failed (see the error below)")
		return err
	}
	fmt.Fprintln(e.stdout, "validation: ok")
	return nil
}

// openSource opens --source for the checks of inspect.
func (o *inspectOptions) openSource(ctx context.Context, d *universe.Domain) (*sqlsrc.Source, error) {
	if o.Data != "" {
		return nil, usagef("give --data or --source, not both")
	}
	if (o.Table == "") == (o.Query == "") {
		return nil, usagef("--source needs exactly one of --table and --query")
	}
	return sqlsrc.Open(ctx, o.Source, d, &sqlsrc.Options{Table: o.Table, Query: o.Query,
		Policy: universe.Policy{Clamp: o.Clamp, UnknownToOther: o.UnknownToOther}, ShowValues: o.ShowValues})
}
