package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/dpsynth/synth/query"
)

// ReportSchema names the report.json format and its version (see the
// package documentation).
const ReportSchema = "synth.report/v1"

// InternalStamp marks every report computed against the private data.
const InternalStamp = "internal: computed on the private data, not differentially private"

// TracePoint is one point of a solver's diagnostics trace.
type TracePoint struct {
	Iteration int
	// Objective is the solver's current estimate of its objective (for
	// example the max error of the workload on its iterate).
	Objective float64
	Elapsed   time.Duration
}

// Input is what Evaluate scores. Answers are fractions (w·count/n on data,
// ⟨q, D⟩ on a distribution), one per query of the workload, in query order:
// the pipeline computes them with Workload.AnswerCounts on counts or with
// Operator.Answer on a vector over the universe.
type Input struct {
	Workload *query.Workload
	// True holds the answers on the data the release was made from.
	True []float64
	// Synthetic holds the answers on the released rows.
	Synthetic []float64
	// Distribution, optional, holds the answers on the solver's
	// distribution D before sampling: its error against True is the
	// solver's, and its distance to Synthetic is the sampling error.
	Distribution []float64
	// Holdout, optional, holds the answers on held-out records that the
	// release never saw: the synthetic error against them estimates the
	// error against the data-generating distribution (population error).
	Holdout []float64

	// Rows (optional, reported when positive): records in the data, rows
	// released, records held out.
	DataRows, SyntheticRows, HoldoutRows int64

	// Title and Note head the report; Note says, for example, that the
	// input is an illustration.
	Title, Note string
	// Solver names the solver and setting, e.g. "dpfw (tuned)".
	Solver string
	// SolverParams are the solver's settings and derived parameters, in
	// the order to show them (see FloatParams).
	SolverParams []Param
	// Privacy states the release's budget, ρ, neighbours and accounting
	// (public facts; a zero Epsilon omits them).
	Privacy PrivacyInfo
	// OneWay, optional, holds each attribute's one-way table on the data
	// and on the synthetic rows, in domain order: the report shows both
	// and computes from the true tables the "independent attributes"
	// baseline (their product).
	OneWay []AttributeDist
	// Trace is the solver's diagnostics trace, in iteration order.
	Trace []TracePoint
	// RunTime is the whole run's wall time.
	RunTime time.Duration
	// Stages, optional, are the run's stages done before the report, with
	// their wall times; Estimate, optional, is the dry run's estimate of
	// the solve, to show beside the solve's actual time.
	Stages   []Stage
	Estimate *TimeEstimate
}

// Stage is one stage of a run and its wall time.
type Stage struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// TimeEstimate is a planned estimate of a release's wall time: the whole
// release's central value and the range the cost model claims, the solve's
// part, each stage's, and how it was computed.
type TimeEstimate struct {
	ReleaseSeconds float64 `json:"release_seconds"`
	Low            float64 `json:"release_seconds_low"`
	High           float64 `json:"release_seconds_high"`
	SolveSeconds   float64 `json:"solve_seconds"`
	Stages         []Stage `json:"stages,omitempty"`
	Method         string  `json:"method,omitempty"`
}

// Report is the internal error report: the content of report.json. See
// the package documentation for the meaning of each field.
type Report struct {
	Schema  string `json:"schema"`
	Privacy string `json:"privacy"`
	Title   string `json:"title"`
	Note    string `json:"note,omitempty"`
	Solver  string `json:"solver,omitempty"`
	// SolverParams are the solver's settings and parameters.
	SolverParams []Param `json:"solver_params,omitempty"`
	// Budget is the release's privacy (absent when not given).
	Budget   *PrivacyInfo `json:"budget,omitempty"`
	Workload WorkloadInfo `json:"workload"`
	Rows     RowsInfo     `json:"rows"`
	Errors   ErrorSummary `json:"errors"`
	// Baseline is the error of the independent-attributes synthetic
	// (present when one-way tables were given).
	Baseline *Baseline `json:"baseline,omitempty"`
	// OneWay are the one-way tables, in domain order.
	OneWay []OneWay `json:"one_way,omitempty"`
	// Drilldown shows the cells of the worst marginals by L1.
	Drilldown []Drill `json:"drilldown"`
	// Marginals lists each marginal set of the workload, in workload
	// order.
	Marginals []MarginalError `json:"marginals"`
	// Queries lists every query, in workload order, when there are at most
	// MaxReportQueries; otherwise the MaxReportQueries worst (by absolute
	// error), in workload order, and QueriesOmitted counts the others (a
	// workload of all 3-way marginals of a 14-attribute table has 2·10^7
	// cells: listing them all would take gigabytes).
	Queries        []QueryError `json:"queries"`
	QueriesOmitted int          `json:"queries_omitted,omitempty"`
	Trace          TraceSummary `json:"trace"`
	RunTimeSeconds float64      `json:"run_time_seconds"`
	// Stages are the run's stages before the report and their wall times;
	// TimeEstimate is the time model's estimate of the release and its
	// stages (made from the public plan and the number of records).
	Stages       []Stage       `json:"stages,omitempty"`
	TimeEstimate *TimeEstimate `json:"time_estimate,omitempty"`

	hist *errHist // the queries' errors for the HTML histogram
}

// errHist is what the HTML histogram of the queries' absolute errors
// shows: the errors of at least exactBelow, in query order, and how many
// others (exact answers) there are.
type errHist struct {
	shown []float64
	exact int
}

// MaxReportQueries bounds the queries listed one by one in a report.
const MaxReportQueries = 50000

// WorkloadInfo describes the workload.
type WorkloadInfo struct {
	Queries   int          `json:"queries"`
	Marginals int          `json:"marginals"`
	Families  []FamilyInfo `json:"families"`
}

// FamilyInfo is one family of the workload.
type FamilyInfo struct {
	Kind        string  `json:"kind"`
	Description string  `json:"description"`
	Weight      float64 `json:"weight"`
	Queries     int     `json:"queries"`
}

// RowsInfo gives the record counts (0: not given).
type RowsInfo struct {
	Data      int64 `json:"data"`
	Synthetic int64 `json:"synthetic"`
	Holdout   int64 `json:"holdout"`
}

// ErrorSummary holds the workload metrics of each comparison. Synthetic is
// always present; the others only when their answers were given.
type ErrorSummary struct {
	// Synthetic: released rows against the data.
	Synthetic Metrics `json:"synthetic"`
	// Distribution: D before sampling against the data.
	Distribution *Metrics `json:"distribution,omitempty"`
	// Sampling: released rows against D (the error sampling added).
	Sampling *Metrics `json:"sampling,omitempty"`
	// Population: released rows against the held-out records.
	Population *Metrics `json:"population,omitempty"`
}

// MarginalError is the error of one marginal set. L1 is the L1 distance
// between the true and synthetic marginal tables as fractions (the sum of
// the absolute errors of its cells divided by the set's weight), TV the
// total-variation distance L1/2, Max the largest absolute error of a cell
// (weighted, as the queries are).
type MarginalError struct {
	Attributes []string `json:"attributes"`
	Offset     int      `json:"offset"`
	Cells      int      `json:"cells"`
	Weight     float64  `json:"weight"`
	L1         float64  `json:"l1"`
	TV         float64  `json:"tv"`
	Max        float64  `json:"max"`
	// SamplingTV is the TV distance between the released rows' and D's
	// tables; PopulationTV between the released rows' and the holdout's.
	SamplingTV   *float64 `json:"sampling_tv,omitempty"`
	PopulationTV *float64 `json:"population_tv,omitempty"`
	// BaselineL1 is the L1 of the independent-attributes baseline.
	BaselineL1 *float64 `json:"baseline_l1,omitempty"`
}

// QueryError is one query's answers and error.
type QueryError struct {
	Label        string   `json:"label"`
	True         float64  `json:"true"`
	Synthetic    float64  `json:"synthetic"`
	AbsError     float64  `json:"abs_error"`
	Distribution *float64 `json:"distribution,omitempty"`
	Holdout      *float64 `json:"holdout,omitempty"`
}

// TraceSummary summarises the solver trace: the number of points, the
// last iteration, the first, last and best (lowest) objective, the elapsed
// time at the last point, and up to MaxTraceSamples points evenly spread
// (the first and last included).
type TraceSummary struct {
	Points         int           `json:"points"`
	Iterations     int           `json:"iterations"`
	FirstObjective float64       `json:"first_objective"`
	LastObjective  float64       `json:"last_objective"`
	BestObjective  float64       `json:"best_objective"`
	ElapsedSeconds float64       `json:"elapsed_seconds"`
	Samples        []TraceSample `json:"samples"`
}

// TraceSample is one point of the trace in the report.
type TraceSample struct {
	Iteration      int     `json:"iteration"`
	Objective      float64 `json:"objective"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
}

// MaxTraceSamples bounds the trace points kept in a report.
const MaxTraceSamples = 200

func checkAnswers(name string, a []float64, m int, required bool) error {
	if a == nil && !required {
		return nil
	}
	if len(a) != m {
		return fmt.Errorf("eval: %d %s answers for a workload of %d queries", len(a), name, m)
	}
	for j, x := range a {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("eval: %s answer %d is %v", name, j, x)
		}
	}
	return nil
}

// checkInputs checks the answer vectors in the order true, synthetic,
// distribution, holdout, each for its length and then value by value:
// the first problem is the error.
func checkInputs(in *Input, m int) error {
	for _, c := range []struct {
		name string
		a    []float64
		req  bool
	}{{"true", in.True, true}, {"synthetic", in.Synthetic, true}, {"distribution", in.Distribution, false}, {"holdout", in.Holdout, false}} {
		if err := checkAnswers(c.name, c.a, m, c.req); err != nil {
			return err
		}
	}
	return nil
}

// lengthsOK reports whether every answer vector given has m answers (the
// required ones given); the values are checked by the passes.
func lengthsOK(in *Input, m int) bool {
	return len(in.True) == m && len(in.Synthetic) == m &&
		(in.Distribution == nil || len(in.Distribution) == m) && (in.Holdout == nil || len(in.Holdout) == m)
}

// comparisons are the error summaries a report needs, each over the
// whole workload: the rows against the data (always), the baseline
// against the data (with one-way tables), D against the data and the rows
// against D (with distribution answers), the rows against the holdout.
type comparisons struct {
	syn, base, dist, samp, pop *errStats
	// kept and shown are syn's listed queries and histogram errors.
	kept  []int
	shown []float64
}

// compare runs the comparisons' passes side by side on the cores (the
// rows' first: it has the most) and reports whether every answer was
// finite. The additions of each sum stay in query order.
func compare(in *Input, ow []OneWay) (*comparisons, bool) {
	w := in.Workload
	c := &comparisons{syn: newErrStats(w, answers{v: in.True}, answers{v: in.Synthetic})}
	all := []*errStats{c.syn}
	if ow != nil {
		p := make([][]float64, len(ow))
		for i, o := range ow {
			p[i] = o.True
		}
		gen := func(lo int, out []float64) { w.AnswerProductRange(p, lo, out) }
		c.base = newErrStats(w, answers{v: in.True}, answers{gen: gen})
		all = append(all, c.base)
	}
	if in.Distribution != nil {
		c.dist = newErrStats(w, answers{v: in.True}, answers{v: in.Distribution})
		c.samp = newErrStats(w, answers{v: in.Distribution}, answers{v: in.Synthetic})
		all = append(all, c.dist, c.samp)
	}
	if in.Holdout != nil {
		c.pop = newErrStats(w, answers{v: in.Holdout}, answers{v: in.Synthetic})
		all = append(all, c.pop)
	}
	metrics := make([]Metrics, len(all))
	tasks := make([]func(), len(all))
	for i, e := range all {
		tasks[i] = func() {
			if e.scan(); e.bad {
				return
			}
			metrics[i] = e.metrics()
			if e == c.syn {
				c.kept, c.shown = e.listed()
			}
		}
	}
	runTasks(tasks)
	for i, e := range all {
		if e.bad {
			return nil, false
		}
		e.summary = metrics[i]
	}
	return c, true
}

// Evaluate scores the synthetic answers against the true ones (and the
// optional distribution and holdout answers) and returns the report.
//
// It keeps no vector of m errors: each comparison reads its two answer
// vectors once in query order for the sums (Summarize's bits) and the
// per-marginal figures, then again for its percentiles (a radix select)
// and the listed queries; the baseline's answers are made a chunk at a
// time. The comparisons run side by side on the cores.
//
// Privacy: the report is computed on the private data and is NOT
// differentially private; it is stamped InternalStamp. Publish only a
// PublicReport.
func Evaluate(in *Input) (*Report, error) {
	w := in.Workload
	if w == nil {
		return nil, fmt.Errorf("eval: no workload")
	}
	m := w.M()
	if !lengthsOK(in, m) {
		return nil, checkInputs(in, m)
	}
	r := &Report{
		Schema:         ReportSchema,
		Privacy:        InternalStamp,
		Title:          in.Title,
		Note:           in.Note,
		Solver:         in.Solver,
		Workload:       workloadInfo(w),
		Rows:           RowsInfo{Data: in.DataRows, Synthetic: in.SyntheticRows, Holdout: in.HoldoutRows},
		RunTimeSeconds: in.RunTime.Seconds(),
		Stages:         slices.Clone(in.Stages),
		TimeEstimate:   in.Estimate,
		Trace:          summarizeTrace(in.Trace),
	}
	if r.Title == "" {
		r.Title = "Workload error report"
	}
	if in.Privacy.Epsilon > 0 {
		p := in.Privacy
		r.Budget = &p
	}
	r.SolverParams = slices.Clone(in.SolverParams)
	ow, err := oneWays(w, in.OneWay)
	if err != nil {
		if e := checkInputs(in, m); e != nil {
			return nil, e
		}
		return nil, err
	}
	r.OneWay = ow
	c, ok := compare(in, ow)
	if !ok {
		if err := checkInputs(in, m); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("eval: an answer is not finite")
	}
	r.Errors.Synthetic = c.syn.summary
	if c.base != nil {
		r.Baseline = &Baseline{Description: BaselineDescription, Errors: c.base.summary}
	}
	if c.dist != nil {
		r.Errors.Distribution, r.Errors.Sampling = &c.dist.summary, &c.samp.summary
	}
	if c.pop != nil {
		r.Errors.Population = &c.pop.summary
	}
	r.Queries = listQueries(in, c.kept)
	r.QueriesOmitted = m - len(c.kept)
	r.Marginals = marginalErrors(w, c)
	r.Drilldown = drills(w, r, in)
	r.hist = &errHist{shown: c.shown, exact: m - len(c.shown)}
	return r, nil
}

// listQueries returns the report's entries of the kept queries. The report
// keeps its own copies of their answers: pointers into the caller's slices
// would change with them.
func listQueries(in *Input, kept []int) []QueryError {
	w := in.Workload
	qs := make([]QueryError, len(kept))
	var dist, hold []float64
	if in.Distribution != nil {
		dist = make([]float64, len(kept))
	}
	if in.Holdout != nil {
		hold = make([]float64, len(kept))
	}
	for i, j := range kept {
		q := QueryError{Label: w.Label(j), True: in.True[j], Synthetic: in.Synthetic[j], AbsError: math.Abs(in.True[j] - in.Synthetic[j])}
		if dist != nil {
			dist[i] = in.Distribution[j]
			q.Distribution = &dist[i]
		}
		if hold != nil {
			hold[i] = in.Holdout[j]
			q.Holdout = &hold[i]
		}
		qs[i] = q
	}
	return qs
}

// marginalErrors returns each marginal set's entry from the comparisons'
// per-set sums and maxima.
func marginalErrors(w *query.Workload, c *comparisons) []MarginalError {
	ms := w.Marginals()
	out := make([]MarginalError, len(ms))
	for i, s := range ms {
		me := MarginalError{Attributes: w.SetNames(s), Offset: s.Offset, Cells: s.Cells, Weight: s.Weight}
		me.L1 = c.syn.l1[i] / s.Weight
		me.TV = me.L1 / 2
		me.Max = c.syn.mmax[i]
		if c.samp != nil {
			tv := c.samp.l1[i] / s.Weight / 2
			me.SamplingTV = &tv
		}
		if c.pop != nil {
			tv := c.pop.l1[i] / s.Weight / 2
			me.PopulationTV = &tv
		}
		if c.base != nil {
			b := c.base.l1[i] / s.Weight
			me.BaselineL1 = &b
		}
		out[i] = me
	}
	return out
}

func l1(a, b []float64, s query.Marginal) float64 {
	var sum float64
	for j := s.Offset; j < s.Offset+s.Cells; j++ {
		sum += math.Abs(a[j] - b[j])
	}
	return sum
}

func workloadInfo(w *query.Workload) WorkloadInfo {
	info := WorkloadInfo{Queries: w.M(), Marginals: len(w.Marginals()), Families: []FamilyInfo{}}
	for _, f := range w.Families() {
		info.Families = append(info.Families, FamilyInfo{Kind: f.Kind.String(), Description: f.Description, Weight: f.Weight, Queries: f.Len})
	}
	return info
}

func summarizeTrace(tr []TracePoint) TraceSummary {
	s := TraceSummary{Points: len(tr), Samples: []TraceSample{}}
	if len(tr) == 0 {
		return s
	}
	last := tr[len(tr)-1]
	s.Iterations = last.Iteration
	s.FirstObjective, s.LastObjective = tr[0].Objective, last.Objective
	s.BestObjective = tr[0].Objective
	for _, p := range tr {
		s.BestObjective = min(s.BestObjective, p.Objective)
	}
	s.ElapsedSeconds = last.Elapsed.Seconds()
	n := min(len(tr), MaxTraceSamples)
	for i := range n {
		k := i
		if n < len(tr) && n > 1 {
			k = i * (len(tr) - 1) / (n - 1)
		}
		p := tr[k]
		s.Samples = append(s.Samples, TraceSample{Iteration: p.Iteration, Objective: p.Objective, ElapsedSeconds: p.Elapsed.Seconds()})
	}
	return s
}

// JSON returns the report's stable JSON form: fields in struct order,
// indented, with a final newline; floats in Go's shortest round-trip form.
func (r *Report) JSON() ([]byte, error) { return marshal(r) }

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	// Encode ends the compact text with a newline; indented, as
	// SetIndent("", "  ") would.
	compact := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	out := appendIndented(make([]byte, 0, len(compact)+len(compact)/2), compact)
	return append(out, '\n'), nil
}
