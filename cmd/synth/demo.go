package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/release"
)

// demoOptions are the flags of "synth demo".
type demoOptions struct {
	outputOptions
	Dataset string
	Out     string
	Epsilon float64
	Delta   float64
	Solver  string
	Seed    string
}

func (o *demoOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Dataset, "dataset", "adult-reduced", "embedded dataset to release (see datasets/README.md)")
	fs.StringVar(&o.Out, "out", "", "output folder (default: a fresh folder under the system's temporary directory)")
	fs.Float64Var(&o.Epsilon, "epsilon", 1, "privacy budget ε")
	fs.Float64Var(&o.Delta, "delta", 1e-9, "privacy budget δ")
	fs.StringVar(&o.Solver, "solver", "project", "solver")
	fs.StringVar(&o.Seed, "seed", "", "seed the randomness (the output is then NOT private against anyone who knows it)")
	o.outputOptions.AddFlags(fs)
}

func init() {
	register(&command{
		name:    "demo",
		summary: "release an embedded dataset end to end",
		usage: `Releases the embedded adult-reduced dataset (no download, no file needed):
all 3-way marginals, ε = 1, δ = 1e-9, replace-one neighbours, secure
randomness. Prints where the outputs are and the headline errors.

Examples:
  synth demo
  synth demo --dataset titanic --epsilon 0.5 --out demo-out/`,
		setup: setupFor[demoOptions](runDemo),
	})
}

func runDemo(ctx context.Context, e *env, o *demoOptions) error {
	ds, err := datasets.Lookup(o.Dataset)
	if err != nil {
		return usagef("--dataset: %v", err)
	}
	var seed *uint64
	if o.Seed != "" {
		s, err := strconv.ParseUint(o.Seed, 10, 64)
		if err != nil {
			return usagef("--seed must be a non-negative integer, got %q", o.Seed)
		}
		seed = &s
	}
	log, err := o.logger(e)
	if err != nil {
		return err
	}
	// The inputs go to a scratch folder of their own, removed afterwards.
	in, err := os.MkdirTemp("", "synth-demo-input-")
	if err != nil {
		return withCode(ExitCantOut, err)
	}
	defer os.RemoveAll(in)
	data, domain, err := ds.Extract(in)
	if err != nil {
		return withCode(ExitCantOut, err)
	}
	out := o.Out
	if out == "" {
		if out, err = os.MkdirTemp("", "synth-demo-"); err != nil {
			return withCode(ExitCantOut, err)
		}
	}
	cfg := &release.Config{
		Data: data, Domain: domain, Marginals: 3, Sampling: release.Balanced,
		Epsilon: o.Epsilon, Delta: o.Delta, Solver: o.Solver,
		Out: out, Title: fmt.Sprintf("synth demo: %s, all 3-way marginals", ds.Name),
		// The files are a scratch copy of the embedded ones: name those.
		DataName: "embedded:datasets/" + ds.Data, DomainName: "embedded:datasets/" + ds.Domain,
		Version: readBuildVersion().Version, Commit: readBuildVersion().manifestCommit(),
	}
	if seed != nil {
		cfg.Seed = seed
		o.warn(e, log, "--seed given: "+privacy.SeededWarning)
	}
	if !o.Quiet && !o.JSON {
		fmt.Fprintf(e.stdout, "synth demo: releasing the embedded %s dataset (datasets/%s), all 3-way marginals, ε = %g, δ = %g\n",
			ds.Name, ds.Data, o.Epsilon, o.Delta)
	}
	bar := newProgress(e, o.Quiet)
	res, err := release.Run(ctx, cfg, &release.Hooks{Log: log, Progress: bar.update})
	bar.done()
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSONLine(e.stdout, res)
	}
	printOutcome(e, res)
	for _, wn := range res.Warnings {
		o.warn(e, log, wn)
	}
	fmt.Fprintf(e.stdout, "open %s in a browser for the error report (internal: computed on the data, not DP)\n",
		filepath.Join(res.Dir, release.ReportHTMLFile))
	return nil
}
