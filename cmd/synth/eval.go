package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/release"
)

// evalOptions are the flags of "synth eval".
type evalOptions struct {
	dataOptions
	workloadOptions
	outputOptions
	Domain          string
	Synthetic       string
	SyntheticFormat string
	SyntheticCount  string
	Out             string
	Force           bool
	MemoryCapMiB    uint64
	Title           string
}

func (o *evalOptions) AddFlags(fs *pflag.FlagSet) {
	o.dataOptions.AddFlags(fs)
	fs.StringVar(&o.Domain, "domain", "", "domain file (JSON) both tables fit")
	o.workloadOptions.AddFlags(fs)
	fs.StringVar(&o.Synthetic, "synthetic", "", "the synthetic table to score (CSV or Parquet; from synth or another tool)")
	fs.StringVar(&o.SyntheticFormat, "synthetic-format", "auto", "format of --synthetic: auto, csv or parquet")
	fs.StringVar(&o.SyntheticCount, "synthetic-count-column", "", "count column, if the synthetic table is pre-aggregated")
	fs.StringVar(&o.Out, "out", "", "folder for report.json and report.html (default: print the summary only)")
	fs.BoolVar(&o.Force, "force", false, "replace earlier reports in --out")
	fs.StringVar(&o.Title, "title", "", "title of the report")
	o.outputOptions.AddFlags(fs)
}

func init() {
	register(&command{
		name:    "eval",
		summary: "score a synthetic table against the data on a workload",
		usage: `Answers the workload on the data and on the synthetic table and reports the
errors: max, mean, RMSE, p95, per-marginal L1 and total variation. The report
is internal: it is computed on the private data and is not differentially
private.

Examples:
  synth eval --data adult.csv --domain adult-domain.json --marginals 3 \
      --synthetic release/synthetic.parquet
  synth eval --data adult.csv --domain d.json --workload w.json \
      --synthetic other-tool.csv --out eval/ --json`,
		setup: setupFor[evalOptions](runEval),
	})
}

func runEval(ctx context.Context, e *env, o *evalOptions) error {
	df, err := o.format()
	if err != nil {
		return err
	}
	sf, err := ingest.ParseFormat(o.SyntheticFormat)
	if err != nil {
		return usagef("--synthetic-format: %v", err)
	}
	if _, err := o.logger(e); err != nil {
		return err
	}
	out, err := release.Evaluate(ctx, &release.EvalConfig{
		Data: o.Data, DataFormat: df, CountColumn: o.CountColumn, Policy: o.policy(), Inputs: o.inputs(e),
		Synthetic: o.Synthetic, SyntheticFormat: sf, SyntheticCount: o.SyntheticCount,
		Domain: o.Domain, Workload: o.Workload, Marginals: o.Marginals, Sample: o.Sample, WorkloadSeed: o.WorkloadSeed,
		Out: o.Out, Force: o.Force, Title: o.Title,
	})
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSONLine(e.stdout, out)
	}
	m := out.Errors
	fmt.Fprintf(e.stdout, "%s: %d synthetic rows against %d records\n", out.Workload, out.Rows, out.Records)
	fmt.Fprintf(e.stdout, "workload error (internal, not DP): max %.4g, mean %.3g, RMSE %.3g, p95 %.3g\n", m.Max, m.Mean, m.RMSE, m.P95)
	if out.Dir != "" {
		fmt.Fprintf(e.stdout, "reports in %s: report.json, report.html\n", out.Dir)
	}
	return nil
}
