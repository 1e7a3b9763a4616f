package eval

import (
	"bytes"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// smallWorkload: a (2) and a×b (2×3) marginals, and the prefixes of b with
// weight 0.5: m = 2 + 6 + 2 = 10 queries.
func smallWorkload(t testing.TB) *query.Workload {
	t.Helper()
	dom, err := universe.ParseDomain([]byte(`{"a": 2, "b": 3, "c": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	w, err := query.Parse([]byte(`{"families": [
	  {"type": "marginals", "sets": [["a"], ["a", "b"]]},
	  {"type": "prefixes", "attribute": "b", "weight": 0.5}
	]}`), dom)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func smallInput(t testing.TB) *Input {
	return &Input{
		Workload:      smallWorkload(t),
		True:          []float64{0.375, 0.625, 0.125, 0.125, 0.125, 0.25, 0.25, 0.125, 0.1875, 0.3125},
		Synthetic:     []float64{0.5, 0.5, 0.25, 0.125, 0.125, 0.125, 0.25, 0.125, 0.1875, 0.375},
		Distribution:  []float64{0.4375, 0.5625, 0.1875, 0.125, 0.125, 0.1875, 0.25, 0.125, 0.1875, 0.34375},
		Holdout:       []float64{0.25, 0.75, 0.125, 0.0625, 0.0625, 0.25, 0.25, 0.25, 0.1875, 0.25},
		DataRows:      16,
		SyntheticRows: 8,
		HoldoutRows:   4,
		Title:         "Small test report",
		Note:          "fixed input for the golden file",
		Solver:        "dpfw (tuned)",
		SolverParams:  []Param{{Name: "T", Value: "3"}, {Name: "alpha", Value: "0.05"}},
		Privacy:       PrivacyInfo{Epsilon: 1, Delta: 1e-9, Rho: 0.0105, Neighbours: "replace one record (n public)", Accounting: "zCDP, converted to (ε, δ) once"},
		OneWay: []AttributeDist{
			{Name: "a", Labels: []string{"0", "1"}, True: []float64{0.375, 0.625}, Synthetic: []float64{0.5, 0.5}},
			{Name: "b", Labels: []string{"0", "1", "2"}, True: []float64{0.375, 0.375, 0.25}, Synthetic: []float64{0.375, 0.375, 0.25}},
			{Name: "c", Labels: []string{"0", "<null>"}, True: []float64{0.5, 0.5}, Synthetic: []float64{0.625, 0.375}},
		},
		Trace: []TracePoint{
			{Iteration: 1, Objective: 0.5, Elapsed: 10 * time.Millisecond},
			{Iteration: 2, Objective: 0.25, Elapsed: 20 * time.Millisecond},
			{Iteration: 3, Objective: 0.3125, Elapsed: 30 * time.Millisecond},
		},
		RunTime: 1500 * time.Millisecond,
	}
}

func TestReportGolden(t *testing.T) {
	r, err := Evaluate(smallInput(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "report.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("report JSON differs from %s (run go test -update after checking):\n%s", path, got)
	}
}

// TestReportNumbers checks the report's figures against a hand computation
// on the small input.
func TestReportNumbers(t *testing.T) {
	r, err := Evaluate(smallInput(t))
	if err != nil {
		t.Fatal(err)
	}
	s := r.Errors.Synthetic
	// Errors: .125 .125 .125 0 0 .125 0 0 0 .0625.
	want := Metrics{Max: 0.125, Mean: 0.5625 / 10, RMSE: math.Sqrt((4*0.015625 + 0.00390625) / 10), P95: 0.125}
	if !close(s.Max, want.Max) || !close(s.Mean, want.Mean) || !close(s.RMSE, want.RMSE) || !close(s.P95, want.P95) {
		t.Errorf("synthetic metrics = %+v, want %+v", s, want)
	}
	if r.Privacy != InternalStamp || r.Schema != ReportSchema {
		t.Errorf("stamp %q schema %q", r.Privacy, r.Schema)
	}
	if len(r.Marginals) != 2 {
		t.Fatalf("%d marginals, want 2", len(r.Marginals))
	}
	// a×b: errors .125 0 0 .125 0 0 → L1 .25, TV .125.
	if m := r.Marginals[1]; !close(m.L1, 0.25) || !close(m.TV, 0.125) || !close(m.Max, 0.125) || m.Cells != 6 || m.Offset != 2 {
		t.Errorf("marginal a×b = %+v, want L1 .25, TV .125, max .125, 6 cells at 2", m)
	}
	// Sampling: |D − syn| on query 0 is .0625; population on query 1 .25.
	if r.Errors.Sampling == nil || !close(r.Errors.Sampling.Max, 0.0625) {
		t.Errorf("sampling = %+v, want max .0625", r.Errors.Sampling)
	}
	if r.Errors.Population == nil || !close(r.Errors.Population.Max, 0.25) {
		t.Errorf("population = %+v, want max .25", r.Errors.Population)
	}
	if got := r.Queries[2].Label; got != "a=0,b=0" {
		t.Errorf("query 2 label = %q", got)
	}
	if r.Trace.BestObjective != 0.25 || r.Trace.Iterations != 3 || r.Trace.LastObjective != 0.3125 {
		t.Errorf("trace summary = %+v", r.Trace)
	}
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

func TestSummarize(t *testing.T) {
	cases := []struct {
		errs []float64
		want Metrics
	}{
		{nil, Metrics{}},
		{[]float64{2}, Metrics{2, 2, 2, 2}},
		{[]float64{3, 0, 4, 0}, Metrics{Max: 4, Mean: 1.75, RMSE: 2.5, P95: 4}},
	}
	for _, c := range cases {
		if got := Summarize(c.errs); got != c.want {
			t.Errorf("Summarize(%v) = %+v, want %+v", c.errs, got, c.want)
		}
		if got := passMetrics(c.errs); got != c.want {
			t.Errorf("errStats of %v = %+v, want %+v", c.errs, got, c.want)
		}
	}
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(100 - i) // 100..1
	}
	if got := Percentile(xs, 0.95); got != 95 {
		t.Errorf("Percentile(1..100, .95) = %v, want 95", got)
	}
	if xs[0] != 100 {
		t.Error("Percentile modified its input")
	}
	if got := passMetrics(xs); got.P95 != 95 || got.Max != 100 {
		t.Errorf("errStats of 100..1 = %+v, want P95 95 and max 100", got)
	}
}

func TestEvaluateErrors(t *testing.T) {
	in := smallInput(t)
	in.Synthetic = in.Synthetic[:3]
	if _, err := Evaluate(in); err == nil {
		t.Error("short synthetic answers: no error")
	}
	in = smallInput(t)
	in.True[4] = math.NaN()
	if _, err := Evaluate(in); err == nil {
		t.Error("NaN true answer: no error")
	}
	in = smallInput(t)
	in.Distribution, in.Holdout, in.Trace = nil, nil, nil
	r, err := Evaluate(in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.JSON()
	for _, absent := range []string{`"sampling"`, `"population"`, `"distribution"`, `"sampling_tv"`, `"population_tv"`} {
		if bytes.Contains(b, []byte(absent)) {
			t.Errorf("report without optional answers contains %s", absent)
		}
	}
}

// externalRef matches anything that could load or link a resource.
var externalRef = regexp.MustCompile(`(?i)https?:|//|src\s*=|@import|url\(|<script|<link|<img|<iframe|<object|<embed|href\s*=`)

func checkSelfContained(t *testing.T, html []byte) {
	t.Helper()
	if loc := externalRef.FindIndex(html); loc != nil {
		lo, hi := max(0, loc[0]-60), min(len(html), loc[1]+60)
		t.Errorf("HTML has an external reference %q in …%s…", html[loc[0]:loc[1]], html[lo:hi])
	}
}

func TestReportHTML(t *testing.T) {
	in := smallInput(t)
	in.Stages = []Stage{{Name: "read", Seconds: 0.25}, {Name: "solve", Seconds: 1.25}}
	in.Estimate = &TimeEstimate{ReleaseSeconds: 2, Low: 0.67, High: 6, SolveSeconds: 1.5,
		Stages: []Stage{{Name: "read", Seconds: 0.5}, {Name: "solve", Seconds: 1.5}, {Name: "report and the rest", Seconds: 0.125}}}
	r, err := Evaluate(in)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	html := buf.Bytes()
	checkSelfContained(t, html)
	if n := bytes.Count(html, []byte("<svg")); n != 7 {
		t.Errorf("HTML has %d <svg> plots, want 7 (error distribution, answers, worst marginals, trace, 3 one-way)", n)
	}
	for _, want := range []string{"Internal: computed on the private data, not differentially private", "Worst marginals", "a × b", "Population error estimate",
		"ε = 1, δ = 1e-09, ρ = 0.0105", "replace one record (n public)", "alpha = 0.05", "Legend", "<dt>TV</dt>", "<dt>L1</dt>", "<dt>D</dt>", "<dt>max</dt>",
		"Drill-down", "<td class=\"l\">a=1,b=2</td>", "Baseline for comparison", "baseline L1", "One-way distributions", "&lt;null&gt;",
		// Each estimated stage beside its time, — for the report's own.
		"whole release estimated 2.0 s", "<td class=\"l\">solve</td><td>1.2 s</td><td>1.5 s</td>", "<td class=\"l\">report and the rest</td><td>—</td><td>125 ms</td>"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if *update {
		os.WriteFile(filepath.Join(t.TempDir(), "report.html"), html, 0o644)
	}
}

func TestFmtNum(t *testing.T) {
	cases := map[float64]string{0: "0", 0.125: "0.125", 0.0123456: "0.0123", 1.5: "1.50", 123.4: "123", 2.5e-5: "2.50e-05", 0.001: "0.00100"}
	for x, want := range cases {
		if got := fmtNum(x); got != want {
			t.Errorf("fmtNum(%v) = %q, want %q", x, got, want)
		}
	}
	if got := fmtCount(14955); got != "14,955" {
		t.Errorf("fmtCount(14955) = %q", got)
	}
}

func publicInput(t testing.TB) *PublicInput {
	return &PublicInput{
		Workload: smallWorkload(t),
		Epsilon:  1, Delta: 1e-9, Rows: 8,
		Solver: "dpfw (tuned)", Rho: 0.0105, Neighbours: "replace one record (n public)",
		Accounting:   "zCDP, converted to (ε, δ) once",
		SolverParams: []Param{{Name: "T", Value: "3"}},
		Bounds: []Bound{
			{Scope: "workload", Name: "all queries", Queries: 10, Error: 0.0421, Confidence: 0.95, Method: "Gaussian measurement σ = 0.0107, union bound over 10 queries, plus sampling ≤ 1/N"},
			{Scope: "family", Name: "prefixes of b", Queries: 2, Error: 0.0303, Confidence: 0.95, Method: "Gaussian measurement σ = 0.0107 × weight 0.5"},
		},
	}
}

// TestPublicHasNoData: a public report built beside an internal one on the
// same workload shows none of the internal report's numbers or labels of
// data-derived content, and its types have no room for them.
func TestPublicHasNoData(t *testing.T) {
	in := smallInput(t)
	// Distinctive answers, so that a leak would be visible.
	for j := range in.True {
		in.True[j] = 0.0123456789 + float64(j)*0.0111
		in.Synthetic[j] = 0.0234567891 + float64(j)*0.0097
	}
	internal, err := Evaluate(in)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := Public(publicInput(t))
	if err != nil {
		t.Fatal(err)
	}
	js, err := pr.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var hb bytes.Buffer
	if err := pr.WriteHTML(&hb); err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, hb.Bytes())
	var secrets []float64
	for _, q := range internal.Queries {
		secrets = append(secrets, q.True, q.Synthetic, q.AbsError)
	}
	for _, m := range internal.Marginals {
		secrets = append(secrets, m.L1, m.TV, m.Max)
	}
	e := internal.Errors.Synthetic
	secrets = append(secrets, e.Max, e.Mean, e.RMSE, e.P95)
	for _, out := range [][]byte{js, hb.Bytes()} {
		for _, x := range secrets {
			for _, s := range []string{strconv.FormatFloat(x, 'g', -1, 64), strconv.FormatFloat(x, 'g', 4, 64), fmtNum(x)} {
				if len(s) >= 5 && bytes.Contains(out, []byte(s)) {
					t.Errorf("public report contains the data-derived number %s", s)
				}
			}
		}
		for _, s := range []string{"internal", "true", "synthetic answer", "holdout"} {
			if bytes.Contains(bytes.ToLower(out), []byte(s)) {
				t.Errorf("public report contains %q", s)
			}
		}
	}
	if !bytes.Contains(hb.Bytes(), []byte("Public: a-priori error bounds")) {
		t.Error("public HTML lacks its banner")
	}
	// Structure: the only numbers the types can carry are the budget, the
	// row count, the workload's public shape and the bounds.
	allowed := map[string]bool{
		"PublicInput.Epsilon": true, "PublicInput.Delta": true, "PublicInput.Rows": true,
		"Bound.Queries": true, "Bound.Error": true, "Bound.Confidence": true,
		"PublicInput.Rho": true, "PublicBudget.Rho": true,
		"PublicReport.Rows": true, "PublicBudget.Epsilon": true, "PublicBudget.Delta": true,
		"WorkloadInfo.Queries": true, "WorkloadInfo.Marginals": true, "FamilyInfo.Weight": true, "FamilyInfo.Queries": true,
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[PublicInput](), reflect.TypeFor[PublicReport]()} {
		for _, f := range numericFields(typ) {
			if !allowed[f] {
				t.Errorf("public type field %s carries a number that is not a public parameter", f)
			}
		}
	}
}

// numericFields lists Type.Field for every number-holding field reachable
// from typ (through structs, slices and pointers), except the workload.
func numericFields(typ reflect.Type) []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || t == reflect.TypeFor[query.Workload]() {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			ft := f.Type
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array {
				ft = ft.Elem()
			}
			switch ft.Kind() {
			case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint64:
				out = append(out, t.Name()+"."+f.Name)
			case reflect.Map, reflect.Interface:
				out = append(out, t.Name()+"."+f.Name+" (untyped)")
			case reflect.Struct:
				walk(ft)
			}
		}
	}
	walk(typ)
	return out
}

func TestPublicErrors(t *testing.T) {
	for _, modify := range []func(*PublicInput){
		func(in *PublicInput) { in.Workload = nil },
		func(in *PublicInput) { in.Bounds[0].Scope = "cell" },
		func(in *PublicInput) { in.Bounds[0].Error = math.NaN() },
		func(in *PublicInput) { in.Bounds[1].Confidence = 0 },
		func(in *PublicInput) { in.Bounds[1].Method = "" },
	} {
		in := publicInput(t)
		modify(in)
		if _, err := Public(in); err == nil {
			t.Errorf("Public(%+v): no error", in.Bounds)
		}
	}
}

func TestPublicGolden(t *testing.T) {
	pr, err := Public(publicInput(t))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := pr.JSON()
	path := filepath.Join("testdata", "public-report.golden.json")
	if *update {
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("public report JSON differs from %s:\n%s", path, got)
	}
	if strings.Contains(string(got), "internal") {
		t.Error("public report mentions internal")
	}
}

// TestBaselineAndDrilldown: the baseline answers the product of the true
// one-way tables; drill-downs follow L1; bad one-way tables are errors.
func TestBaselineAndDrilldown(t *testing.T) {
	r, err := Evaluate(smallInput(t))
	if err != nil {
		t.Fatal(err)
	}
	// a×b under independence: a=(.375,.625), b=(.375,.375,.25); the largest
	// error is the second prefix, 0.5·0.75 − 0.3125.
	if got, want := r.Baseline.Errors.Max, 0.0625; got != want {
		t.Errorf("baseline max = %v, want %v", got, want)
	}
	if got, want := *r.Marginals[1].BaselineL1, 2*0.015625+2*0.015625+2*0.03125; math.Abs(got-want) > 1e-15 {
		t.Errorf("baseline L1 of a×b = %v, want %v", got, want)
	}
	if len(r.Drilldown) != 2 || r.Drilldown[0].L1 < r.Drilldown[1].L1 || len(r.Drilldown[1].Shown) != 6 {
		t.Errorf("drill-downs %+v, want both marginals, worst L1 first, all 6 cells of a×b", r.Drilldown)
	}
	for _, tc := range []struct {
		name string
		edit func(*Input)
	}{
		{"too few tables", func(in *Input) { in.OneWay = in.OneWay[:2] }},
		{"wrong name", func(in *Input) { in.OneWay[0].Name = "x" }},
		{"wrong length", func(in *Input) { in.OneWay[1].True = in.OneWay[1].True[:2] }},
		{"negative", func(in *Input) { in.OneWay[2].Synthetic[0] = -0.5 }},
	} {
		in := smallInput(t)
		tc.edit(in)
		if _, err := Evaluate(in); err == nil {
			t.Errorf("%s: Evaluate = nil error, want one", tc.name)
		}
	}
	// Without one-way tables there is no baseline and no one_way field.
	in := smallInput(t)
	in.OneWay = nil
	r, err = Evaluate(in)
	if err != nil || r.Baseline != nil || r.OneWay != nil {
		t.Errorf("no one-way tables: baseline %v, one_way %v, err %v; want none", r.Baseline, r.OneWay, err)
	}
}

// TestPercentileSelect: the quickselect percentile equals the sorted
// nearest-rank value on random, constant and tied inputs.
func TestPercentileSelect(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := 1 + r.IntN(200)
		xs := make([]float64, n)
		for i := range xs {
			switch trial % 3 {
			case 0:
				xs[i] = r.Float64()
			case 1:
				xs[i] = float64(r.IntN(4))
			default:
				xs[i] = 1
			}
		}
		for _, q := range []float64{0.01, 0.5, 0.95, 1} {
			s := slices.Clone(xs)
			slices.Sort(s)
			want := s[min(max(int(math.Ceil(q*float64(n)))-1, 0), n-1)]
			if got := Percentile(xs, q); got != want {
				t.Fatalf("Percentile(%v, %v) = %v, want %v", xs, q, got, want)
			}
		}
	}
}
