package release

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

// codesOf decodes cells into row-major codes.
func codesOf(dom *universe.Domain, cells []uint32) []int32 {
	codes := make([]int32, len(cells)*dom.Len())
	cellCodes(dom, cells, codes)
	return codes
}

// TestWriteRowsMatchesCells: the code path and the cell path write the same
// bytes, in Parquet and CSV, batch boundaries anywhere.
func TestWriteRowsMatchesCells(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	cells := testRows(dom, 5000, 3)
	codes := codesOf(dom, cells)
	ctx := context.Background()
	for _, format := range []string{"parquet", "csv"} {
		write := func(fn func(RowWriter) error) []byte {
			// One random column: its draws come in row order whatever the
			// batches (several random columns interleave by batch).
			dec, err := NewDecoder(dom, &DecodeSettings{Integer: Uniform}, seeded(4))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			var w RowWriter
			if format == "csv" {
				w = NewCSVWriter(&buf, dec, nil)
			} else if w, err = NewParquetWriter(&buf, dec, &ParquetSettings{RowGroupRows: 1500}); err != nil {
				t.Fatal(err)
			}
			if err := fn(w); err != nil {
				t.Fatal(err)
			}
			if w.Rows() != int64(len(cells)) {
				t.Fatalf("%s: Rows() = %d, want %d", format, w.Rows(), len(cells))
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
		viaCells := write(func(w RowWriter) error { return WriteCells(ctx, w, dom, cells) })
		na := dom.Len()
		viaRows := write(func(w RowWriter) error {
			for lo := 0; lo < len(cells); lo += 777 { // odd batches: no alignment with row groups
				hi := min(lo+777, len(cells))
				if err := w.WriteRows(ctx, codes[lo*na:hi*na]); err != nil {
					return err
				}
			}
			return nil
		})
		if !bytes.Equal(viaCells, viaRows) {
			t.Errorf("%s: WriteRows in batches of 777 wrote %d bytes, WriteCells %d: the files differ", format, len(viaRows), len(viaCells))
		}
	}
}

func TestWriteRowsPanicsOnBadCodes(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	dec, _ := NewDecoder(dom, nil, nil)
	for _, tc := range []struct {
		name string
		rows []int32
	}{{"partial row", []int32{0, 0}}, {"code out of range", []int32{2, 0, 0, 0, 0, 0, 0}}, {"negative", []int32{0, -1, 0, 0, 0, 0, 0}}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: WriteRows did not panic", tc.name)
				}
			}()
			NewCSVWriter(io.Discard, dec, nil).WriteRows(context.Background(), tc.rows)
		}()
	}
}

// TestParquetBinsArrow reads label and lower-upper columns back with Arrow
// and checks the embedded domain.
func TestParquetBinsArrow(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	cells := testRows(dom, 2000, 5)
	for _, tc := range []struct {
		rule  ValueRule
		names []string
		types []arrow.DataType
	}{
		{Label, []string{"sex", "race", "age", "income", "hours", "code", "delta"},
			[]arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.String, arrow.BinaryTypes.String, arrow.BinaryTypes.String, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64}},
		{LowerUpper, []string{"sex", "race", "age_lower", "age_upper", "income_lower", "income_upper", "hours_lower", "hours_upper", "code", "delta"},
			[]arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64,
				arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64}},
	} {
		ds := DecodeSettings{Integer: tc.rule, Numeric: tc.rule}
		data := writeTestParquet(t, dom, cells, ds, nil)
		pf, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		v := pf.MetaData().KeyValueMetadata().FindValue(DomainKey)
		if v == nil {
			t.Fatalf("%v: no %s metadata", tc.rule, DomainKey)
		}
		back, err := universe.ParseDomain([]byte(*v))
		if err != nil {
			t.Fatalf("%v: embedded domain: %v", tc.rule, err)
		}
		if a, b := mustJSON(t, dom), mustJSON(t, back); a != b {
			t.Errorf("%v: embedded domain %s, want %s", tc.rule, b, a)
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 512}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sc := tbl.Schema()
		if sc.NumFields() != len(tc.names) {
			t.Fatalf("%v: %d columns, want %d", tc.rule, sc.NumFields(), len(tc.names))
		}
		for i, name := range tc.names {
			if f := sc.Field(i); f.Name != name || !arrow.TypeEqual(f.Type, tc.types[i]) {
				t.Errorf("%v: column %d = %s %v, want %s %v", tc.rule, i, f.Name, f.Type, name, tc.types[i])
			}
		}
		// Every row's value against the domain: the label of its code, or
		// its bounds.
		codes := codesOf(dom, cells)
		dec, _ := NewDecoder(dom, &ds, nil)
		for j, col := range dec.Columns() {
			a := dom.Attr(col.Attr)
			r := 0
			for _, chunk := range tbl.Column(j).Data().Chunks() {
				for i := range chunk.Len() {
					c := int(codes[r*dom.Len()+col.Attr])
					nc, nullable := a.NullCode()
					if isNull := nullable && c == nc; chunk.IsNull(i) != isNull {
						t.Fatalf("%v: row %d column %s null = %v, want %v", tc.rule, r, col.Name, chunk.IsNull(i), isNull)
					} else if !isNull {
						var got, want string
						switch ch := chunk.(type) {
						case *array.String:
							got = ch.Value(i)
						case *array.Int64:
							got = strconv.FormatInt(ch.Value(i), 10)
						case *array.Float64:
							got = strconv.FormatFloat(ch.Value(i), 'g', -1, 64)
						}
						want = expectedText(a, c, tc.rule, col.Part)
						if got != want {
							t.Fatalf("%v: row %d column %s = %q, want %q", tc.rule, r, col.Name, got, want)
						}
					}
					r++
				}
			}
		}
		tbl.Release()
		pf.Close()
	}
}

// expectedText is the value of code c of a under rule and part, as text,
// computed from the domain directly.
func expectedText(a *universe.Attribute, c int, rule ValueRule, p Part) string {
	switch {
	case a.Kind == universe.Categorical:
		return a.Values[c]
	case a.Kind == universe.Encoded:
		return strconv.Itoa(c)
	case a.Kind == universe.Integer && a.Width == 1:
		lo, _ := a.IntBucket(c)
		return strconv.FormatInt(lo, 10)
	case rule == Label:
		return a.Label(c)
	case a.Kind == universe.Integer:
		lo, hi := a.IntBucket(c)
		if p == Upper {
			return strconv.FormatInt(hi, 10)
		}
		return strconv.FormatInt(lo, 10)
	default:
		lo, hi := a.Bin(c)
		if p == Upper {
			return strconv.FormatFloat(hi, 'g', -1, 64)
		}
		return strconv.FormatFloat(lo, 'g', -1, 64)
	}
}

func mustJSON(t *testing.T, d *universe.Domain) string {
	t.Helper()
	b, err := d.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCSVWriter: header, RFC 4180 records, nulls as empty fields, gzip, and
// a round trip through ingest that gives back the cells' counts.
func TestCSVWriter(t *testing.T) {
	// Null tokens "" so that ingest reads the empty fields back as nulls.
	dom := mustDomain(t, strings.NewReplacer(`"null": "NA"`, `"null": ""`, `"null": "?"`, `"null": ""`).Replace(mixedDomain))
	cells := testRows(dom, 3000, 6)
	for _, gz := range []bool{false, true} {
		dec, _ := NewDecoder(dom, nil, nil)
		var buf bytes.Buffer
		w := NewCSVWriter(&buf, dec, &CSVSettings{Gzip: gz})
		if err := w.Write(context.Background(), cells); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		var r io.Reader = &buf
		if gz {
			zr, err := gzip.NewReader(&buf)
			if err != nil {
				t.Fatalf("gzip: %v", err)
			}
			r = zr
		}
		text, _ := io.ReadAll(r)
		if !bytes.HasPrefix(text, []byte("sex,race,age,income,hours,code,delta\r\n")) {
			t.Fatalf("CSV header = %q", text[:min(60, len(text))])
		}
		recs, err := csv.NewReader(bytes.NewReader(text)).ReadAll()
		if err != nil || len(recs) != len(cells)+1 {
			t.Fatalf("CSV: %d records, %v; want %d", len(recs), err, len(cells)+1)
		}
		want := expected(t, dom, cells)
		for i, rec := range recs[1:] {
			for j, v := range want[i] {
				if v.Null != (rec[j] == "") {
					t.Fatalf("row %d column %d = %q, null %v", i, j, rec[j], v.Null)
				}
			}
		}
		// Round trip: read the CSV back against the domain.
		counts, _, err := ingest.ReadCSV(context.Background(), bytes.NewReader(text), "synthetic.csv", dom, ingest.Options{})
		if err != nil {
			t.Fatalf("ingest of the CSV: %v", err)
		}
		got := NewOneWay(dom)
		got.AddCounts(counts)
		exp := NewOneWay(dom)
		exp.AddRows(codesOf(dom, cells))
		for i, a := range dom.Attrs() {
			for c := range a.Size() {
				if got.Count(i, c) != exp.Count(i, c) {
					t.Errorf("gzip=%v: %s code %d read back %d times, written %d", gz, a.Name, c, got.Count(i, c), exp.Count(i, c))
				}
			}
		}
	}
	// An empty table still has its header.
	dec, _ := NewDecoder(dom, &DecodeSettings{Numeric: LowerUpper}, nil)
	var buf bytes.Buffer
	if err := NewCSVWriter(&buf, dec, nil).Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "sex,race,age,income_lower,income_upper,hours_lower,hours_upper,code,delta\r\n"; got != want {
		t.Errorf("empty CSV = %q, want %q", got, want)
	}
}

// TestCSVQuoting: categories with commas, quotes and line breaks survive.
func TestCSVQuoting(t *testing.T) {
	dom := mustDomain(t, `{"attributes": [{"name": "x", "type": "categorical", "values": ["a,b", "say \"hi\"", "two\nlines"]}]}`)
	dec, _ := NewDecoder(dom, nil, nil)
	var buf bytes.Buffer
	w := NewCSVWriter(&buf, dec, nil)
	if err := w.WriteRows(context.Background(), []int32{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	recs, err := csv.NewReader(strings.NewReader(buf.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"x", "a,b", `say "hi"`, "two\nlines"} {
		if recs[i][0] != want {
			t.Errorf("record %d = %q, want %q", i, recs[i][0], want)
		}
	}
}

func TestColumnsNameClash(t *testing.T) {
	dom := mustDomain(t, `{"attributes": [
	  {"name": "age", "type": "integer", "min": 0, "max": 99, "width": 10},
	  {"name": "age_lower", "type": "categorical", "values": ["y", "n"]}]}`)
	if _, err := Columns(dom, &DecodeSettings{Integer: LowerUpper}); err == nil || !strings.Contains(err.Error(), `"age_lower"`) {
		t.Errorf("Columns with a clash = %v, want an error naming age_lower", err)
	}
	if _, err := NewDecoder(dom, &DecodeSettings{Integer: Label}, nil); err != nil {
		t.Errorf("label rule: %v", err)
	}
}

func TestParseValueRule(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ValueRule
		ok   bool
	}{{"point", Point, true}, {"midpoint", Point, true}, {"uniform", Uniform, true}, {"label", Label, true}, {"lower-upper", LowerUpper, true}, {"lower", 0, false}, {"", 0, false}} {
		got, err := ParseValueRule(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseValueRule(%q) = %v, %v, want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestOneWayTee: the tables accumulated while streaming equal those of the
// cells, and OneWayDists labels the null code.
func TestOneWayTee(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	cells := testRows(dom, 4000, 7)
	dec, _ := NewDecoder(dom, nil, nil)
	streamed := NewOneWay(dom)
	w := TeeRows(NewCSVWriter(io.Discard, dec, nil), streamed)
	if err := WriteCells(context.Background(), w, dom, cells); err != nil {
		t.Fatal(err)
	}
	w.Close()
	cc := make([]CellCount, len(cells))
	for i, c := range cells {
		cc[i] = CellCount{Cell: uint64(c), Count: 1}
	}
	direct := NewOneWay(dom)
	direct.AddCells(cc)
	if streamed.Total() != 4000 || direct.Total() != 4000 {
		t.Fatalf("totals %d, %d, want 4000", streamed.Total(), direct.Total())
	}
	ds := OneWayDists(direct, streamed)
	for i, d := range ds {
		for c := range d.True {
			if d.True[c] != d.Synthetic[c] {
				t.Errorf("%s code %d: streamed %v, cells %v", d.Name, c, d.Synthetic[c], d.True[c])
			}
		}
		if a := dom.Attr(i); a.Nullable && d.Labels[a.Size()-1] != "<null>" {
			t.Errorf("%s: null label %q, want <null>", a.Name, d.Labels[a.Size()-1])
		}
	}
}

// BenchmarkWriteRows streams rows as codes into CSV and Parquet: memory
// must not grow with the rows (allocations per op stay flat).
func BenchmarkWriteRows(b *testing.B) {
	dom := mustDomain(b, mixedDomain)
	codes := codesOf(dom, testRows(dom, 1<<16, 8))
	for _, format := range []string{"csv", "parquet"} {
		b.Run(format, func(b *testing.B) {
			dec, _ := NewDecoder(dom, nil, nil)
			var w RowWriter
			if format == "csv" {
				w = NewCSVWriter(io.Discard, dec, nil)
			} else {
				pw, err := NewParquetWriter(io.Discard, dec, nil)
				if err != nil {
					b.Fatal(err)
				}
				w = pw
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(codes) / dom.Len()))
			for b.Loop() {
				if err := w.WriteRows(context.Background(), codes); err != nil {
					b.Fatal(err)
				}
			}
			w.Close()
		})
	}
}

// FuzzCSVCategories: any categories (commas, quotes, line breaks, UTF-8)
// read back exactly through an RFC 4180 reader.
func FuzzCSVCategories(f *testing.F) {
	f.Add("a", "b,c", `say "hi"`)
	f.Add("two\nlines", "\r", " lead")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		vals := []string{a, b, c}
		for _, v := range vals {
			// Distinct, non-empty (empty means null in CSV), valid UTF-8,
			// no lone CR (encoding/csv reads "\r\n" inside quotes as "\n").
			if v == "" || !utf8.ValidString(v) || strings.Contains(v, "\r") {
				return
			}
		}
		if a == b || b == c || a == c {
			return
		}
		js, _ := json.Marshal(vals)
		dom, err := universe.ParseDomain([]byte(`{"attributes": [{"name": "x", "type": "categorical", "values": ` + string(js) + `}]}`))
		if err != nil {
			return // not a valid domain (e.g. duplicate after normalisation)
		}
		dec, _ := NewDecoder(dom, nil, nil)
		var buf bytes.Buffer
		w := NewCSVWriter(&buf, dec, nil)
		if err := w.WriteRows(context.Background(), []int32{2, 0, 1}); err != nil {
			t.Fatal(err)
		}
		w.Close()
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatalf("reading back %q: %v", buf.String(), err)
		}
		want := [][]string{{"x"}, {dom.Attr(0).Values[2]}, {dom.Attr(0).Values[0]}, {dom.Attr(0).Values[1]}}
		if len(recs) != 4 {
			t.Fatalf("read back %q, want %q", recs, want)
		}
		for i := range want {
			if len(recs[i]) != 1 || recs[i][0] != want[i][0] {
				t.Fatalf("read back %q, want %q", recs, want)
			}
		}
	})
}

// TestParquetMemoryBounded: streaming rows as codes, the writer's live
// heap stays at about one row group whatever the number of rows: after
// 16 row groups it holds no more than after 2, within 4 MiB. The numeric
// columns are uniform draws (incompressible doubles), so a writer that
// kept its rows to the end would hold 14 more groups of 2 × 8 bytes ×
// 65,536 rows ≈ 14 MiB more (checked by making the groups unbounded).
func TestParquetMemoryBounded(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	const group = 1 << 16
	codes := codesOf(dom, testRows(dom, group, 9))
	dec, _ := NewDecoder(dom, &DecodeSettings{Numeric: Uniform}, seeded(11))
	pw, err := NewParquetWriter(io.Discard, dec, &ParquetSettings{RowGroupRows: group})
	if err != nil {
		t.Fatal(err)
	}
	live := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	var after2 uint64
	for g := range 16 {
		if err := pw.WriteRows(context.Background(), codes); err != nil {
			t.Fatal(err)
		}
		if g == 1 {
			after2 = live()
		}
	}
	after16 := live()
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if after16 > after2+4<<20 {
		t.Errorf("live heap %d MiB after 16 row groups, %d MiB after 2: the writer keeps rows", after16>>20, after2>>20)
	}
	t.Logf("live heap after 2 groups %.1f MiB, after 16 %.1f MiB", float64(after2)/(1<<20), float64(after16)/(1<<20))
}

// TestCSVWriteRowsAllocs: the CSV writer's row loop allocates nothing.
func TestCSVWriteRowsAllocs(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	codes := codesOf(dom, testRows(dom, 1000, 10))
	dec, _ := NewDecoder(dom, nil, nil)
	w := NewCSVWriter(io.Discard, dec, nil)
	if a := testing.AllocsPerRun(20, func() { w.WriteRows(context.Background(), codes) }); a != 0 {
		t.Errorf("WriteRows of 1,000 rows: %v allocations, want 0", a)
	}
}
