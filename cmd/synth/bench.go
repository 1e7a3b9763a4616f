package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/bench"
	"github.com/dpsynth/synth/solvers"
)

// benchOptions are the flags of "synth bench".
type benchOptions struct {
	Protocols  []string
	Solvers    []string
	Settings   []string
	Eps        []float64
	Seeds      int
	Delta      float64
	Holdout    float64
	Neighbours string
	Model      string
	Accounting string
	Timeout    time.Duration
	Out        string
	DryRun     bool
	Resume     bool
	Force      bool
	Quiet      bool
}

func (o *benchOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Protocols, "protocols", bench.DefaultProtocols, "protocols to run (suite: the accuracy suite; suite-2way: its tables on their 2-way marginals; NAME@ROWS or NAME@ROWS:SEED: a shipped protocol on a random sample of its rows, a held-out table without references): "+strings.Join(bench.ProtocolNames(), ", "))
	fs.StringSliceVar(&o.Solvers, "solvers", nil, "solvers to run (default: every registered solver: "+strings.Join(solvers.Names(), ", ")+")")
	fs.StringSliceVar(&o.Settings, "settings", []string{"tuned"}, "solver settings to run: tuned, paper")
	fs.Float64SliceVar(&o.Eps, "eps", nil, "ε grid, replacing each protocol's (e.g. 0.1,0.5,1)")
	fs.IntVar(&o.Seeds, "seeds", 0, "seeds per point, replacing each protocol's (runs use --seed 1..N)")
	fs.Float64Var(&o.Delta, "delta", 0, "δ, replacing each protocol's (1e-9)")
	fs.Float64Var(&o.Holdout, "holdout", 0, "hold out this fraction of records in each release to estimate the population error")
	fs.StringVar(&o.Neighbours, "neighbours", "add-remove", "neighbouring relation of every release: add-remove (the default, AIM's and MST's) or replace-one")
	fs.StringVar(&o.Accounting, "accounting", "auto", "accounting of every release: auto, exact or zcdp, as synth release (the results' accounting column records it; use a new --out per accounting)")
	fs.StringVar(&o.Model, "model", "auto", "model of every release: auto, explicit or factored (the results' model column says which ran; use a new --out per model)")
	fs.DurationVar(&o.Timeout, "timeout", bench.DefaultTimeout, "time limit of each run")
	fs.StringVar(&o.Out, "out", "bench-out", "output folder: results.csv, summary.md and the SVG plots")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print the grid and exit")
	fs.BoolVar(&o.Resume, "resume", false, "keep the successful runs of an existing results.csv and run the rest")
	fs.BoolVar(&o.Force, "force", false, "replace an existing results.csv")
	fs.BoolVarP(&o.Quiet, "quiet", "q", false, "no line per run on stderr")
}

func init() {
	register(&command{
		name:    "bench",
		summary: "run the accuracy and speed benchmarks",
		usage: `Runs a grid of protocols (dataset and workload) × solvers × settings × ε ×
seeds, one whole release per run in a child process, one at a time, and
writes to --out: results.csv (one row per run), summary.md (tables of max
error, mean error, mean per-marginal L1 and time per solver and ε, next to
the reference methods on adult-reduced and adult) and SVG plots of them
against ε. Runs are seeded: they are reproducible and NOT private (fine for
benchmarking public data).

Protocols: adult-reduced (all 35 3-way marginals), titanic (all 9
attributes, all 3-way marginals, factored model), adult-gem (64 random 3-way
marginals of 9 attributes), adult (the full 14-attribute ADULT, all 364
3-way marginals, factored model, against AIM and MST), titanic-no-age (the
earlier titanic without Age, explicit), tiny (nltcs, 2-way, ε 0.5 and 1,
one seed: for CI). project, mwem, dpfw and smd have a factored form, dpam
has none: leave it out of titanic and adult.

The accuracy suite (--protocols suite) is adult, titanic, nltcs,
adult-reduced, twenty tables from R packages with domains written from their
documentation (cps1988, fertility, healthins, slid, smokeban, gssvocab,
arrests, doctorvisits, hmda, wvs, collegedistance, cpssw8, beps, mplsstops,
resumenames, star, affairs, ces11, psid1982, gss7402; all 3-way marginals) and two
generated wide tables (wide16-3way, wide32-2way).
Run it on its grid with --eps 0.1,0.5,1 --seeds 3; docs/BENCHMARKS.md
compares it with AIM and MST. --protocols suite-2way runs the suite's real
tables but full ADULT on all their 2-way marginals instead (cps1988-2way and
so on, against AIM and MST on that workload): the suite's rules checked on
a second workload.

Examples:
  synth bench                                  # the full protocols, tuned solvers
  synth bench --protocols tiny --solvers project --out /tmp/bench-ci
  synth bench --protocols adult-reduced --settings tuned,paper --resume
  synth bench --protocols adult --solvers project --out bench-adult
  synth bench --protocols suite --solvers project --eps 0.1,0.5,1 --seeds 3 --out bench-suite
  synth bench --protocols suite-2way --solvers project --seeds 3 --out bench-suite-2way
  synth bench --dry-run`,
		setup: setupFor[benchOptions](runBench),
	})
}

func (o *benchOptions) config(e *env) *bench.Config {
	cfg := &bench.Config{
		Protocols: o.Protocols, Solvers: o.Solvers, Settings: o.Settings, Epsilons: o.Eps,
		Seeds: o.Seeds, Delta: o.Delta, Holdout: o.Holdout, Neighbours: o.Neighbours, Model: o.Model, Accounting: o.Accounting, Timeout: o.Timeout,
		Out: o.Out, Resume: o.Resume, Force: o.Force,
		Command: "synth " + strings.Join(os.Args[1:], " "),
	}
	if !o.Quiet {
		cfg.Log = e.stderr
	}
	return cfg
}

func runBench(ctx context.Context, e *env, o *benchOptions) error {
	cfg := o.config(e)
	if o.DryRun {
		return benchErr(dryRun(e.stdout, cfg))
	}
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		return benchErr(err)
	}
	fmt.Fprintf(e.stdout, "%d runs (%d failed, %d already in %s) in %s:\n", rep.Ran, rep.Failed, rep.Skipped, bench.ResultsFile, cfg.Out)
	for _, f := range rep.Files {
		fmt.Fprintf(e.stdout, "  %s\n", filepath.Join(cfg.Out, f))
	}
	if rep.Failed > 0 {
		return withCode(ExitInternal, fmt.Errorf("%d of %d runs failed (see the status column of %s)", rep.Failed, rep.Ran, filepath.Join(cfg.Out, bench.ResultsFile)))
	}
	return nil
}

// dryRun prints the grid, marking the points --resume would skip.
func dryRun(w io.Writer, cfg *bench.Config) error {
	pts, err := bench.Grid(cfg)
	if err != nil {
		return err
	}
	done := map[string]bool{}
	if cfg.Resume {
		f, err := os.Open(filepath.Join(cfg.Out, bench.ResultsFile))
		if err == nil {
			defer f.Close()
			rs, err := bench.ReadResults(f, f.Name())
			if err != nil {
				return err
			}
			bench.Relabel(rs) // as Run does: rows of a protocol's earlier definition are not its points
			for _, r := range rs {
				if r.OK() {
					done[r.Key()] = true
				}
			}
		}
	}
	return bench.WriteGrid(w, pts, done)
}

// benchErr maps the harness's settings errors to usage errors.
func benchErr(err error) error {
	var ce *bench.ConfigError
	if errors.As(err, &ce) {
		return usagef("%s", ce.Msg)
	}
	var re *bench.ResultsError
	if errors.As(err, &re) {
		return withCode(ExitData, err)
	}
	return err
}
