package bench

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Result is one run: one row of results.csv. Floats that are not known
// (a failed run's errors, the population errors without a holdout) are NaN
// and integers -1; both are empty in the CSV.
type Result struct {
	Protocol   string
	Dataset    string
	Workload   string
	Universe   int64 // cells in the universe, k
	Queries    int64 // workload queries, m
	Solver     string
	Setting    string
	Neighbours string
	Epsilon    float64
	Delta      float64
	Seed       uint64
	Holdout    float64
	Records    int64 // records released from (n, after the holdout)
	Rows       int64 // synthetic rows

	MaxError, MeanError, RMSE, P95Error float64
	DistMaxError, DistMeanError         float64
	PopMaxError, PopMeanError           float64

	EpsilonSpent    float64
	Iterations      int64 // private steps (manifest)
	TraceIterations int64 // iterations of the solver's trace

	Seconds        float64 // wall time of the child process
	ReleaseSeconds float64 // the release's own time (outcome)
	CPUSeconds     float64 // user + system time of the child
	PeakRSSMiB     float64 // the child's maximum resident set size

	Status string // "ok" or the error

	// Columns appended after status (a results file written before them
	// still parses, with these unknown).

	// MeanMarginalL1 is the released rows' L1 error of each workload
	// marginal (Σ_cells |true − synthetic| as fractions of n), averaged
	// over the workload's marginals.
	MeanMarginalL1 float64
	// Model is the representation of D the release used: "explicit" or
	// "factored" (empty: unknown).
	Model string
	// With a privacy unit (the event protocols) the errors above are
	// against every row of the table; these are against the rows the
	// bound kept: the noise without the bound's bias. NaN otherwise.
	KeptMaxError, KeptMarginalL1 float64
	// The release's stages (report.json): reading the data, the solve,
	// and sampling and writing the rows (with scoring them), in seconds;
	// EstimateSeconds is the time model's estimate of the whole release
	// (report.json's time_estimate), to compare with Seconds. NaN when
	// unknown.
	ReadSeconds, SolveSeconds, WriteSeconds, EstimateSeconds float64
	// Accounting is the release's --accounting: "auto", "exact" or "zcdp"
	// (empty: a file written before it was recorded, where it was auto).
	Accounting string
}

// OK reports whether the run succeeded.
func (r *Result) OK() bool { return r.Status == StatusOK }

// StatusOK is the status of a successful run.
const StatusOK = "ok"

// Key identifies the result's grid point (Point.Key).
func (r *Result) Key() string {
	return strings.Join([]string{r.Protocol, r.Workload, r.Solver, r.Setting, r.Neighbours,
		formatFloat(r.Epsilon), formatFloat(r.Delta), strconv.FormatUint(r.Seed, 10), formatFloat(r.Holdout)}, "|")
}

// newResult returns a result for pt with every measurement unknown.
func newResult(pt *Point, sh *Shape) *Result {
	nan := math.NaN()
	return &Result{
		Protocol: pt.Protocol.Name, Dataset: pt.Protocol.Dataset, Workload: pt.Protocol.WorkloadName(),
		Universe: universeCells(sh), Queries: int64(sh.M),
		Solver: pt.Solver, Setting: pt.Setting, Neighbours: pt.Neighbours, Accounting: pt.Accounting,
		Epsilon: pt.Epsilon, Delta: pt.Delta, Seed: pt.Seed, Holdout: pt.Holdout,
		Records: -1, Rows: -1,
		MaxError: nan, MeanError: nan, RMSE: nan, P95Error: nan,
		DistMaxError: nan, DistMeanError: nan, PopMaxError: nan, PopMeanError: nan,
		EpsilonSpent: nan, Iterations: -1, TraceIterations: -1,
		Seconds: nan, ReleaseSeconds: nan, CPUSeconds: nan, PeakRSSMiB: nan,
		MeanMarginalL1: nan, KeptMaxError: nan, KeptMarginalL1: nan,
		ReadSeconds: nan, SolveSeconds: nan, WriteSeconds: nan, EstimateSeconds: nan,
	}
}

// column is one CSV column: its name, what it means, and how a Result
// renders and parses it.
type column struct {
	name string
	get  func(*Result) string
	set  func(*Result, string) error
}

func strCol(name string, f func(*Result) *string) column {
	return column{name,
		func(r *Result) string { return *f(r) },
		func(r *Result, s string) error { *f(r) = s; return nil }}
}

// floatCol is a float column; empty is NaN.
func floatCol(name string, f func(*Result) *float64) column {
	return column{name,
		func(r *Result) string {
			v := *f(r)
			if math.IsNaN(v) {
				return ""
			}
			return formatFloat(v)
		},
		func(r *Result, s string) error {
			if s == "" {
				*f(r) = math.NaN()
				return nil
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) {
				return fmt.Errorf("not a number: %q", s)
			}
			*f(r) = v
			return nil
		}}
}

// intCol is an integer column; empty is -1.
func intCol(name string, f func(*Result) *int64) column {
	return column{name,
		func(r *Result) string {
			if *f(r) < 0 {
				return ""
			}
			return strconv.FormatInt(*f(r), 10)
		},
		func(r *Result, s string) error {
			if s == "" {
				*f(r) = -1
				return nil
			}
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil || v < 0 {
				return fmt.Errorf("not a non-negative integer: %q", s)
			}
			*f(r) = v
			return nil
		}}
}

// columns are results.csv's columns, in order. bench/README.md says what
// each means (a test checks that it lists every column).
var columns = []column{
	strCol("protocol", func(r *Result) *string { return &r.Protocol }),
	strCol("dataset", func(r *Result) *string { return &r.Dataset }),
	strCol("workload", func(r *Result) *string { return &r.Workload }),
	intCol("universe", func(r *Result) *int64 { return &r.Universe }),
	intCol("queries", func(r *Result) *int64 { return &r.Queries }),
	strCol("solver", func(r *Result) *string { return &r.Solver }),
	strCol("setting", func(r *Result) *string { return &r.Setting }),
	strCol("neighbours", func(r *Result) *string { return &r.Neighbours }),
	floatCol("epsilon", func(r *Result) *float64 { return &r.Epsilon }),
	floatCol("delta", func(r *Result) *float64 { return &r.Delta }),
	{"seed",
		func(r *Result) string { return strconv.FormatUint(r.Seed, 10) },
		func(r *Result, s string) error {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return fmt.Errorf("not a seed: %q", s)
			}
			r.Seed = v
			return nil
		}},
	floatCol("holdout", func(r *Result) *float64 { return &r.Holdout }),
	intCol("records", func(r *Result) *int64 { return &r.Records }),
	intCol("rows", func(r *Result) *int64 { return &r.Rows }),
	floatCol("max_error", func(r *Result) *float64 { return &r.MaxError }),
	floatCol("mean_error", func(r *Result) *float64 { return &r.MeanError }),
	floatCol("rmse", func(r *Result) *float64 { return &r.RMSE }),
	floatCol("p95_error", func(r *Result) *float64 { return &r.P95Error }),
	floatCol("distribution_max_error", func(r *Result) *float64 { return &r.DistMaxError }),
	floatCol("distribution_mean_error", func(r *Result) *float64 { return &r.DistMeanError }),
	floatCol("population_max_error", func(r *Result) *float64 { return &r.PopMaxError }),
	floatCol("population_mean_error", func(r *Result) *float64 { return &r.PopMeanError }),
	floatCol("epsilon_spent", func(r *Result) *float64 { return &r.EpsilonSpent }),
	intCol("iterations", func(r *Result) *int64 { return &r.Iterations }),
	intCol("trace_iterations", func(r *Result) *int64 { return &r.TraceIterations }),
	floatCol("seconds", func(r *Result) *float64 { return &r.Seconds }),
	floatCol("release_seconds", func(r *Result) *float64 { return &r.ReleaseSeconds }),
	floatCol("cpu_seconds", func(r *Result) *float64 { return &r.CPUSeconds }),
	floatCol("peak_rss_mib", func(r *Result) *float64 { return &r.PeakRSSMiB }),
	strCol("status", func(r *Result) *string { return &r.Status }),
	// Appended columns: older files end at status.
	floatCol("mean_marginal_l1", func(r *Result) *float64 { return &r.MeanMarginalL1 }),
	strCol("model", func(r *Result) *string { return &r.Model }),
	floatCol("kept_max_error", func(r *Result) *float64 { return &r.KeptMaxError }),
	floatCol("kept_mean_marginal_l1", func(r *Result) *float64 { return &r.KeptMarginalL1 }),
	floatCol("read_seconds", func(r *Result) *float64 { return &r.ReadSeconds }),
	floatCol("solve_seconds", func(r *Result) *float64 { return &r.SolveSeconds }),
	floatCol("write_seconds", func(r *Result) *float64 { return &r.WriteSeconds }),
	floatCol("estimate_seconds", func(r *Result) *float64 { return &r.EstimateSeconds }),
	strCol("accounting", func(r *Result) *string { return &r.Accounting }),
}

// legacyColumns is the number of columns of the first results schema
// (protocol … status); ReadResults accepts files that stop there or at any
// later column.
const legacyColumns = 30

// universeCells is the universe column's value: the number of cells, or -1
// (empty: unknown) when it exceeds an int64.
func universeCells(sh *Shape) int64 {
	if sh.Cells != nil && sh.Cells.IsInt64() {
		return sh.Cells.Int64()
	}
	if sh.Cells == nil && sh.K <= math.MaxInt64 {
		return int64(sh.K)
	}
	return -1
}

// Columns returns results.csv's header.
func Columns() []string {
	h := make([]string, len(columns))
	for i, c := range columns {
		h[i] = c.name
	}
	return h
}

// record renders r as a CSV record.
func (r *Result) record() []string {
	rec := make([]string, len(columns))
	for i, c := range columns {
		rec[i] = c.get(r)
	}
	return rec
}

// WriteResults writes the header and rs as CSV.
func WriteResults(w io.Writer, rs []*Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns()); err != nil {
		return err
	}
	for _, r := range rs {
		if err := cw.Write(r.record()); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ResultsError is a problem in a results file: Line is 1-based and counts
// the header; Column is empty for problems with a whole record.
type ResultsError struct {
	File   string
	Line   int
	Column string
	Err    error
}

func (e *ResultsError) Error() string {
	s := fmt.Sprintf("%s: line %d", e.File, e.Line)
	if e.Column != "" {
		s += ", column " + e.Column
	}
	return s + ": " + e.Err.Error()
}

func (e *ResultsError) Unwrap() error { return e.Err }

// ReadResults parses a results file written by WriteResults. The header
// must be Columns(), or its beginning up to status or a later column (a
// file written before the later columns were appended: their fields are
// unknown); every field must parse as its column's type, the status must
// not be empty, and a row with status ok must have its errors and time.
func ReadResults(r io.Reader, name string) ([]*Result, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &ResultsError{File: name, Line: 1, Err: errors.New("empty file: no header")}
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	if want := Columns(); len(header) < legacyColumns || len(header) > len(want) || !slices.Equal(header, want[:len(header)]) {
		return nil, &ResultsError{File: name, Line: 1, Err: fmt.Errorf("header is not the results schema:\n got %s\nwant %s",
			strings.Join(header, ","), strings.Join(want, ","))}
	}
	cr.FieldsPerRecord = len(header)
	cols := columns[:len(header)]
	missing := columns[len(header):]
	var rs []*Result
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rs, nil
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		res := &Result{}
		for i, c := range cols {
			if err := c.set(res, rec[i]); err != nil {
				return nil, &ResultsError{File: name, Line: line, Column: c.name, Err: err}
			}
		}
		for _, c := range missing {
			_ = c.set(res, "") // an empty field always parses: unknown
		}
		if err := res.check(); err != nil {
			err.File, err.Line = name, line
			return nil, err
		}
		rs = append(rs, res)
	}
}

// check validates the fields that depend on each other.
func (r *Result) check() *ResultsError {
	switch {
	case r.Status == "":
		return &ResultsError{Column: "status", Err: errors.New("empty status")}
	case r.Protocol == "" || r.Solver == "" || r.Setting == "":
		return &ResultsError{Err: errors.New("protocol, solver and setting must not be empty")}
	case !(r.Epsilon > 0):
		return &ResultsError{Column: "epsilon", Err: fmt.Errorf("ε must be positive, got %v", r.Epsilon)}
	}
	if r.OK() {
		for _, c := range []struct {
			name string
			v    float64
		}{{"max_error", r.MaxError}, {"mean_error", r.MeanError}, {"rmse", r.RMSE}, {"seconds", r.Seconds}} {
			if math.IsNaN(c.v) {
				return &ResultsError{Column: c.name, Err: errors.New("empty in a run with status ok")}
			}
		}
	}
	return nil
}

func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &ResultsError{File: name, Line: pe.Line, Err: pe.Err}
	}
	return &ResultsError{File: name, Err: err}
}
