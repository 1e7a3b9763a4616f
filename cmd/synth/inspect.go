package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/universe"
)

// inspectOptions are the flags of "synth inspect".
type inspectOptions struct {
	Domain string
}

func (o *inspectOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Domain, "domain", "", "domain file (JSON), public description of the table")
}

func init() {
	register(&command{
		name:    "inspect",
		summary: "describe a domain (and validate data against it)",
		usage: `Examples:
  synth inspect --domain adult-reduced-domain.json`,
		setup: func(fs *pflag.FlagSet) func(context.Context, *env, []string) error {
			var o inspectOptions
			o.AddFlags(fs)
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected arguments %q", args)
				}
				return runInspect(ctx, e, &o)
			}
		},
	})
}

func runInspect(ctx context.Context, e *env, o *inspectOptions) error {
	if o.Domain == "" {
		return usagef("--domain is required")
	}
	d, err := universe.LoadDomain(o.Domain)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "attribute\tkind\tsize\tdomain\n")
	for _, a := range d.Attrs() {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", a.Name, a.Kind, a.Size(), a.Describe())
	}
	w.Flush()
	fmt.Fprintf(e.stdout, "\nattributes: %d\nuniverse size: %s (10^%.2f)\nexplicit vector: %s\n",
		d.Len(), universe.FormatCount(d.SizeBig()), d.Log10Size(), universe.FormatBytes(d.ExplicitBytes()))
	return nil
}
