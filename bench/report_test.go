package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsynth/synth/eval"
)

// TestReadReport: the fields the harness needs come out of a report with
// every other field present; the mean marginal L1 is the plain mean over
// the marginals.
func TestReadReport(t *testing.T) {
	tests := []struct {
		name      string
		marginals string
		want      float64
	}{
		{"three", `[{"attributes":["a","b"],"cells":4,"l1":0.1,"tv":0.05},{"attributes":["a","c"],"l1":0.2},{"l1":0.6,"max":0.3}]`, 0.3},
		{"one", `[{"l1":0.25}]`, 0.25},
		{"none", `[]`, math.NaN()},
		{"missing l1", `[{"l1":0.25},{"tv":0.1}]`, math.NaN()},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "report.json")
		doc := `{"schema":"synth.report/v1","errors":{"synthetic":{"max":0.5,"mean":0.01},` +
			`"distribution":{"max":0.4,"mean":0.009},"population":{"max":0.6,"mean":0.02}},` +
			`"drilldown":[{"attributes":["a"],"l1":9,"shown":[]}],"marginals":` + tt.marginals + `,` +
			`"queries":[{"label":"a=1","true":0.5,"synthetic":0.4,"abs_error":0.1}],` +
			`"trace":{"points":3,"iterations":250,"samples":[{"iteration":1}]},"run_time_seconds":2}`
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := readReport(path)
		if err != nil {
			t.Fatalf("%s: readReport: %v", tt.name, err)
		}
		got := rep.meanMarginalL1()
		if !(math.Abs(got-tt.want) < 1e-12 || math.IsNaN(got) && math.IsNaN(tt.want)) {
			t.Errorf("%s: meanMarginalL1 = %v, want %v", tt.name, got, tt.want)
		}
		if rep.Errors.Distribution.Max != 0.4 || rep.Errors.Population.Mean != 0.02 || rep.Trace.Iterations != 250 || rep.Trace.Points != 3 {
			t.Errorf("%s: readReport = %+v, want distribution max 0.4, population mean 0.02, trace 3 points to iteration 250", tt.name, rep)
		}
	}
	bad := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(bad, []byte(`{"marginals":[{"l1":"x"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readReport(bad); err == nil || !strings.Contains(err.Error(), "report.json") {
		t.Errorf("readReport(bad l1) = %v, want an error naming report.json", err)
	}
	if _, err := readReport(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Errorf("readReport(missing file) = nil error")
	}
}

// bigReport writes a report.json shaped like a release's on all 3-way
// marginals of ADULT: 364 marginals, 50,000 listed queries and 6
// drill-downs (about 12 MB), and returns its path.
func bigReport(tb testing.TB) string {
	tb.Helper()
	rep := eval.Report{Schema: eval.ReportSchema, Privacy: eval.InternalStamp}
	for i := range 364 {
		rep.Marginals = append(rep.Marginals, eval.MarginalError{Attributes: []string{"age", "workclass", "fnlwgt"},
			Offset: i * 57000, Cells: 57000, Weight: 1, L1: 0.2 + float64(i)/1e4, TV: 0.1, Max: 0.01})
	}
	for i := range eval.MaxReportQueries {
		rep.Queries = append(rep.Queries, eval.QueryError{Label: fmt.Sprintf("age=%d ∧ workclass=Private ∧ fnlwgt=%d", i%85, i%100),
			True: 0.0123456789, Synthetic: 0.0120987654, AbsError: 0.000246913})
	}
	for range eval.DrillMarginals {
		d := eval.Drill{Attributes: []string{"age", "workclass", "fnlwgt"}, L1: 0.5, Cells: 57000}
		for range eval.DrillCells {
			d.Shown = append(d.Shown, eval.DrillCell{Label: "age=40 ∧ workclass=Private ∧ fnlwgt=7", True: 0.01, Synthetic: 0.02, AbsError: 0.01})
		}
		rep.Drilldown = append(rep.Drilldown, d)
	}
	b, err := json.MarshalIndent(&rep, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "report.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestReadBigReport(t *testing.T) {
	path := bigReport(t)
	rep, err := readReport(path)
	if err != nil {
		t.Fatal(err)
	}
	// L1 = 0.2 + i/1e4 for i < 364: the mean is 0.2 + 181.5/1e4.
	if got, want := rep.meanMarginalL1(), 0.2+181.5e-4; math.Abs(got-want) > 1e-12 {
		t.Errorf("meanMarginalL1 = %v, want %v", got, want)
	}
}

// BenchmarkReadReport decodes the fields the harness needs from a report
// the size of full ADULT's (go test ./bench -run - -bench ReadReport).
func BenchmarkReadReport(b *testing.B) {
	path := bigReport(b)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readReport(path); err != nil {
			b.Fatal(err)
		}
	}
}
