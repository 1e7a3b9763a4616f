package main

// End-to-end tests: they build the synth binary once and run it as a user
// would, then check every output with independent readers (parquet-go,
// Arrow's pqarrow, ingest, query) instead of the code that wrote it.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/eval"
	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/release"
	"github.com/dpsynth/synth/solvers"
	"github.com/dpsynth/synth/universe"
)

// binDir holds the synth binary built for this test run (removed by
// TestMain). The binary is built on first use, once, so that a run of
// unrelated tests (go test -run TestInspect) does not pay for the link.
var (
	binDir   string
	binOnce  sync.Once
	binPath  string
	binError error
)

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "synth-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// synthBinary returns the path of the synth binary built from this package.
func synthBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		path := filepath.Join(binDir, "synth")
		cmd := exec.Command("go", "build", "-o", path, ".")
		cmd.Dir = pkgDir
		if out, err := cmd.CombinedOutput(); err != nil {
			binError = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		binPath = path
	})
	if binError != nil {
		t.Fatal(binError)
	}
	return binPath
}

// result is one run of the binary.
type result struct {
	code           int // -1 if killed by a signal
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// runBinary runs synth with args in dir (the test's working directory if
// empty) and waits at most two minutes.
func runBinary(t *testing.T, dir string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, synthBinary(t), args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("synth %s: still running after 2 minutes", strings.Join(args, " "))
	}
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("synth %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// extractTo writes a shipped dataset into dir and returns its files.
func extractTo(t *testing.T, name, dir string) (data, domain string) {
	t.Helper()
	ds, err := datasets.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	data, domain, err = ds.Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	return data, domain
}

// jsonLine parses stdout that must be exactly one JSON object on one line.
func jsonLine(t *testing.T, stdout string, v any) {
	t.Helper()
	if strings.Count(stdout, "\n") != 1 || !strings.HasSuffix(stdout, "\n") {
		t.Fatalf("--json printed %d lines, want exactly one:\n%s", strings.Count(stdout, "\n"), stdout)
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("--json line %q: %v", stdout, err)
	}
}

// logRecords parses stderr written with --log-format json: every line must
// be a JSON object.
func logRecords(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for line := range strings.Lines(stderr) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("--log-format json: stderr line %q is not JSON: %v", line, err)
		}
		recs = append(recs, m)
	}
	return recs
}

// wantFiles checks that dir holds exactly the named files (no temporary
// files, nothing else).
func wantFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(names))
	if !slices.Equal(got, want) {
		t.Errorf("%s holds %q, want %q", dir, got, want)
	}
}

// near reports whether a and b agree within tol, absolutely or relatively.
func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestReleaseEndToEnd releases adult-reduced with every registered solver at
// ε = 1 on all 3-way marginals (seeded) and checks the four outputs against
// independent recomputations; then synth eval on the released file must
// reproduce the report's errors.
func TestReleaseEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every solver on adult-reduced (a few seconds each); skipped with -short")
	}
	dir := t.TempDir()
	data, domain := extractTo(t, "adult-reduced", dir)
	dom, err := universe.LoadDomain(domain)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := query.KWay(dom, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	counts, _, err := ingest.ReadFile(context.Background(), data, dom, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	truth := wl.AnswerCounts(counts, make([]float64, wl.M()))

	for _, name := range solvers.Names() {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, "release-"+name)
			args := []string{"release", "--data", data, "--domain", domain, "--marginals", "3",
				"--epsilon", "1", "--solver", name, "--seed", "11", "--out", out,
				"--json", "--verbose", "--log-format", "json"}
			r := runBinary(t, "", args...)
			if r.code != ExitOK {
				t.Fatalf("synth %s: %s", strings.Join(args, " "), r)
			}
			var oc release.Outcome
			jsonLine(t, r.stdout, &oc)
			// Under add/remove (the default) the rows are the noisy n̂.
			n := float64(counts.Total())
			if oc.Dir != out || oc.Solver != name || math.Abs(float64(oc.Rows)-n) > 0.01*n || oc.Records != counts.Total() || oc.Randomness != "seeded" {
				t.Errorf("outcome = %+v, want dir %s, solver %s, %d records and as many rows within 1%%, seeded", oc, out, name, counts.Total())
			}
			// The charges the CLI announced before reading the data.
			announced := -1
			for _, rec := range logRecords(t, r.stderr) {
				if rec["msg"] == "budget checked" {
					announced = int(rec["charges"].(float64))
				}
			}
			if announced < 1 {
				t.Fatalf("no \"budget checked\" log record with charges on stderr:\n%s", r.stderr)
			}

			wantFiles(t, out, release.Outputs...)
			man := checkManifest(t, out, 1, 1e-9, &oc, announced)
			kv := checkParquet(t, filepath.Join(out, release.SyntheticFile), dom, oc.Rows, nil)
			if b, _ := os.ReadFile(filepath.Join(out, release.ManifestFile)); kv != string(b) {
				t.Errorf("the manifest in the Parquet metadata differs from manifest.json")
			}
			if want := sha256Of(t, domain); len(man.Inputs) == 0 || man.Inputs[0].Role != "domain" || man.Inputs[0].SHA256 != want {
				t.Errorf("manifest inputs = %+v, want the domain first with SHA-256 %s", man.Inputs, want)
			}
			rep := checkReport(t, out, dom, wl, truth)
			checkHTML(t, filepath.Join(out, release.ReportHTMLFile))

			// synth eval on the released file reproduces the report.
			evalOut := filepath.Join(dir, "eval-"+name)
			r = runBinary(t, "", "eval", "--data", data, "--domain", domain, "--marginals", "3",
				"--synthetic", filepath.Join(out, release.SyntheticFile), "--out", evalOut, "--json", "--quiet")
			if r.code != ExitOK || r.stderr != "" {
				t.Fatalf("synth eval: %s", r)
			}
			var eo release.EvalOutcome
			jsonLine(t, r.stdout, &eo)
			if !metricsNear(eo.Errors, rep.Errors.Synthetic, 1e-12) {
				t.Errorf("eval errors %+v, report errors %+v", eo.Errors, rep.Errors.Synthetic)
			}
			wantFiles(t, evalOut, release.ReportJSONFile, release.ReportHTMLFile)
			erep := readReport(t, filepath.Join(evalOut, release.ReportJSONFile))
			if !metricsNear(erep.Errors.Synthetic, rep.Errors.Synthetic, 1e-12) || len(erep.Queries) != len(rep.Queries) {
				t.Fatalf("eval report.json errors %+v (%d queries), release report %+v (%d queries)",
					erep.Errors.Synthetic, len(erep.Queries), rep.Errors.Synthetic, len(rep.Queries))
			}
			for j, q := range erep.Queries {
				if p := rep.Queries[j]; q.Label != p.Label || !near(q.True, p.True, 1e-12) || !near(q.Synthetic, p.Synthetic, 1e-12) {
					t.Fatalf("eval query %d = %+v, release report %+v", j, q, p)
				}
			}
			// The same one-way tables and baseline from the rows read back.
			if len(erep.OneWay) != len(rep.OneWay) || erep.Baseline == nil || rep.Baseline == nil ||
				!metricsNear(erep.Baseline.Errors, rep.Baseline.Errors, 1e-12) {
				t.Fatalf("eval one-way tables %d, baseline %+v; release %d, %+v", len(erep.OneWay), erep.Baseline, len(rep.OneWay), rep.Baseline)
			}
			for i, o := range erep.OneWay {
				for c := range o.Synthetic {
					if !near(o.Synthetic[c], rep.OneWay[i].Synthetic[c], 1e-12) {
						t.Fatalf("eval one-way %s code %d = %v, release %v", o.Attribute, c, o.Synthetic[c], rep.OneWay[i].Synthetic[c])
					}
				}
			}
		})
	}
}

// TestReleaseRawEndToEnd releases a raw table (categorical strings, integer
// buckets, numeric bins, a nullable column) through its hand-written domain
// and checks the Parquet types with both readers, the report against a
// recomputation and the privacy line the CLI prints against the manifest.
func TestReleaseRawEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	raw := filepath.Join(pkgDir, "..", "..", "ingest", "testdata", "raw")
	data, domain := filepath.Join(raw, "adult-raw.csv"), filepath.Join(raw, "adult-raw-domain.json")
	dom, err := universe.LoadDomain(domain)
	if err != nil {
		t.Fatal(err)
	}
	// The columns the test relies on: every kind, and one nullable.
	kinds := map[universe.Kind]bool{}
	nullable := 0
	for _, a := range dom.Attrs() {
		kinds[a.Kind] = true
		if a.Nullable {
			nullable++
		}
	}
	if !kinds[universe.Categorical] || !kinds[universe.Integer] || !kinds[universe.Numeric] || nullable != 1 {
		t.Fatalf("%s: want categorical, integer and numeric attributes and one nullable", domain)
	}
	wl, err := query.KWay(dom, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	counts, _, err := ingest.ReadFile(context.Background(), data, dom, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	truth := wl.AnswerCounts(counts, make([]float64, wl.M()))

	out := filepath.Join(t.TempDir(), "raw")
	const rows = 5000 // more rows than records: no extra cost
	r := runBinary(t, "", "release", "--data", data, "--domain", domain, "--marginals", "2",
		"--epsilon", "1", "--delta", "1e-8", "--seed", "5", "--rows", strconv.Itoa(rows),
		"--numeric-values", "uniform", "--out", out)
	if r.code != ExitOK {
		t.Fatalf("release: %s", r)
	}
	// What the CLI printed, human form.
	m := regexp.MustCompile(`privacy: \(ε = ([^,]+), δ = ([^)]+)\) spent of \(ε = 1, δ = 1e-08\)`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no privacy line in the output:\n%s", r)
	}
	if !strings.Contains(r.stderr, "synth: warning: --seed given") {
		t.Errorf("stderr %q does not warn about the seed", r.stderr)
	}
	wantFiles(t, out, release.Outputs...)
	man := checkManifest(t, out, 1, 1e-8, nil, -1)
	if got := strconv.FormatFloat(man.Privacy.Total.Epsilon, 'g', 6, 64); m[1] != got {
		t.Errorf("printed ε spent %s, manifest total %s", m[1], got)
	}
	if got := strconv.FormatFloat(man.Privacy.Total.Delta, 'g', -1, 64); m[2] != got {
		t.Errorf("printed δ spent %s, manifest total %s", m[2], got)
	}
	if man.Output.Rows != rows || man.Output.NumericValues != "uniform" || man.Output.IntegerValues != "point" {
		t.Errorf("manifest output = %+v, want %d rows, uniform numeric values, point integers", man.Output, rows)
	}
	checkParquet(t, filepath.Join(out, release.SyntheticFile), dom, rows, func(t *testing.T, a *universe.Attribute, col arrow.Array) {
		switch a.Kind {
		case universe.Integer:
			// Point values: each bucket's middle integer (0..49 → 24,
			// 50..99 → 74).
			for i, v := range col.(*array.Int64).Int64Values() {
				if v%50 != 24 {
					t.Fatalf("integer column %q row %d = %d, want a bucket's middle integer (24 or 74)", a.Name, i, v)
				}
			}
		case universe.Numeric:
			// Uniform values: inside the declared range, and varied.
			vals := col.(*array.Float64).Float64Values()
			distinct := map[float64]bool{}
			for i, v := range vals {
				if !(v >= 17 && v <= 91) {
					t.Fatalf("numeric column %q row %d = %v, outside [17, 91]", a.Name, i, v)
				}
				distinct[v] = true
			}
			if len(distinct) < len(vals)/2 {
				t.Errorf("numeric column %q has %d distinct values in %d rows: not uniform draws", a.Name, len(distinct), len(vals))
			}
		}
	})
	checkReport(t, out, dom, wl, truth)
}

// sha256Of returns the hex SHA-256 of a file.
func sha256Of(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// checkManifest reads manifest.json and checks its privacy statement: the
// total equals the budget (within 1e-6, never above it), the listed charges
// recompose in a fresh ledger to exactly that total, and they agree with
// what the CLI printed (oc, if given) and announced (charges, if >= 0).
func checkManifest(t *testing.T, out string, eps, delta float64, oc *release.Outcome, charges int) *release.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, release.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	man, err := release.ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	p := man.Privacy
	if p.Budget.Epsilon != eps || p.Budget.Delta != delta {
		t.Errorf("manifest budget = %+v, want ε = %v, δ = %v", p.Budget, eps, delta)
	}
	if !(p.Total.Epsilon <= eps && p.Total.Epsilon >= eps*(1-1e-6)) || p.Total.Delta > delta {
		t.Errorf("manifest total = (ε = %v, δ = %v), want the budget (ε = %v, δ = %v) used and not exceeded",
			p.Total.Epsilon, p.Total.Delta, eps, delta)
	}
	// Recompose the listed charges.
	ledger, err := privacy.NewLedger(privacy.Budget{Eps: eps, Delta: delta}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := make([]privacy.Charge, len(p.Charges))
	for i, c := range p.Charges {
		switch {
		case c.Rho != nil && c.Epsilon == nil && c.Delta == nil:
			cs[i] = privacy.Charge{Label: c.Label, Cost: privacy.Cost{Kind: privacy.ZCDP, Rho: *c.Rho}}
		case c.Rho != nil && c.Epsilon != nil && c.Delta == nil:
			cs[i] = privacy.Charge{Label: c.Label, Cost: privacy.Cost{Kind: privacy.Pure, Rho: *c.Rho, Eps: *c.Epsilon}}
		case c.Rho == nil && c.Epsilon != nil && c.Delta != nil:
			cs[i] = privacy.Charge{Label: c.Label, Cost: privacy.Cost{Kind: privacy.Approx, Eps: *c.Epsilon, Delta: *c.Delta}}
		default:
			t.Fatalf("manifest charge %d %+v: not a zCDP, pure or approximate cost", i, c)
		}
	}
	if err := ledger.Charge(cs...); err != nil {
		t.Fatalf("the manifest's charges do not fit its budget: %v", err)
	}
	spent := ledger.Spent()
	if !near(spent.Eps, p.Total.Epsilon, 1e-12) || spent.Delta != p.Total.Delta {
		t.Errorf("charges recompose to (ε = %v, δ = %v), manifest total (ε = %v, δ = %v)", spent.Eps, spent.Delta, p.Total.Epsilon, p.Total.Delta)
	}
	if rho := 0.0; p.Total.Rho != nil {
		rho = *p.Total.Rho
		if !near(spent.Rho, rho, 1e-12) {
			t.Errorf("charges recompose to ρ = %v, manifest total ρ = %v", spent.Rho, rho)
		}
	}
	if charges >= 0 && len(p.Charges) != charges {
		t.Errorf("manifest lists %d charges, the CLI announced %d", len(p.Charges), charges)
	}
	if oc != nil {
		rho := 0.0
		if p.Total.Rho != nil {
			rho = *p.Total.Rho
		}
		if oc.Spent != p.Total.Epsilon || oc.Rho != rho || oc.Epsilon != eps || oc.Delta != delta {
			t.Errorf("printed ε spent %v, ρ %v of (%v, %v); manifest total ε %v, ρ %v", oc.Spent, oc.Rho, oc.Epsilon, oc.Delta, p.Total.Epsilon, rho)
		}
		if man.Output.Rows != oc.Rows || man.Solver.Name != oc.Solver || man.Randomness.Source != oc.Randomness {
			t.Errorf("manifest output %+v, solver %+v, randomness %+v; printed %+v", man.Output, man.Solver, man.Randomness, oc)
		}
	}
	if man.Output.Format == "parquet" && !slices.Equal(man.Output.Files, release.Outputs) { // other formats: their tests check
		t.Errorf("manifest files = %q, want %q", man.Output.Files, release.Outputs)
	}
	return man
}

// checkParquet reads the synthetic file with parquet-go and with Arrow's
// pqarrow: both must see the domain's columns in order with the declared
// types (dictionary-encoded strings for categorical, INT64 for integer and
// encoded, DOUBLE for numeric; optional exactly for nullable attributes)
// and rows rows. check, if set, inspects each Arrow column. It returns the
// manifest stored in the key-value metadata.
func checkParquet(t *testing.T, path string, dom *universe.Domain, rows int64, check func(*testing.T, *universe.Attribute, arrow.Array)) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// parquet-go.
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("parquet-go: %v", err)
	}
	if f.NumRows() != rows {
		t.Errorf("parquet-go: %d rows, want %d", f.NumRows(), rows)
	}
	kv, ok := f.Lookup(release.ManifestKey)
	if !ok {
		t.Errorf("parquet-go: no %q in the key-value metadata", release.ManifestKey)
	}
	leaves := f.Metadata().Schema[1:]
	if len(leaves) != dom.Len() {
		t.Fatalf("parquet-go: %d columns, want %d", len(leaves), dom.Len())
	}
	for i, a := range dom.Attrs() {
		el := leaves[i]
		want := format.Int64
		switch a.Kind {
		case universe.Categorical:
			want = format.ByteArray
		case universe.Numeric:
			want = format.Double
		}
		rep := format.Required
		if a.Nullable {
			rep = format.Optional
		}
		if el.Name != a.Name || el.Type.V != want || el.RepetitionType.V != rep {
			t.Errorf("parquet-go column %d = %s %v %v, want %s %v %v", i, el.Name, el.Type.V, el.RepetitionType.V, a.Name, want, rep)
		}
		if a.Kind == universe.Categorical {
			if el.LogicalType.String() != "STRING" {
				t.Errorf("parquet-go column %q: logical type %v, want STRING", a.Name, el.LogicalType)
			}
			for g, rg := range f.Metadata().RowGroups {
				enc := rg.Columns[i].MetaData.Encoding
				if !slices.Contains(enc, format.RLEDictionary) && !slices.Contains(enc, format.PlainDictionary) {
					t.Errorf("parquet-go row group %d column %q: encodings %v, not dictionary-encoded", g, a.Name, enc)
				}
			}
		}
	}

	// Arrow.
	pf, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("Arrow: %v", err)
	}
	defer pf.Close()
	if v := pf.MetaData().KeyValueMetadata().FindValue(release.ManifestKey); v == nil || *v != kv {
		t.Errorf("Arrow: the %q metadata differs from parquet-go's", release.ManifestKey)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("Arrow: %v", err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("Arrow: %v", err)
	}
	defer tbl.Release()
	if tbl.NumRows() != rows {
		t.Errorf("Arrow: %d rows, want %d", tbl.NumRows(), rows)
	}
	sc := tbl.Schema()
	if sc.NumFields() != dom.Len() {
		t.Fatalf("Arrow: %d fields, want %d", sc.NumFields(), dom.Len())
	}
	for i, a := range dom.Attrs() {
		want := arrow.DataType(arrow.PrimitiveTypes.Int64)
		switch a.Kind {
		case universe.Categorical:
			want = arrow.BinaryTypes.String
		case universe.Numeric:
			want = arrow.PrimitiveTypes.Float64
		}
		fd := sc.Field(i)
		if fd.Name != a.Name || !arrow.TypeEqual(fd.Type, want) || fd.Nullable != a.Nullable {
			t.Errorf("Arrow field %d = %s %v nullable=%v, want %s %v nullable=%v", i, fd.Name, fd.Type, fd.Nullable, a.Name, want, a.Nullable)
			continue
		}
		nulls := 0
		for _, chunk := range tbl.Column(i).Data().Chunks() {
			nulls += chunk.NullN()
			if check != nil {
				check(t, a, chunk)
			}
		}
		if nulls > 0 && !a.Nullable {
			t.Errorf("Arrow column %q: %d nulls in a required column", a.Name, nulls)
		}
	}
	return kv
}

// reportFile is the part of report.json the tests read.
type reportFile struct {
	Schema  string `json:"schema"`
	Privacy string `json:"privacy"`
	Rows    struct {
		Data      int64 `json:"data"`
		Synthetic int64 `json:"synthetic"`
	} `json:"rows"`
	Errors struct {
		Synthetic eval.Metrics `json:"synthetic"`
	} `json:"errors"`
	Baseline *struct {
		Errors eval.Metrics `json:"errors"`
	} `json:"baseline"`
	OneWay []struct {
		Attribute string    `json:"attribute"`
		Synthetic []float64 `json:"synthetic"`
	} `json:"one_way"`
	Queries []struct {
		Label     string  `json:"label"`
		True      float64 `json:"true"`
		Synthetic float64 `json:"synthetic"`
		AbsError  float64 `json:"abs_error"`
	} `json:"queries"`
}

func readReport(t *testing.T, path string) *reportFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r reportFile
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if r.Schema != "synth.report/v1" || r.Privacy != eval.InternalStamp {
		t.Errorf("%s: schema %q, privacy %q", path, r.Schema, r.Privacy)
	}
	return &r
}

// checkReport recomputes the workload errors from the released Parquet
// file (read back with ingest, answered with query) and compares them with
// report.json: each query's answers and the max, mean, RMSE and p95, to
// 1e-12.
func checkReport(t *testing.T, out string, dom *universe.Domain, wl *query.Workload, truth []float64) *reportFile {
	t.Helper()
	rep := readReport(t, filepath.Join(out, release.ReportJSONFile))
	syn, _, err := ingest.ReadFile(context.Background(), filepath.Join(out, release.SyntheticFile), dom, ingest.Options{})
	if err != nil {
		t.Fatalf("ingest of the synthetic file: %v", err)
	}
	answers := wl.AnswerCounts(syn, make([]float64, wl.M()))
	errs := eval.AbsErrors(answers, truth, make([]float64, wl.M()))
	want := eval.Summarize(errs)
	if !metricsNear(rep.Errors.Synthetic, want, 1e-12) {
		t.Errorf("report errors %+v, recomputed from the Parquet file %+v", rep.Errors.Synthetic, want)
	}
	if rep.Rows.Synthetic != syn.Total() {
		t.Errorf("report synthetic rows %d, file %d", rep.Rows.Synthetic, syn.Total())
	}
	if len(rep.Queries) != wl.M() {
		t.Fatalf("report has %d queries, workload %d", len(rep.Queries), wl.M())
	}
	for j, q := range rep.Queries {
		if q.Label != wl.Label(j) || !near(q.True, truth[j], 1e-12) || !near(q.Synthetic, answers[j], 1e-12) || !near(q.AbsError, errs[j], 1e-12) {
			t.Fatalf("report query %d = %+v, recomputed %s true %v synthetic %v error %v", j, q, wl.Label(j), truth[j], answers[j], errs[j])
		}
	}
	return rep
}

// externalRef matches anything in HTML that could load or link a resource.
var externalRef = regexp.MustCompile(`(?i)https?:|//|src\s*=|@import|url\(|<script|<link|<img|<iframe|<object|<embed|href\s*=`)

func metricsNear(a, b eval.Metrics, tol float64) bool {
	return near(a.Max, b.Max, tol) && near(a.Mean, b.Mean, tol) && near(a.RMSE, b.RMSE, tol) && near(a.P95, b.P95, tol)
}

// checkHTML checks that report.html is self-contained, carries the internal
// stamp and holds its plots.
func checkHTML(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(strings.ToLower(s), eval.InternalStamp) { // capitalised in the banner
		t.Errorf("%s: no %q stamp", path, eval.InternalStamp)
	}
	if n := strings.Count(s, "<svg"); n < 3 {
		t.Errorf("%s: %d inline SVG plots, want at least 3", path, n)
	}
	if loc := externalRef.FindStringIndex(s); loc != nil {
		t.Errorf("%s: external reference or script %q", path, s[loc[0]:loc[1]])
	}
}
