package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/ledger"
	"github.com/dpsynth/synth/privacy"
)

// ledgerInitOptions are the flags of "synth ledger init".
type ledgerInitOptions struct {
	Ledger     string
	Name       string
	Epsilon    float64
	Delta      float64
	Conversion string
	flags      *pflag.FlagSet
}

func (o *ledgerInitOptions) AddFlags(fs *pflag.FlagSet) {
	o.flags = fs
	fs.StringVar(&o.Ledger, "ledger", "", "the ledger to create: a file path, or postgres://… (a table synth_ledger in that database, created if needed)")
	fs.StringVar(&o.Name, "ledger-name", "", "the ledger's name in a PostgreSQL database (default \"default\"): one per table")
	fs.Float64Var(&o.Epsilon, "epsilon", 0, "the table's lifetime ε (required)")
	fs.Float64Var(&o.Delta, "delta", 1e-9, "the table's lifetime δ")
	fs.StringVar(&o.Conversion, "conversion", "tight", "zCDP to (ε, δ) conversion: tight or standard (as synth release)")
}

// ledgerShowOptions are the flags of "synth ledger show".
type ledgerShowOptions struct {
	Ledger string
	Name   string
	JSON   bool
}

func (o *ledgerShowOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Ledger, "ledger", "", "the ledger: a file path or postgres://…")
	fs.StringVar(&o.Name, "ledger-name", "", "the ledger's name in a PostgreSQL database (default \"default\")")
	fs.BoolVar(&o.JSON, "json", false, "print the ledger as one JSON object (schema "+ledger.ReportSchema+")")
}

func init() {
	register(&command{
		name:    "ledger init",
		summary: "create a table's lifetime privacy budget",
		usage: `Creates a ledger that holds a table's lifetime budget (ε, δ). Every release
given --ledger reserves its whole plan there before it reads a record,
composed exactly with what the ledger already holds (zCDP where every entry
is zCDP); a release that does not fit exits 77 having read and written
nothing. A retry, a --force re-release or the next run of a pipeline is a new
entry: it spends again. Refuses to replace an existing ledger.

Examples:
  synth ledger init --ledger people.ledger.json --epsilon 4 --delta 1e-9
  synth ledger init --ledger postgres://ops@db/releases --ledger-name people --epsilon 4`,
		setup: setupFor[ledgerInitOptions](runLedgerInit),
	})
	register(&command{
		name:    "ledger show",
		summary: "list what a table's lifetime budget has spent and what remains",
		usage: `Lists every entry of a ledger (when it started and finished, its ε and ρ,
the solver, the output folder, its status) and what remains. An entry whose
release was killed before it finished shows as "incomplete (charged)": it
stays charged, since nobody can tell what it released.

Examples:
  synth ledger show --ledger people.ledger.json
  synth ledger show --ledger postgres://ops@db/releases --ledger-name people --json`,
		setup: setupFor[ledgerShowOptions](runLedgerShow),
	})
}

func runLedgerInit(ctx context.Context, e *env, o *ledgerInitOptions) error {
	if o.Ledger == "" {
		return usagef("--ledger is required")
	}
	if o.Epsilon == 0 && (o.flags == nil || !o.flags.Changed("epsilon")) {
		return usagef("--epsilon is required")
	}
	conv := privacy.Tight
	switch o.Conversion {
	case "tight":
	case "standard":
		conv = privacy.Standard
	default:
		return usagef("--conversion must be tight or standard, got %q", o.Conversion)
	}
	b := privacy.Budget{Eps: o.Epsilon, Delta: o.Delta}
	if err := b.Validate(); err != nil {
		return usagef("%v", err)
	}
	loc := ledger.Location{Path: o.Ledger, Name: o.Name}
	if err := ledger.Init(ctx, loc, b, conv); err != nil {
		return err
	}
	l, err := ledger.Open(ctx, loc)
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Fprintf(e.stdout, "created %s: lifetime budget (ε = %g, δ = %g), %s conversion\n", l.Where(), b.Eps, b.Delta, conv)
	return nil
}

func runLedgerShow(ctx context.Context, e *env, o *ledgerShowOptions) error {
	if o.Ledger == "" {
		return usagef("--ledger is required")
	}
	l, err := ledger.Open(ctx, ledger.Location{Path: o.Ledger, Name: o.Name})
	if err != nil {
		return err
	}
	defer l.Close()
	rep, err := l.Show(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSONLine(e.stdout, rep)
	}
	printLedger(e.stdout, rep)
	return nil
}

// printLedger prints a ledger's entries and what remains.
func printLedger(w io.Writer, rep *ledger.Report) {
	fmt.Fprintf(w, "ledger %s (%s), created %s\nlifetime budget: ε = %g, δ = %g (%s conversion)\n\n",
		rep.Where, rep.Name, rep.Created, rep.Budget.Eps, rep.Budget.Delta, rep.Conversion)
	if len(rep.Entries) == 0 {
		fmt.Fprintln(w, "no entries")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "started\tstatus\tε\tρ\tsolver\toutput")
		for _, en := range rep.Entries {
			fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.4g\t%s\t%s\n", en.Started, en.Shown, en.Eps, en.Rho, en.Solver, en.Out)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nspent: ε = %.6g (ρ = %.6g); remaining: ε = %.6g (ρ = %.6g)\n", rep.Spent.Eps, rep.Spent.Rho, rep.Remaining.Eps, rep.Remaining.Rho)
}
