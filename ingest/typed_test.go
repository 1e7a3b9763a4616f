package ingest

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dpsynth/synth/universe"
)

// typedDomain has the calendar and boolean kinds and a decimal amount.
const typedDomain = `{"attributes": [
  {"name": "day", "type": "date", "lower": "2024-01-01", "upper": "2024-12-31", "bin": "quarter"},
  {"name": "at", "type": "timestamp", "lower": "2024-01-01T00:00:00Z", "upper": "2024-01-03T00:00:00Z", "bin": "day", "timezone": "America/New_York"},
  {"name": "ok", "type": "boolean", "null": ""},
  {"name": "amount", "type": "numeric", "lower": 0, "upper": 100, "bins": 2}
]}`

// typedRecord holds three rows in Arrow's typed columns: a DATE32, a
// TIMESTAMP in UTC, a nullable BOOLEAN and a DECIMAL(9, 2).
func typedRecord(t *testing.T) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	day := func(s string) arrow.Date32 { d, _ := universe.ParseDate(s); return arrow.Date32(d) }
	b.Field(0).(*array.Date32Builder).AppendValues([]arrow.Date32{day("2024-01-01"), day("2024-05-17"), day("2024-12-31")}, nil)
	ts := func(s string) arrow.Timestamp {
		x, _ := time.Parse(time.RFC3339, s)
		return arrow.Timestamp(x.UnixMicro())
	}
	// The lower bound 2024-01-01T00:00Z is 19:00 on 31 December in New
	// York: bin 0 is that evening, bin 1 the 1st (from 05:00Z), bin 2 the
	// 2nd.
	b.Field(1).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{ts("2024-01-01T04:59:00Z"), ts("2024-01-01T05:00:00Z"), ts("2024-01-02T23:00:00Z")}, nil)
	b.Field(2).(*array.BooleanBuilder).AppendValues([]bool{true, false, false}, []bool{true, true, false})
	b.Field(3).(*array.Decimal128Builder).AppendValues([]decimal128.Num{decimal128.FromI64(1250), decimal128.FromI64(7500), decimal128.FromI64(10000)}, nil)
	return b.NewRecordBatch()
}

func TestReadTypedColumns(t *testing.T) {
	dom, err := universe.ParseDomain([]byte(typedDomain))
	if err != nil {
		t.Fatal(err)
	}
	const want = "[0 0 1 0]:1 [1 1 0 1]:1 [3 2 2 1]:1"
	rec := typedRecord(t)
	defer rec.Release()

	rr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := ReadRecords(context.Background(), rr, "rec", dom, Options{})
	if err != nil {
		t.Fatalf("ReadRecords = %v", err)
	}
	if got := table(c); got != want {
		t.Errorf("ReadRecords = %s, want %s", got, want)
	}

	// The same rows through a Parquet file (DATE, TIMESTAMP(MICROS, UTC),
	// BOOLEAN, DECIMAL).
	var buf bytes.Buffer
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	if err := pqarrow.WriteTable(tbl, &buf, 1024, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	c, _, err = ReadParquet(context.Background(), bytes.NewReader(buf.Bytes()), "t.parquet", dom, Options{})
	if err != nil {
		t.Fatalf("ReadParquet = %v", err)
	}
	if got := table(c); got != want {
		t.Errorf("ReadParquet = %s, want %s", got, want)
	}

	// And as CSV text.
	csv := "day,at,ok,amount\n2024-01-01,2024-01-01T04:59:00Z,TRUE,12.50\n2024-05-17,2024-01-01 00:00,no,75\n2024-12-31,2024-01-02T23:00:00Z,,100.00\n"
	c, _, err = ReadCSV(context.Background(), strings.NewReader(csv), "t.csv", dom, Options{})
	if err != nil {
		t.Fatalf("ReadCSV = %v", err)
	}
	if got := table(c); got != want {
		t.Errorf("ReadCSV = %s, want %s", got, want)
	}
}

func TestReadTypedColumnErrors(t *testing.T) {
	dom, err := universe.ParseDomain([]byte(typedDomain))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ csv, want string }{
		{"day,at,ok,amount\n2024-13-01,2024-01-01T04:59:00Z,true,1\n", `t.csv: row 1, column "day": not an ISO date (YYYY-MM-DD)`},
		{"day,at,ok,amount\n2025-01-01,2024-01-01T04:59:00Z,true,1\n", `t.csv: row 1, column "day": out of range`},
		{"day,at,ok,amount\n2024-01-01,noon,true,1\n", `t.csv: row 1, column "at": not an RFC 3339 timestamp`},
		{"day,at,ok,amount\n2024-01-01,2024-01-01T04:59:00Z,perhaps,1\n", `t.csv: row 1, column "ok": not a boolean`},
	}
	for _, c := range cases {
		_, _, err := ReadCSV(context.Background(), strings.NewReader(c.csv), "t.csv", dom, Options{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ReadCSV(%q) = %v, want an error starting %q", c.csv, err, c.want)
		}
	}
}
