package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// timeKindsDomain is a hand-written domain of a raw table with an ISO date,
// an RFC 3339 timestamp, a boolean, a nullable category and an amount.
const timeKindsDomain = `{"attributes": [
  {"name": "visit", "type": "date", "lower": "2023-01-01", "upper": "2024-12-31", "bin": "quarter"},
  {"name": "seen", "type": "timestamp", "lower": "2024-03-01T00:00:00Z", "upper": "2024-04-01T00:00:00Z", "bin": "week", "timezone": "Europe/Paris"},
  {"name": "member", "type": "boolean"},
  {"name": "plan", "type": "categorical", "values": ["basic", "plus", "pro"], "null": ""},
  {"name": "amount", "type": "numeric", "lower": 0, "upper": 500, "bins": 10}
]}`

// timeKindsTable writes the same 3,000 generated rows as CSV (text) and as
// Parquet (DATE, TIMESTAMP in UTC, BOOLEAN, a nullable string, DECIMAL).
func timeKindsTable(t *testing.T, dir string) (csvPath, parquetPath, domainPath string) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 11)) // test data, not a release
	const n = 3000
	visitLo := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	seenLo := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	plans := []string{"basic", "plus", "pro", ""}

	sc := arrow.NewSchema([]arrow.Field{
		{Name: "visit", Type: arrow.FixedWidthTypes.Date32},
		{Name: "seen", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
		{Name: "member", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "plan", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 7, Scale: 2}},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	recs := [][]string{{"visit", "seen", "member", "plan", "amount"}}
	for i := range n {
		visit := visitLo.AddDate(0, 0, r.IntN(731))
		seen := seenLo.Add(time.Duration(r.Int64N(int64(31 * 24 * time.Hour))))
		seen = seen.Truncate(time.Millisecond)
		member := r.IntN(3) == 0
		plan := plans[r.IntN(len(plans))]
		if member && r.IntN(2) == 0 {
			plan = "pro"
		}
		cents := r.Int64N(50001)
		b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(visit))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(seen.UnixMilli()))
		b.Field(2).(*array.BooleanBuilder).Append(member)
		if plan == "" {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.StringBuilder).Append(plan)
		}
		b.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(cents))
		seenText := seen.Format(time.RFC3339Nano)
		if i%2 == 0 { // a wall-clock time in Paris, without an offset
			seenText = seen.In(mustZone(t, "Europe/Paris")).Format("2006-01-02 15:04:05.000")
		}
		memberText := map[bool][]string{true: {"yes", "TRUE", "t"}, false: {"no", "False", "f"}}[member][i%3]
		recs = append(recs, []string{visit.Format(time.DateOnly), seenText, memberText, plan, fmt.Sprintf("%d.%02d", cents/100, cents%100)})
	}
	rec := b.NewRecordBatch()
	defer rec.Release()

	csvPath = filepath.Join(dir, "visits.csv")
	f, err := os.Create(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := csv.NewWriter(f).WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	f.Close()

	parquetPath = filepath.Join(dir, "visits.parquet")
	f, err = os.Create(parquetPath)
	if err != nil {
		t.Fatal(err)
	}
	tbl := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer tbl.Release()
	if err := pqarrow.WriteTable(tbl, f, 1024, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	f.Close()

	domainPath = filepath.Join(dir, "visits-domain.json")
	if err := os.WriteFile(domainPath, []byte(timeKindsDomain), 0o644); err != nil {
		t.Fatal(err)
	}
	return csvPath, parquetPath, domainPath
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	z, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// duckdb reads a file with DuckDB's Node client (cmd/synth/testdata/duckdb,
// installed by .ci/run) and returns its columns with DuckDB's types, its
// row count and the result of query. Outside CI the test is skipped when
// node or the client is missing; under CI it fails.
func duckdb(t *testing.T, path, query string) (cols [][2]string, rows int, result [][]any) {
	t.Helper()
	dir := filepath.Join(pkgDir, "testdata", "duckdb")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("DuckDB's Node client is needed (npm ci --prefix cmd/synth/testdata/duckdb): %v", err)
		}
		t.Skipf("DuckDB's Node client is not installed (npm ci --prefix cmd/synth/testdata/duckdb): %v", err)
	}
	out, err := exec.Command(node, filepath.Join(dir, "readback.mjs"), path, query).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("duckdb %s: %v\n%s", path, err, stderr)
	}
	var v struct {
		Columns [][2]string `json:"columns"`
		Rows    int         `json:"rows"`
		Result  [][]any     `json:"result"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("duckdb output %q: %v", out, err)
	}
	return v.Columns, v.Rows, v.Result
}

// TestTimeKindsEndToEnd releases the table with dates, timestamps and
// booleans from CSV and from typed Parquet, writes Parquet and CSV, and
// reads each release back with DuckDB's own types.
func TestTimeKindsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	dir := t.TempDir()
	csvPath, parquetPath, domainPath := timeKindsTable(t, dir)
	wantTypes := [][2]string{{"visit", "DATE"}, {"seen", "TIMESTAMP WITH TIME ZONE"}, {"member", "BOOLEAN"}, {"plan", "VARCHAR"}, {"amount", "DOUBLE"}}
	const check = `SELECT min(visit) >= DATE '2023-01-01' AND max(visit) <= DATE '2024-12-31',
	  min(seen) >= TIMESTAMPTZ '2024-03-01 00:00:00+00' AND max(seen) <= TIMESTAMPTZ '2024-04-01 00:00:00+00',
	  count(DISTINCT member), count(*) FILTER (WHERE plan IS NULL) > 0 FROM t`
	for _, c := range []struct{ name, data, format, file string }{
		{"csv-to-parquet", csvPath, "parquet", "synthetic.parquet"},
		{"parquet-to-parquet", parquetPath, "parquet", "synthetic.parquet"},
		{"parquet-to-csv", parquetPath, "csv", "synthetic.csv"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name)
			res := runBinary(t, "", "release", "--data", c.data, "--domain", domainPath, "--marginals", "2",
				"--epsilon", "1", "--seed", "5", "--format", c.format, "--bins", "uniform", "--out", out)
			if res.code != ExitOK {
				t.Fatalf("release: %s", res)
			}
			cols, rows, result := duckdb(t, filepath.Join(out, c.file), check)
			if !slices.Equal(cols, wantTypes) {
				t.Errorf("DuckDB reads the columns as %v, want %v", cols, wantTypes)
			}
			if rows < 2500 || rows > 3500 {
				t.Errorf("DuckDB reads %d rows, want about 3,000", rows)
			}
			if len(result) != 1 || fmt.Sprint(result[0]) != "[true true 2 true]" {
				t.Errorf("DuckDB: bounds, booleans, nulls = %v, want [true true 2 true]", result)
			}
			man, err := os.ReadFile(filepath.Join(out, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Output struct {
					TimeValues string `json:"time_values"`
				} `json:"output"`
			}
			if err := json.Unmarshal(man, &m); err != nil || m.Output.TimeValues != "uniform" {
				t.Errorf("manifest output.time_values = %q (%v), want uniform", m.Output.TimeValues, err)
			}
		})
	}
}
