package main

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dpsynth/synth/eval"
	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/universe"
)

// rawInputs returns the raw table and its domain (every attribute kind,
// a nullable column).
func rawInputs(t *testing.T) (data, domain string, dom *universe.Domain) {
	t.Helper()
	raw := filepath.Join(pkgDir, "..", "..", "ingest", "testdata", "raw")
	data, domain = filepath.Join(raw, "adult-raw.csv"), filepath.Join(raw, "adult-raw-domain.json")
	dom, err := universe.LoadDomain(domain)
	if err != nil {
		t.Fatal(err)
	}
	return data, domain, dom
}

func domainJSON(t *testing.T, d *universe.Domain) string {
	t.Helper()
	b, err := d.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReleaseCSVEndToEnd: --format csv with a gzipped name and --bins
// label: the folder's files, the manifest's list, the header, the labels
// and domain.json.
func TestReleaseCSVEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	data, domain, dom := rawInputs(t)
	out := filepath.Join(t.TempDir(), "csv")
	r := runBinary(t, "", "release", "--data", data, "--domain", domain, "--marginals", "2",
		"--epsilon", "1", "--seed", "3", "--rows", "1500", "--format", "csv",
		"--synthetic-file", "people.csv.gz", "--bins", "label", "--out", out)
	if r.code != ExitOK {
		t.Fatalf("release: %s", r)
	}
	files := []string{"people.csv.gz", release.DomainFile, release.ReportJSONFile, release.ReportHTMLFile, release.ManifestFile}
	wantFiles(t, out, files...)
	for _, f := range files[:4] {
		if !strings.Contains(r.stdout, "  "+f+"\n") {
			t.Errorf("stdout does not list %s:\n%s", f, r.stdout)
		}
	}
	man := checkManifest(t, out, 1, 1e-9, nil, -1)
	if !slices.Equal(man.Output.Files, files) || man.Output.Format != "csv" || man.Output.NumericValues != "label" || man.Output.IntegerValues != "label" {
		t.Errorf("manifest output = %+v, want files %v, csv, label rules", man.Output, files)
	}
	// domain.json is the domain as the CSV writes it: nulls as empty fields.
	b, err := os.ReadFile(filepath.Join(out, release.DomainFile))
	if err != nil {
		t.Fatal(err)
	}
	back, err := universe.ParseDomain(b)
	if err != nil {
		t.Fatalf("domain.json: %v", err)
	}
	csvDom, err := dom.WithNullTokens(func(*universe.Attribute) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if domainJSON(t, back) != domainJSON(t, csvDom) {
		t.Errorf("domain.json = %s, want %s", domainJSON(t, back), domainJSON(t, csvDom))
	}
	// The CSV: gzip, header in domain order, one record per row, labels for
	// the integer bucket and numeric bins, empty fields for nulls.
	f, err := os.Open(filepath.Join(out, "people.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("people.csv.gz is not gzip: %v", err)
	}
	recs, err := csv.NewReader(zr).ReadAll()
	if err != nil {
		t.Fatalf("people.csv.gz: %v", err)
	}
	var header []string
	for _, a := range dom.Attrs() {
		header = append(header, a.Name)
	}
	if !slices.Equal(recs[0], header) || len(recs) != 1501 {
		t.Fatalf("CSV header %v and %d records, want %v and 1501", recs[0], len(recs), header)
	}
	nulls := 0
	for i, a := range dom.Attrs() {
		allowed := map[string]bool{}
		for c := range a.Size() {
			if nc, ok := a.NullCode(); ok && c == nc {
				allowed[""] = true
			} else {
				allowed[a.Label(c)] = true
			}
		}
		for r, rec := range recs[1:] {
			if !allowed[rec[i]] {
				t.Fatalf("row %d column %s = %q, not a label of the domain", r+1, a.Name, rec[i])
			}
			if rec[i] == "" {
				nulls++
			}
		}
	}
	if !strings.Contains(strings.Join(recs[1][5:], ","), "..") || !strings.Contains(recs[1][6], "[") {
		t.Errorf("row 1 = %v, want the bucket label lo..hi and the bin label [lo, hi)", recs[1])
	}
	t.Logf("%d null fields in %d rows", nulls, len(recs)-1)
}

// TestReleaseParquetBinsEndToEnd: --bins lower-upper in Parquet, read back
// with Arrow; the domain in the footer; the report's privacy statement,
// solver parameters, one-way tables, baseline, drill-down and <null>
// labels; the public report's privacy statement.
func TestReleaseParquetBinsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	data, domain, dom := rawInputs(t)
	out := filepath.Join(t.TempDir(), "pq")
	r := runBinary(t, "", "release", "--data", data, "--domain", domain, "--marginals", "2",
		"--epsilon", "1", "--seed", "3", "--bins", "lower-upper", "--out", out, "--quiet")
	if r.code != ExitOK {
		t.Fatalf("release: %s", r)
	}
	wantFiles(t, out, release.Outputs...)
	b, err := os.ReadFile(filepath.Join(out, release.SyntheticFile))
	if err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	kv := pf.MetaData().KeyValueMetadata()
	if v := kv.FindValue(release.DomainKey); v == nil {
		t.Fatalf("no %s in the Parquet metadata", release.DomainKey)
	} else if back, err := universe.ParseDomain([]byte(*v)); err != nil || domainJSON(t, back) != domainJSON(t, dom) {
		t.Errorf("embedded domain %s (%v), want %s", *v, err, domainJSON(t, dom))
	}
	if kv.FindValue(release.ManifestKey) == nil {
		t.Errorf("no %s in the Parquet metadata", release.ManifestKey)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	var names []string
	for _, f := range tbl.Schema().Fields() {
		names = append(names, f.Name+":"+f.Type.String())
	}
	want := []string{"education:utf8", "marital-status:utf8", "occupation:utf8", "race:utf8", "sex:utf8",
		"income_lower:int64", "income_upper:int64", "age_lower:float64", "age_upper:float64"}
	if !slices.Equal(names, want) {
		t.Errorf("Arrow columns %v, want %v", names, want)
	}
	// age_upper − age_lower is a bin width: every value is a declared edge.
	edges := map[float64]bool{}
	for _, e := range dom.Attr(6).Edges {
		edges[e] = true
	}
	for _, chunk := range tbl.Column(8).Data().Chunks() {
		for _, v := range chunk.(interface{ Float64Values() []float64 }).Float64Values() {
			if !edges[v] {
				t.Fatalf("age_upper = %v, not a declared edge", v)
			}
		}
	}
	_ = arrow.PrimitiveTypes.Int64

	// The internal report.
	var rep eval.Report
	rb, err := os.ReadFile(filepath.Join(out, release.ReportJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rb, &rep); err != nil {
		t.Fatal(err)
	}
	// Exact accounting (the default here): no ρ, as the plan is not ρ-zCDP
	// at the budget's ρ.
	if rep.Budget == nil || rep.Budget.Epsilon != 1 || rep.Budget.Delta != 1e-9 || rep.Budget.Rho != 0 ||
		!strings.Contains(rep.Budget.Accounting, "exact") || !strings.Contains(rep.Budget.Neighbours, "add or remove one privacy unit (one row)") {
		t.Errorf("report budget %+v, want ε 1, δ 1e-9, no ρ, exact accounting, add/remove of one row", rep.Budget)
	}
	if len(rep.SolverParams) < 2 || rep.SolverParams[0] != (eval.Param{Name: "setting", Value: "tuned"}) {
		t.Errorf("report solver parameters %v, want the setting and the plan's parameters", rep.SolverParams)
	}
	if len(rep.OneWay) != dom.Len() || rep.Baseline == nil || len(rep.Drilldown) != eval.DrillMarginals {
		t.Fatalf("report: %d one-way tables, baseline %v, %d drill-downs", len(rep.OneWay), rep.Baseline, len(rep.Drilldown))
	}
	if got := rep.OneWay[2].Labels[dom.Attr(2).Size()-1]; got != "<null>" {
		t.Errorf("occupation's null label %q, want <null>", got)
	}
	if !slices.ContainsFunc(rep.Queries, func(q eval.QueryError) bool { return strings.Contains(q.Label, "occupation=<null>") }) {
		t.Error("no query label with occupation=<null>")
	}
	html, _ := os.ReadFile(filepath.Join(out, release.ReportHTMLFile))
	if bytes.Contains(html, []byte("ρ = ")) {
		t.Error("report.html states a ρ under exact accounting")
	}
	for _, s := range []string{"accounting: exact", "Legend", "Drill-down", "One-way distributions", "Baseline for comparison", "&lt;null&gt;"} {
		if !bytes.Contains(html, []byte(s)) {
			t.Errorf("report.html lacks %q", s)
		}
	}

	// The public report states the privacy and the solver, nothing else
	// (zCDP accounting here, which states its ρ).
	pub := filepath.Join(t.TempDir(), "pub")
	r = runBinary(t, "", "release", "--data", data, "--domain", domain, "--marginals", "2",
		"--epsilon", "1", "--seed", "3", "--accounting", "zcdp", "--public-report", "--out", pub, "--quiet")
	if r.code != ExitOK {
		t.Fatalf("public release: %s", r)
	}
	var pr eval.PublicReport
	pb, _ := os.ReadFile(filepath.Join(pub, release.ReportJSONFile))
	if err := json.Unmarshal(pb, &pr); err != nil {
		t.Fatal(err)
	}
	if !(pr.Budget.Rho > 0) || pr.Budget.Neighbours == "" || pr.Budget.Accounting == "" || len(pr.SolverParams) < 2 {
		t.Errorf("public report budget %+v, params %v: want ρ, neighbours, accounting and the solver's parameters", pr.Budget, pr.SolverParams)
	}
	phtml, _ := os.ReadFile(filepath.Join(pub, release.ReportHTMLFile))
	for _, s := range []string{"ρ (zCDP)", "neighbouring datasets", "solver: setting"} {
		if !bytes.Contains(phtml, []byte(s)) {
			t.Errorf("public report.html lacks %q", s)
		}
	}
}

// TestReleaseOutputFlagErrors: bad output flags are usage errors, made
// before anything is written.
func TestReleaseOutputFlagErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	data, domain, _ := rawInputs(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bins and old flag", []string{"--bins", "label", "--numeric-values", "uniform"}, "not both"},
		{"bad bins", []string{"--bins", "centre"}, "--bins"},
		{"bad format", []string{"--format", "xlsx"}, "--format"},
		{"path as name", []string{"--synthetic-file", "../x.csv"}, "not a path"},
		{"taken name", []string{"--synthetic-file", "manifest.json"}, "taken"},
	} {
		out := filepath.Join(t.TempDir(), "o")
		args := append([]string{"release", "--data", data, "--domain", domain, "--marginals", "1", "--epsilon", "1", "--out", out}, tc.args...)
		r := runBinary(t, "", args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: %s; want exit %d and %q", tc.name, r, ExitUsage, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: the output folder was created", tc.name)
		}
	}
	_ = io.Discard
}

// TestCSVReleaseReadsBack: a CSV release of a domain whose null token is
// "NA" writes nulls as empty fields, and its domain.json says so, so that
// synth inspect and synth eval read the release's own files.
func TestCSVReleaseReadsBack(t *testing.T) {
	data, domain := filepath.Join(rawDir, "adult-raw.csv"), filepath.Join(rawDir, "adult-raw-domain.json")
	out := filepath.Join(t.TempDir(), "out")
	r := inProcess(t, "release", "--data", data, "--domain", domain, "--marginals", "1", "--epsilon", "1", "--seed", "3",
		"--format", "csv", "--out", out, "--quiet")
	if r.code != ExitOK {
		t.Fatalf("release: %s", r)
	}
	dj, err := os.ReadFile(filepath.Join(out, "domain.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(dj), `"NA"`) {
		t.Errorf("domain.json keeps the null token \"NA\" the CSV does not use:\n%s", dj)
	}
	synth, odom := filepath.Join(out, "synthetic.csv"), filepath.Join(out, "domain.json")
	if r := inProcess(t, "inspect", "--domain", odom, "--data", synth); r.code != ExitOK || !strings.Contains(r.stdout, "validation: ok") {
		t.Errorf("inspect of the release's own files: %s", r)
	}
	if r := inProcess(t, "eval", "--data", synth, "--domain", odom, "--marginals", "1", "--synthetic", synth); r.code != ExitOK {
		t.Errorf("eval of the release's own files: %s", r)
	}
}
