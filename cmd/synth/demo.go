package main

import (
	"bytes"
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

// demoOptions are the flags of "synth demo".
type demoOptions struct {
	Dataset string
	// Out is reserved for the folder of the release (synthetic.parquet,
	// report, manifest) once the pipeline writes one.
	Out string
}

func (o *demoOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Dataset, "dataset", "adult-reduced", "embedded dataset to run on (see datasets/README.md)")
	fs.StringVar(&o.Out, "out", "", "output folder of the release (reserved: the demo does not write a release yet)")
}

func init() {
	register(&command{
		name:    "demo",
		summary: "run the main job on an embedded dataset",
		usage: `Reads the embedded adult-reduced dataset (no download, no file needed),
validates it against its public domain and prints the universe summary and n.
The demo stops after ingest for now: the private release is not wired yet.

Examples:
  synth demo
  synth demo --dataset titanic`,
		setup: func(fs *pflag.FlagSet) func(context.Context, *env, []string) error {
			var o demoOptions
			o.AddFlags(fs)
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected arguments %q", args)
				}
				return runDemo(ctx, e, &o)
			}
		},
	})
}

func runDemo(ctx context.Context, e *env, o *demoOptions) error {
	if o.Out != "" {
		return usagef("--out is reserved for the release output, which the demo does not write yet")
	}
	ds, err := datasets.Lookup(o.Dataset)
	if err != nil {
		return usagef("--dataset: %v", err)
	}
	d, err := loadEmbeddedDomain(ds)
	if err != nil {
		return err
	}
	data, err := datasets.ReadFile(ds.Data)
	if err != nil {
		return withCode(ExitInternal, err)
	}
	fmt.Fprintf(e.stdout, "synth demo: the embedded %s dataset (datasets/%s)\n\n", ds.Name, ds.Data)
	printUniverse(e.stdout, d)
	_, st, err := ingest.ReadCSV(ctx, bytes.NewReader(data), "datasets/"+ds.Data, d, ingest.Options{})
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout)
	printData(e.stdout, d, st, "")
	fmt.Fprintf(e.stdout, "\nThe demo stops after ingest: workload, solver and privacy budget are not wired yet.\n")
	return nil
}

func loadEmbeddedDomain(ds datasets.Dataset) (*universe.Domain, error) {
	b, err := datasets.ReadFile(ds.Domain)
	if err != nil {
		return nil, withCode(ExitInternal, err)
	}
	d, err := universe.ParseDomain(b)
	if err != nil {
		return nil, &universe.DomainError{File: "datasets/" + ds.Domain, Err: err}
	}
	return d, nil
}
