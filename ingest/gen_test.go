package ingest

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// -update rewrites the generated files under testdata/ (the raw dataset,
// the Parquet cases of the bad-input corpus) and the golden files.
var update = flag.Bool("update", false, "rewrite generated test files and golden files")

// The raw test dataset: the first rawRows rows of the shipped adult-reduced
// table, decoded through a hand-written label map into strings, integers
// and reals. The labels follow the alphabetical order of the UCI Adult
// categories; they exist to exercise the categorical, integer, numeric and
// null paths end to end, not to document the original encoding.
const rawRows = 2000

var rawLabels = map[string][]string{
	"sex":            {"Female", "Male"},
	"race":           {"Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"},
	"marital-status": {"Divorced", "Married-AF-spouse", "Married-civ-spouse", "Married-spouse-absent", "Never-married", "Separated", "Widowed"},
	"occupation": {"?", "Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial", "Farming-fishing", "Handlers-cleaners",
		"Machine-op-inspct", "Other-service", "Priv-house-serv", "Prof-specialty", "Protective-serv", "Sales", "Tech-support", "Transport-moving"},
	"education": {"10th", "11th", "12th", "1st-4th", "5th-6th", "7th-8th", "9th", "Assoc-acdm", "Assoc-voc", "Bachelors",
		"Doctorate", "HS-grad", "Masters", "Preschool", "Prof-school", "Some-college"},
}

// Age is numeric with explicit, unequal bin edges; its raw values are the
// bin centres. Income is an integer in 0..99 (thousands) in buckets of 50:
// income>50K code c becomes a value in bucket c.
var rawAgeEdges = []float64{17, 20, 25, 30, 35, 40, 45, 50, 60, 70, 91}

const (
	rawIncomeWidth = 50
	rawNullToken   = "NA"
)

// rawNull reports whether row i (0-based) has its occupation replaced by a
// null: 40 rows in 2000, chosen by position, not by value.
func rawNull(i int) bool { return i%50 == 7 }

// rawName maps the encoded column names to the raw ones.
func rawName(encoded string) string {
	if encoded == "income>50K" {
		return "income"
	}
	return encoded
}

const rawDomain = `{"attributes": [
  {"name": "education", "type": "categorical", "values": ["10th", "11th", "12th", "1st-4th", "5th-6th", "7th-8th", "9th", "Assoc-acdm", "Assoc-voc", "Bachelors", "Doctorate", "HS-grad", "Masters", "Preschool", "Prof-school", "Some-college"]},
  {"name": "marital-status", "type": "categorical", "values": ["Divorced", "Married-AF-spouse", "Married-civ-spouse", "Married-spouse-absent", "Never-married", "Separated", "Widowed"]},
  {"name": "occupation", "type": "categorical", "values": ["?", "Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial", "Farming-fishing", "Handlers-cleaners", "Machine-op-inspct", "Other-service", "Priv-house-serv", "Prof-specialty", "Protective-serv", "Sales", "Tech-support", "Transport-moving"], "null": "NA"},
  {"name": "race", "type": "categorical", "values": ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"], "other": "Other"},
  {"name": "sex", "type": "categorical", "values": ["Female", "Male"]},
  {"name": "income", "type": "integer", "min": 0, "max": 99, "width": 50},
  {"name": "age", "type": "numeric", "edges": [17, 20, 25, 30, 35, 40, 45, 50, 60, 70, 91]}
]}
`

// encodedPrefix returns the header and the first n rows of the shipped
// adult-reduced table.
func encodedPrefix(t testing.TB, n int) ([]string, [][]int) {
	t.Helper()
	data, _ := shipped(t, "adult-reduced")
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows := make([][]int, n)
	for i := range rows {
		rows[i] = make([]int, len(recs[0]))
		for j, v := range recs[i+1] {
			if rows[i][j], err = strconv.Atoi(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	return recs[0], rows
}

// rawValue returns the raw text of code c of encoded column name at row i,
// and whether it is null.
func rawValue(name string, c, i int) (string, bool) {
	switch name {
	case "age":
		return strconv.FormatFloat((rawAgeEdges[c]+rawAgeEdges[c+1])/2, 'g', -1, 64), false
	case "income>50K":
		return strconv.Itoa(c*rawIncomeWidth + (i*7)%rawIncomeWidth), false
	case "occupation":
		if rawNull(i) {
			return rawNullToken, true
		}
	}
	return rawLabels[name][c], false
}

func TestGenerateTestdata(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite the generated files under testdata/")
	}
	header, rows := encodedPrefix(t, rawRows)
	dir := filepath.Join("testdata", "raw")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "adult-raw-domain.json"), []byte(rawDomain), 0o644); err != nil {
		t.Fatal(err)
	}

	// CSV: every value as text, nulls as the declared token.
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	names := make([]string, len(header))
	for j, h := range header {
		names[j] = rawName(h)
	}
	w.Write(names)
	rec := make([]string, len(header))
	for i, row := range rows {
		for j, c := range row {
			rec[j], _ = rawValue(header[j], c, i)
		}
		w.Write(rec)
	}
	w.Flush()
	if err := os.WriteFile(filepath.Join(dir, "adult-raw.csv"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	// Parquet: typed columns, nulls as Parquet nulls.
	fields := make([]arrow.Field, len(header))
	for j, h := range header {
		typ := arrow.DataType(arrow.BinaryTypes.String)
		switch h {
		case "age":
			typ = arrow.PrimitiveTypes.Float64
		case "income>50K":
			typ = arrow.PrimitiveTypes.Int64
		}
		fields[j] = arrow.Field{Name: rawName(h), Type: typ, Nullable: h == "occupation"}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i, row := range rows {
		for j, c := range row {
			v, null := rawValue(header[j], c, i)
			switch fb := b.Field(j).(type) {
			case *array.StringBuilder:
				if null {
					fb.AppendNull()
				} else {
					fb.Append(v)
				}
			case *array.Float64Builder:
				f, _ := strconv.ParseFloat(v, 64)
				fb.Append(f)
			case *array.Int64Builder:
				n, _ := strconv.ParseInt(v, 10, 64)
				fb.Append(n)
			}
		}
	}
	writeParquet(t, filepath.Join(dir, "adult-raw.parquet"), b.NewRecordBatch())

	// The Parquet cases of the bad-input corpus.
	badSchema := func(count bool) *arrow.Schema {
		f := []arrow.Field{
			{Name: "sex", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "race", Type: arrow.BinaryTypes.String},
			{Name: "age", Type: arrow.PrimitiveTypes.Int64},
			{Name: "income", Type: arrow.PrimitiveTypes.Float64},
			{Name: "code", Type: arrow.PrimitiveTypes.Int32},
			{Name: "job", Type: arrow.BinaryTypes.String, Nullable: true},
		}
		if count {
			f = append(f, arrow.Field{Name: "count", Type: arrow.PrimitiveTypes.Int64})
		}
		return arrow.NewSchema(f, nil)
	}
	type badRow struct {
		sex    *string
		income float64
		count  int64
	}
	str := func(s string) *string { return &s }
	bad := func(file string, count bool, rows ...badRow) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, badSchema(count))
		defer b.Release()
		for _, r := range rows {
			if r.sex == nil {
				b.Field(0).AppendNull()
			} else {
				b.Field(0).(*array.StringBuilder).Append(*r.sex)
			}
			b.Field(1).(*array.StringBuilder).Append("a")
			b.Field(2).(*array.Int64Builder).Append(30)
			b.Field(3).(*array.Float64Builder).Append(r.income)
			b.Field(4).(*array.Int32Builder).Append(1)
			b.Field(5).AppendNull() // job declares a null token
			if count {
				b.Field(6).(*array.Int64Builder).Append(r.count)
			}
		}
		writeParquet(t, filepath.Join("testdata", "bad", file), b.NewRecordBatch())
	}
	bad("null-undeclared.parquet", false, badRow{str("F"), 10, 0}, badRow{nil, 10, 0}, badRow{str("M"), 10, 0})
	bad("nan.parquet", false, badRow{str("F"), 10, 0}, badRow{str("M"), 20, 0}, badRow{str("M"), math.NaN(), 0})
	bad("negative-count.parquet", true, badRow{str("F"), 10, 3}, badRow{str("M"), 10, -4})
	fmt.Println("rewrote testdata/raw and the Parquet cases of testdata/bad")
}

func writeParquet(t *testing.T, path string, rec arrow.RecordBatch) {
	t.Helper()
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(rec.Schema(), &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
