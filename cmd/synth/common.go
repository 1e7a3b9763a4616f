package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/universe"
)

// outputOptions are the flags every pipeline command shares: how it talks
// to a person or a batch job.
type outputOptions struct {
	Config    string
	Quiet     bool
	Verbose   bool
	LogFormat string
	JSON      bool
}

func (o *outputOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Config, "config", "", "JSON file of flag values ({\"epsilon\": 1, ...}); flags on the command line override it")
	fs.BoolVarP(&o.Quiet, "quiet", "q", false, "no summary, progress, warnings or log messages (errors, and notes of changes made to the data such as repairs, still go to stderr)")
	fs.BoolVarP(&o.Verbose, "verbose", "v", false, "log each stage of the run on stderr")
	fs.StringVar(&o.LogFormat, "log-format", "text", "log format on stderr: text or json")
	fs.BoolVar(&o.JSON, "json", false, "print the outcome as one JSON line on stdout")
}

func (o *outputOptions) configFile() string { return o.Config }

// logger returns the slog logger for the options (stderr; discarded with
// --quiet).
func (o *outputOptions) logger(e *env) (*slog.Logger, error) {
	var w io.Writer = e.stderr
	if o.Quiet {
		w = io.Discard
	}
	// Info: warnings, and the progress lines of long phases in batch logs;
	// --verbose adds every stage (Debug).
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if o.Verbose {
		opts.Level = slog.LevelDebug
	}
	switch o.LogFormat {
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usagef("--log-format must be text or json, got %q", o.LogFormat)
}

// warn reports a warning on stderr: a "synth: warning:" line, or a log
// record with --log-format json (so that every line a batch job reads there
// is JSON). Nothing with --quiet: warnings also go to the manifest.
func (o *outputOptions) warn(e *env, log *slog.Logger, msg string) {
	switch {
	case o.Quiet:
	case o.LogFormat == "json":
		log.Warn(msg)
	default:
		fmt.Fprintf(e.stderr, "synth: warning: %s\n", msg)
	}
}

// notice reports a change made to the data (repairs, rows dropped by a
// privacy unit's bound): an exact statistic for the operator only, printed
// even with --quiet, since nothing else records it when the reports are
// public.
func (o *outputOptions) notice(e *env, log *slog.Logger, msg string) {
	if o.LogFormat == "json" && !o.Quiet {
		log.Warn(msg)
		return
	}
	fmt.Fprintf(e.stderr, "synth: note: %s\n", msg)
}

// applyConfig sets every flag named in the JSON config file that was not
// given on the command line. Unknown names are usage errors.
func applyConfig(fs *pflag.FlagSet, path string) error {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var vals map[string]any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&vals); err != nil {
		return usagef("--config %s: not a JSON object of flag values: %v", path, err)
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := fs.Lookup(k)
		if f == nil || k == "config" {
			return usagef("--config %s: unknown setting %q (use the flag names of this command)", path, k)
		}
		if f.Changed {
			continue // the command line wins
		}
		var s string
		switch v := vals[k].(type) {
		case string:
			s = v
		case json.Number:
			s = v.String()
		case bool:
			s = strconv.FormatBool(v)
		default:
			return usagef("--config %s: setting %q must be a string, number or boolean", path, k)
		}
		if err := fs.Set(k, s); err != nil {
			return usagef("--config %s: %s: %v", path, k, err)
		}
	}
	return nil
}

// dataOptions are the flags that read the private table.
type dataOptions struct {
	Data               string
	Format             string
	CountColumn        string
	Clamp              bool
	UnknownToOther     bool
	Columns            []string
	ExcludeColumns     []string
	IgnoreExtraColumns bool
	ShowValues         bool
}

func (o *dataOptions) AddFlags(fs *pflag.FlagSet) { o.addFlags(fs, true) }

// addFlags adds the data flags; formatAlias also accepts --format for
// --data-format (synth release uses --format for its output instead).
func (o *dataOptions) addFlags(fs *pflag.FlagSet, formatAlias bool) {
	fs.Var(&onceString{p: &o.Data, hint: "to read several part files give their folder or a quoted glob (--data 'export/part-*.csv')"}, "data",
		"the private table: CSV with a header row (gzip or zstd compressed too) or Parquet; a folder or a quoted glob of part files; - for CSV on stdin")
	fs.StringVar(&o.Format, "data-format", "auto", "format of --data: auto, csv or parquet")
	if formatAlias {
		fs.StringVar(&o.Format, "format", "auto", "format of --data: auto, csv or parquet (same as --data-format)")
	}
	fs.StringVar(&o.CountColumn, "count-column", "", "pre-aggregated input: the column holding each row's count (e.g. from a SQL GROUP BY)")
	fs.BoolVar(&o.Clamp, "clamp", false, "clamp integer and numeric values outside the declared bounds (row-wise; the count goes to stderr, even with --quiet, and to the internal report, never to a public file)")
	fs.BoolVar(&o.UnknownToOther, "unknown-to-other", false, "map unknown categories to the attribute's declared \"other\" value")
	fs.StringSliceVar(&o.Columns, "columns", nil, "use only these attributes (comma-separated): the domain is projected onto them and other table columns are ignored")
	fs.StringSliceVar(&o.ExcludeColumns, "exclude-columns", nil, "leave out these attributes (comma-separated): dropped from the domain and ignored in the table")
	fs.BoolVar(&o.IgnoreExtraColumns, "ignore-extra-columns", false, "ignore table columns the domain does not list (default: an error naming the column)")
	fs.BoolVar(&o.ShowValues, "show-values", false, "print the bad values themselves in error messages (by default an error names file, row and column but not the value: it is private data, and messages land in logs)")
}

func (o *dataOptions) format() (ingest.Format, error) {
	f, err := ingest.ParseFormat(o.Format)
	if err != nil {
		return 0, usagef("--data-format: %v", err)
	}
	if o.Data == ingest.Stdin && f == ingest.Parquet {
		return 0, usagef("--data - reads CSV from stdin; Parquet needs a file (random access)")
	}
	return f, nil
}

func (o *dataOptions) policy() universe.Policy {
	return universe.Policy{Clamp: o.Clamp, UnknownToOther: o.UnknownToOther}
}

// inputs are the column selection and stdin (nil e: none) of the read.
func (o *dataOptions) inputs(e *env) release.Inputs {
	in := release.Inputs{Columns: o.Columns, ExcludeColumns: o.ExcludeColumns, IgnoreExtraColumns: o.IgnoreExtraColumns, ShowValues: o.ShowValues}
	if e != nil {
		in.Stdin = e.stdin
	}
	return in
}

// ingestOptions are the options of a read through ingest directly.
func (o *dataOptions) ingestOptions(e *env) (ingest.Options, error) {
	f, err := o.format()
	if err != nil {
		return ingest.Options{}, err
	}
	return ingest.Options{
		Format: f, CountColumn: o.CountColumn, Policy: o.policy(),
		Columns: o.Columns, ExcludeColumns: o.ExcludeColumns, IgnoreExtraColumns: o.IgnoreExtraColumns,
		Stdin: e.stdin, ShowValues: o.ShowValues,
	}, nil
}

// onceString is a string flag that refuses to be given twice: pflag would
// keep the last value, so that "--data a.csv --data b.csv" would silently
// read b.csv only.
type onceString struct {
	p    *string
	set  bool
	hint string
}

func (s *onceString) String() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

func (s *onceString) Type() string { return "string" }

func (s *onceString) Set(v string) error {
	if s.set {
		return fmt.Errorf("given twice (%q, then %q); %s", *s.p, v, s.hint)
	}
	*s.p, s.set = v, true
	return nil
}

// workloadOptions name the workload: a file or the k-way shorthand.
type workloadOptions struct {
	Workload     string
	Marginals    int
	Sample       int
	WorkloadSeed uint64
}

func (o *workloadOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Workload, "workload", "", "workload file (JSON): the queries the release must answer well")
	fs.IntVar(&o.Marginals, "marginals", 0, "shorthand workload: all K-way marginals")
	fs.IntVar(&o.Sample, "sample", 0, "with --marginals: a random sample of this many K-way marginals")
	fs.Uint64Var(&o.WorkloadSeed, "workload-seed", 0, "seed of --sample (public: it picks queries, not noise)")
}

// printOutcomeJSON writes v as one JSON line.
func printJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
