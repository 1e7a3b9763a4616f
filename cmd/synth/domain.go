package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/draft"
	"github.com/dpsynth/synth/internal/atomicfile"
	"github.com/dpsynth/synth/ledger"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/sqlsrc"
)

// domainDraftOptions are the flags of "synth domain draft".
type domainDraftOptions struct {
	Data           string
	Source         string
	Table          string
	Query          string
	Out            string
	Epsilon        float64
	Delta          float64
	PrivacyUnit    string
	MaxRowsPerUnit int
	Bins           int
	MaxCategories  int
	TimeZone       string
	NullSpellings  []string
	Exclude        []string
	Ledger         string
	LedgerName     string
	Seed           string
	Force          bool
	MemoryCap      uint64
	flags          *pflag.FlagSet
}

func (o *domainDraftOptions) AddFlags(fs *pflag.FlagSet) {
	o.flags = fs
	fs.StringVar(&o.Data, "data", "", "the private table: a CSV (gzip or zstd too) or Parquet file")
	fs.StringVar(&o.Source, "source", "", "read the table from a database instead: postgres://… or clickhouse://… with --table or --query")
	fs.StringVar(&o.Table, "table", "", "the table to draft (--source)")
	fs.StringVar(&o.Query, "query", "", "a SELECT whose rows are the records (--source)")
	fs.StringVar(&o.Out, "out", "", "the domain file to write (required; refuses to replace one without --force)")
	fs.Float64Var(&o.Epsilon, "epsilon", 0, "the draft's ε; 0 (the default) drafts from the schema alone: names and kinds, no values, no row read")
	fs.Float64Var(&o.Delta, "delta", 1e-9, "the draft's δ (its noisy counts and category selection are (ε, δ)-DP)")
	fs.StringVar(&o.PrivacyUnit, "privacy-unit", "", "the column that identifies a person (read, never drafted or written)")
	fs.IntVar(&o.MaxRowsPerUnit, "max-rows-per-unit", 0, "K, with --privacy-unit: the most rows one unit contributes (default 1)")
	fs.IntVar(&o.Bins, "bins", 0, "bins of numeric and integer columns (default 16)")
	fs.IntVar(&o.MaxCategories, "max-categories", 0, "most categories kept per column (default 1000)")
	fs.StringVar(&o.TimeZone, "timezone", "", "IANA time zone of timestamps without an offset and of the drafted bounds (default UTC)")
	fs.StringSliceVar(&o.NullSpellings, "null-spellings", nil, `public candidate spellings of a missing value in text (default: "", NA, N/A, NULL, null, ?, NaN)`)
	fs.StringSliceVar(&o.Exclude, "exclude-columns", nil, "columns left out of the draft")
	fs.StringVar(&o.Ledger, "ledger", "", "charge the draft to the table's lifetime budget (a ledger file or postgres://…) before reading a record")
	fs.StringVar(&o.LedgerName, "ledger-name", "", "the ledger's name in a PostgreSQL database")
	fs.StringVar(&o.Seed, "seed", "", "seed the randomness (for tests and walk-throughs only: NOT private against anyone who knows the seed)")
	fs.BoolVar(&o.Force, "force", false, "replace an existing --out file")
	o.MemoryCap = draft.DefaultMemoryCap
	fs.Var(sizeValue{&o.MemoryCap}, "memory-cap", "refuse a table whose drafted values need more memory (about 16 bytes per text value, 8 per number)")
}

func init() {
	register(&command{
		name:    "domain draft",
		summary: "propose a domain file for a table, with differential privacy",
		usage: `Proposes a domain file (docs/DOMAIN.md) for a table, so that nobody reads the
private data to write one. With --epsilon E it reads the table once and, with
(E, --delta)-differential privacy under add/remove of one unit (a row, or K
rows of one --privacy-unit):
  - the kind of each text column from noisy counts of what its values read as
    (boolean, integer, real, date, timestamp, text); typed Parquet columns
    and database columns take their kind from the schema, for free;
  - the categories of text columns by DP partition selection: a category held
    by a handful of records never appears (the file's notes say how many it
    takes at this budget);
  - bounds of numbers, dates and timestamps from DP quantiles over a public
    grid, and bins from them;
  - a null token where noisy counts of missing values say there are some.
Its whole budget is charged before a record is read (to --ledger when given)
and written into the file's "draft" object with the notes. Without --epsilon
it reads the schema only and writes names and kinds with placeholders to fill
in. The file is an ordinary domain file: edit it (merge rare categories,
round bounds, choose bins) from what you know of the data's meaning.

Examples:
  synth domain draft --data visits.parquet --epsilon 0.5 --out visits-domain.json
  synth domain draft --data visits.csv --out visits-domain.json
  synth domain draft --source postgres://ro@db/app --table events --privacy-unit user_id \
      --max-rows-per-unit 8 --epsilon 1 --ledger events.ledger.json --out events-domain.json`,
		setup: setupFor[domainDraftOptions](runDomainDraft),
	})
}

func runDomainDraft(ctx context.Context, e *env, o *domainDraftOptions) error {
	if o.Out == "" {
		return usagef("--out is required")
	}
	if (o.Data == "") == (o.Source == "") {
		return usagef("give one of --data and --source")
	}
	if o.Source != "" && (o.Table == "") == (o.Query == "") {
		return usagef("--source needs exactly one of --table and --query")
	}
	if o.Data != "" && (o.Table != "" || o.Query != "") {
		return usagef("--table and --query go with --source")
	}
	if !o.Force {
		if _, err := os.Stat(o.Out); err == nil {
			return usagef("%s exists; give --force to replace it", o.Out)
		}
	}
	s := draft.Settings{Epsilon: o.Epsilon, Delta: o.Delta, PrivacyUnit: o.PrivacyUnit, MaxRowsPerUnit: o.MaxRowsPerUnit,
		NullSpellings: o.NullSpellings, Bins: o.Bins, MaxCategories: o.MaxCategories, TimeZone: o.TimeZone, Exclude: o.Exclude,
		MemoryCap: o.MemoryCap}
	if o.Epsilon == 0 {
		s.Delta = 0
	}
	if err := s.Validate(); err != nil {
		return usagef("%v", err)
	}
	r, err := draftRand(o.Seed)
	if err != nil {
		return err
	}
	// The whole budget is reserved in the table's lifetime ledger before a
	// record is read.
	var res *ledger.Reservation
	if o.Ledger != "" && o.Epsilon > 0 {
		l, err := ledger.Open(ctx, ledger.Location{Path: o.Ledger, Name: o.LedgerName})
		if err != nil {
			return err
		}
		defer l.Close()
		out := o.Out
		if abs, err := filepath.Abs(out); err == nil {
			out = abs
		}
		res, err = l.Reserve(ctx, ledger.Request{What: "domain draft", Solver: "domain draft", Out: out, Neighbours: draftNeighbours(o),
			Charges: []privacy.Charge{{Label: "domain draft", Cost: privacy.ApproxCost(o.Epsilon, o.Delta)}}})
		if err != nil {
			return err
		}
	}
	d, err := o.run(ctx, s, r)
	var me *draft.MemoryError
	if res != nil {
		var ferr error
		switch {
		case errors.As(err, &me) && me.BeforeRead:
			ferr = res.Cancel(context.WithoutCancel(ctx)) // nothing was read: nothing spent
		case err != nil:
			ferr = res.Finish(context.WithoutCancel(ctx), ledger.Failed) // records may have been read: it stays charged
		default:
			ferr = res.Finish(context.WithoutCancel(ctx), ledger.Complete)
		}
		if ferr != nil && err == nil {
			err = ferr
		}
	}
	if err != nil {
		return draftError(err)
	}
	if err := atomicfile.WriteFile(o.Out, d.JSON, 0o644); err != nil {
		return err
	}
	if o.Epsilon == 0 {
		fmt.Fprintf(e.stdout, "wrote %s from the schema alone (no row read, nothing spent): fill in the values, bounds and bins\n", o.Out)
	} else {
		fmt.Fprintf(e.stdout, "wrote %s: spent %s under %s\n", o.Out, d.Spent, draftNeighbours(o))
	}
	for _, n := range d.Notes {
		fmt.Fprintf(e.stdout, "  %s\n", n)
	}
	return nil
}

// draftNeighbours states the relation the draft's guarantee holds under.
func draftNeighbours(o *domainDraftOptions) string {
	if o.PrivacyUnit == "" {
		return "add/remove one row"
	}
	return fmt.Sprintf("add/remove one unit (%s, at most %d rows)", o.PrivacyUnit, max(o.MaxRowsPerUnit, 1))
}

// run drafts from the file or the database.
func (o *domainDraftOptions) run(ctx context.Context, s draft.Settings, r *privacy.Rand) (*draft.Draft, error) {
	if o.Data != "" {
		return draft.File(ctx, o.Data, s, r)
	}
	rec, err := sqlsrc.OpenRecords(ctx, o.Source, &sqlsrc.Options{Table: o.Table, Query: o.Query}, nil, o.Epsilon > 0)
	if err != nil {
		return nil, err
	}
	defer rec.Close()
	var last arrow.RecordBatch
	defer func() {
		if last != nil {
			last.Release()
		}
	}()
	next := func() (arrow.RecordBatch, error) {
		if last != nil {
			last.Release()
			last = nil
		}
		b, err := rec.Next(ctx)
		if err != nil {
			return nil, err
		}
		last = b
		return b, nil
	}
	return draft.Records(ctx, rec.Schema(), next, s, r)
}

// draftRand is the draft's randomness: crypto/rand, or a seed for tests.
func draftRand(seed string) (*privacy.Rand, error) {
	if seed == "" {
		return privacy.NewSecure()
	}
	v, err := strconv.ParseUint(seed, 10, 64)
	if err != nil {
		return nil, usagef("--seed: %v", err)
	}
	return privacy.NewSeeded(v), nil
}

// draftError gives a draft's failure its exit code: the memory cap (78),
// the database (69), files and cancellation as usual, and anything else
// about the table's content as bad data (65).
func draftError(err error) error {
	var (
		me *draft.MemoryError
		se *sqlsrc.SourceError
		pe *fs.PathError
	)
	switch {
	case errors.As(err, &me):
		return withCode(ExitMemory, err)
	case errors.As(err, &se), errors.As(err, &pe), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return withCode(ExitData, err)
}
