package sqlsrc

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dpsynth/synth/universe"
)

// timeDomain has a date by month, a timestamp by day in New York (whose
// clocks change on 2024-03-10) and a nullable boolean.
const timeDomain = `{"attributes": [
  {"name": "day", "type": "date", "lower": "2024-01-01", "upper": "2024-12-31", "bin": "month"},
  {"name": "at", "type": "timestamp", "lower": "2024-03-08T00:00:00Z", "upper": "2024-03-16T00:00:00Z", "bin": "day", "timezone": "America/New_York"},
  {"name": "ok", "type": "boolean", "null": ""}
]}`

// timeRows returns n rows: a day, an instant (37 minutes apart, across the
// change of clocks) and a boolean or null.
func timeRows(n int) (days []time.Time, ats []time.Time, oks []*bool) {
	start := time.Date(2024, 3, 8, 0, 0, 0, 0, time.UTC)
	for i := range n {
		days = append(days, time.Date(2024, 1, 1+(i*7)%366, 0, 0, 0, 0, time.UTC))
		ats = append(ats, start.Add(time.Duration(i*37)*time.Minute))
		var b *bool
		if i%3 != 0 {
			v := i%3 == 1
			b = &v
		}
		oks = append(oks, b)
	}
	return days, ats, oks
}

// timeKindTests loads the same rows as text and in the engine's date,
// timestamp and boolean types, and checks that the engine's histogram is
// ingest's count of the CSV file.
func timeKindTests(t *testing.T, e *engine) {
	ctx := context.Background()
	dom, err := universe.ParseDomain([]byte(timeDomain))
	if err != nil {
		t.Fatal(err)
	}
	ny, _ := time.LoadLocation("America/New_York")
	days, ats, oks := timeRows(300)
	header := []string{"day", "at", "ok"}
	var recs [][]string
	for i := range days {
		ok := ""
		if oks[i] != nil {
			ok = map[bool]string{true: "Yes", false: "f"}[*oks[i]]
		}
		// Half the instants with their offset, half as New York wall clock.
		at := ats[i].Format(time.RFC3339)
		if i%2 == 0 {
			at = ats[i].In(ny).Format("2006-01-02 15:04:05")
		}
		recs = append(recs, []string{days[i].Format(time.DateOnly), at, ok})
	}
	path := filepath.Join(t.TempDir(), "time.csv")
	writeCSV(t, path, header, recs)
	want, _ := expected(t, path, dom, universe.Policy{})

	text := &table{name: "time_text", cols: header, pgTypes: []string{"TEXT", "TEXT", "TEXT"}, chTypes: []string{"String", "String", "String"}}
	for _, r := range recs {
		text.rows = append(text.rows, []any{r[0], r[1], r[2]})
	}
	typed := &table{name: "time_typed", cols: header}
	wall := &table{name: "time_wall", cols: header}
	switch e.dialect {
	case Postgres:
		typed.pgTypes = []string{"DATE", "TIMESTAMPTZ", "BOOLEAN"}
		wall.pgTypes = []string{"DATE", "TIMESTAMP", "BOOLEAN"}
	case ClickHouse: // 18.16 has no boolean type: UInt8
		typed.chTypes = []string{"Date", "DateTime('UTC')", "Nullable(UInt8)"}
	}
	for i := range days {
		var ok any
		if oks[i] != nil {
			ok = *oks[i]
			if e.dialect == ClickHouse {
				ok = map[bool]int{true: 1, false: 0}[*oks[i]]
			}
		}
		if e.dialect == ClickHouse {
			typed.rows = append(typed.rows, []any{days[i].Format(time.DateOnly), ats[i].UTC().Format(time.DateTime), ok})
			continue
		}
		typed.rows = append(typed.rows, []any{days[i], ats[i], ok})
		// pgx writes a TIMESTAMP's wall clock as read in its location.
		wall.rows = append(wall.rows, []any{days[i], ats[i].In(ny), ok})
	}
	tables := []*table{text, typed}
	if e.dialect == Postgres {
		tables = append(tables, wall)
	}
	for _, tb := range tables {
		e.load(t, tb)
		src, err := Open(ctx, e.dsn, dom, &Options{Table: tb.name})
		if err != nil {
			t.Fatalf("%s: Open: %v", tb.name, err)
		}
		h, err := src.Histogram(ctx)
		src.Close()
		if err != nil {
			t.Fatalf("%s: Histogram: %v", tb.name, err)
		}
		if g, w := fmt.Sprint(histMap(h)), fmt.Sprint(histMap(want)); g != w {
			t.Errorf("%s: Histogram =\n%s\nwant (ingest)\n%s", tb.name, g, w)
		}
	}

	// The same rows as text records (what synth domain draft reads): every
	// value encodes as ingest encodes the CSV.
	for _, tb := range tables {
		rec, err := OpenRecords(ctx, e.dsn, &Options{Table: tb.name}, header, true)
		if err != nil {
			t.Fatalf("%s: OpenRecords: %v", tb.name, err)
		}
		got := map[string]int64{}
		codes := make([]int, dom.Len())
		for {
			b, err := rec.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: Next: %v", tb.name, err)
			}
			for i := range int(b.NumRows()) {
				for j := range dom.Len() {
					col := b.Column(j).(*array.String)
					var c int
					var err error
					if col.IsNull(i) {
						c, err = dom.Attr(j).EncodeNull()
					} else {
						c, _, err = dom.Attr(j).EncodeString(col.Value(i), universe.Policy{})
					}
					if err != nil {
						v := ""
						if !col.IsNull(i) {
							v = col.Value(i)
						}
						t.Fatalf("%s: record text %q of %s: %v", tb.name, v, header[j], err)
					}
					codes[j] = c
				}
				got[fmt.Sprint(codes)]++
			}
			b.Release()
		}
		rec.Close()
		if g, w := fmt.Sprint(got), fmt.Sprint(histMap(want)); g != w {
			t.Errorf("%s: records count\n%s\nwant\n%s", tb.name, g, w)
		}
	}

	// A value outside the domain is found by the check, named by column.
	bad := &table{name: "time_bad", cols: header, pgTypes: text.pgTypes, chTypes: text.chTypes,
		rows: [][]any{{"2024-02-30", "2024-03-09T10:00:00Z", "true"}, {"2024-02-01", "2024-03-09T10:00:00Z", "maybe"}}}
	if e.dialect == Postgres {
		bad.rows[0][0] = "2025-01-01" // PostgreSQL's cast refuses 30 February outright
	}
	e.load(t, bad)
	src, err := Open(ctx, e.dsn, dom, &Options{Table: "time_bad"})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	// The check names the first column with a bad value.
	if _, err := src.Histogram(ctx); err == nil || !strings.Contains(err.Error(), `column "day"`) && !strings.Contains(err.Error(), `column "ok"`) {
		t.Errorf("Histogram(bad values) = %v, want an error naming column day or ok", err)
	}
}

// TestCompileTimeKinds: every dialect compiles dates, timestamps and
// booleans with its own functions (only PostgreSQL and ClickHouse run
// here: engineTests checks their results against ingest).
func TestCompileTimeKinds(t *testing.T) {
	dom, err := universe.ParseDomain([]byte(timeDomain))
	if err != nil {
		t.Fatal(err)
	}
	want := map[Dialect][]string{
		Postgres:   {"DATE '1970-01-01'", "AT TIME ZONE 'America/New_York'", "CAST(", "LOWER("},
		ClickHouse: {"toRelativeDayNum(", "parseDateTimeBestEffortOrZero(", "toDateOrZero(", "lower("},
		DuckDB:     {"DATE '1970-01-01'", "epoch(", "timezone('America/New_York'", "TRY_CAST("},
		Spark:      {"datediff(", "unix_micros(", "to_utc_timestamp(", "try_cast("},
		BigQuery:   {"UNIX_DATE(", "UNIX_MICROS(", "SAFE_CAST(", "REGEXP_CONTAINS("},
		Trino:      {"date_diff('day'", "to_unixtime(", "from_iso8601_timestamp(", "with_timezone("},
	}
	for d, subs := range want {
		q, err := Compile(dom, d, "t", "", nil, universe.Policy{})
		if err != nil {
			t.Errorf("%v: Compile = %v", d, err)
			continue
		}
		for _, s := range subs {
			if !strings.Contains(q, s) {
				t.Errorf("%v: the SQL lacks %q", d, s)
			}
		}
	}
}
