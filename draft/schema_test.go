package draft

import (
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dpsynth/synth/privacy"
)

// TestSchemaOnlyReadsNoRow: a CSV whose second line is malformed (an
// unclosed quote, then a line of the wrong length) drafts from its header
// with ε = 0, and fails to draft with ε > 0, which reads the rows.
func TestSchemaOnlyReadsNoRow(t *testing.T) {
	dir := t.TempDir()
	body := "name,age,city\n\"broken,1\nx,y\n"
	plain := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(plain, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(dir, "bad.csv.gz")
	f, _ := os.Create(gz)
	zw := gzip.NewWriter(f)
	zw.Write([]byte("\xef\xbb\xbf" + body)) // with a byte order mark
	zw.Close()
	f.Close()
	for _, p := range []string{plain, gz} {
		d, err := File(context.Background(), p, Settings{}, nil)
		if err != nil {
			t.Fatalf("%s: schema-only draft: %v", p, err)
		}
		if d.Spent != privacy.ApproxCost(0, 0) {
			t.Errorf("schema-only spent %v", d.Spent)
		}
		fd := parseDomain(t, d.JSON)
		if fd.Draft.Epsilon != 0 || fd.Draft.Delta != 0 || len(fd.Attributes) != 3 {
			t.Fatalf("%s: %s", p, d.JSON)
		}
		for i, a := range fd.Attributes {
			if a.Name != []string{"name", "age", "city"}[i] || a.Type != "categorical" || len(a.Values) != 1 || a.Values[0] != FillMe || a.Null != nil {
				t.Errorf("%s: attribute %+v", p, a)
			}
		}
		if !hasNote(d, "no row was read") || !hasNote(d, `column "age": text: replace the placeholder`) {
			t.Errorf("notes %q", d.Notes)
		}
		if _, err := File(context.Background(), p, Settings{Epsilon: 1, Delta: 1e-9}, privacy.NewSeeded(1)); err == nil {
			t.Errorf("%s: a DP draft read the malformed rows without error", p)
		}
	}
	if _, err := File(context.Background(), filepath.Join(dir, "x.txt"), Settings{}, nil); err == nil {
		t.Error("a .txt file was accepted")
	}
}

// typedParquet writes a Parquet file of n rows with typed columns and
// returns its path.
func typedParquet(t testing.TB, n int) string {
	t.Helper()
	mem := memory.DefaultAllocator
	dec := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	ts := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "user", Type: arrow.PrimitiveTypes.Int64},
		{Name: "member", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "kids", Type: arrow.PrimitiveTypes.Int32},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "amount", Type: dec},
		{Name: "born", Type: arrow.FixedWidthTypes.Date32},
		{Name: "seen", Type: ts},
		{Name: "city", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String)},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	g := privacy.NewSeeded(5)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i / 3))
		if i%10 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.BooleanBuilder).Append(g.Bit())
		}
		b.Field(2).(*array.Int32Builder).Append(int32(g.Uint64N(6)))
		if i%20 == 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Float64Builder).Append(50 + 10*g.NormFloat64())
		}
		b.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(g.Uint64N(100000))))
		b.Field(5).(*array.Date32Builder).Append(arrow.Date32FromTime(time.Date(1940, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(g.Uint64N(60*365)))))
		v, _ := arrow.TimestampFromTime(base.Add(time.Duration(g.Uint64N(365*24*3600))*time.Second), arrow.Microsecond)
		b.Field(6).(*array.TimestampBuilder).Append(v)
		b.Field(7).(*array.StringBuilder).Append([]string{"Lyon", "Paris", "Nice"}[g.Uint64N(3)])
		lb := b.Field(8).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).Append("t")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	p := filepath.Join(t.TempDir(), "typed.parquet")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParquet(t *testing.T) {
	p := typedParquet(t, 6000)
	want := map[string]string{"member": "boolean", "kids": "integer", "score": "numeric", "amount": "numeric",
		"born": "date", "seen": "timestamp", "city": "categorical"}
	// Schema only: kinds from the schema, placeholders, typed nulls "" for
	// nullable columns, the list column left out.
	d, err := File(context.Background(), p, Settings{PrivacyUnit: "user"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := parseDomain(t, d.JSON)
	if f.Draft.PrivacyUnit != "user" || f.Draft.MaxRowsPerUnit != 1 || len(f.Attributes) != len(want) {
		t.Fatalf("schema only: %s", d.JSON)
	}
	for _, a := range f.Attributes {
		nullable := a.Name == "member" || a.Name == "score" || a.Name == "city"
		if a.Type != want[a.Name] || (a.Null != nil) != nullable {
			t.Errorf("schema only: %s: %s null %v", a.Name, a.Type, a.Null)
		}
	}
	if !hasNote(d, `column "tags": type list<`) || !hasNote(d, "is not drafted") || !hasNote(d, "bounds are placeholders") {
		t.Errorf("schema only notes %q", d.Notes)
	}
	// DP draft, 3 rows per user, K = 3.
	d, err = File(context.Background(), p, Settings{Epsilon: 4, Delta: 1e-9, PrivacyUnit: "user", MaxRowsPerUnit: 3}, privacy.NewSeeded(2))
	if err != nil {
		t.Fatal(err)
	}
	f = parseDomain(t, d.JSON)
	for _, a := range f.Attributes {
		if a.Type != want[a.Name] {
			t.Errorf("%s: %s, want %s", a.Name, a.Type, want[a.Name])
		}
		if (a.Name == "member" || a.Name == "score") && (a.Null == nil || *a.Null != "") {
			t.Errorf("%s: null %v, want \"\"", a.Name, a.Null)
		}
		switch a.Name {
		case "kids":
			if *a.Min > 0 || *a.Max < 5 || *a.Max > 20 {
				t.Errorf("kids: [%d, %d]", *a.Min, *a.Max)
			}
		case "score":
			if a.Lower.(float64) > 30 || a.Upper.(float64) < 70 {
				t.Errorf("score: %v..%v", a.Lower, a.Upper)
			}
		case "amount":
			if a.Lower.(float64) != 0 || a.Upper.(float64) < 980 || a.Upper.(float64) > 2000 {
				t.Errorf("amount: %v..%v", a.Lower, a.Upper)
			}
		case "born":
			if a.Lower.(string) > "1941-01-01" || a.Upper.(string) < "1998-12-31" {
				t.Errorf("born: %v..%v", a.Lower, a.Upper)
			}
		case "seen":
			if a.Lower.(string) > "2024-01-08T00:00:00Z" || a.Upper.(string) < "2024-12-24T00:00:00Z" || a.TimeZone != "UTC" {
				t.Errorf("seen: %v..%v %s", a.Lower, a.Upper, a.TimeZone)
			}
		case "city":
			if len(a.Values) != 4 || a.Null != nil {
				t.Errorf("city: %q null %v", a.Values, a.Null)
			}
		}
	}
}
