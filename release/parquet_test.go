package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/dpsynth/synth/universe"
)

// mixedDomain has every attribute kind, nullable and not, with names out of
// alphabetical order (the file must keep the domain's order).
const mixedDomain = `{"attributes": [
  {"name": "sex", "type": "categorical", "values": ["F", "M"]},
  {"name": "race", "type": "categorical", "values": ["a", "b", "c"], "null": "NA"},
  {"name": "age", "type": "integer", "min": 0, "max": 99, "width": 10},
  {"name": "income", "type": "numeric", "lower": 0, "upper": 100, "bins": 4, "null": ""},
  {"name": "hours", "type": "numeric", "edges": [0, 20, 40, 60, 100]},
  {"name": "code", "type": "encoded", "size": 3},
  {"name": "delta", "type": "integer", "min": -5, "max": 5, "null": "?"}
]}`

func mustDomain(t testing.TB, src string) *universe.Domain {
	t.Helper()
	d, err := universe.ParseDomain([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// testRows draws n rows uniformly over the universe, so that every code of
// every attribute (nulls included) appears.
func testRows(dom *universe.Domain, n int, seed uint64) []uint32 {
	k, _ := dom.Size()
	r := seeded(seed)
	rows := make([]uint32, n)
	for i := range rows {
		rows[i] = uint32(r.Uint64N(k))
	}
	return rows
}

func writeTestParquet(t *testing.T, dom *universe.Domain, rows []uint32, ds DecodeSettings, s *ParquetSettings) []byte {
	t.Helper()
	dec, err := NewDecoder(dom, &ds, seeded(9))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := WriteParquet(context.Background(), &buf, rows, dec, s)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(rows)) {
		t.Fatalf("WriteParquet wrote %d rows, want %d", n, len(rows))
	}
	return buf.Bytes()
}

// expected returns the decoded values of every row with the Point rules.
func expected(t *testing.T, dom *universe.Domain, rows []uint32) [][]Value {
	dec, err := NewDecoder(dom, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]Value, len(rows))
	for i, c := range rows {
		out[i] = dec.Decode(uint64(c), make([]Value, dom.Len()))
	}
	return out
}

func TestParquetReadBackParquetGo(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	rows := testRows(dom, 2500, 1)
	const manifest = `{"schema": "test"}`
	data := writeTestParquet(t, dom, rows, DecodeSettings{}, &ParquetSettings{
		RowGroupRows: 1000,
		Metadata:     [][2]string{{ManifestKey, manifest}, {"other", "x"}},
	})
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := f.Lookup(ManifestKey); !ok || got != manifest {
		t.Errorf("metadata %q = %q, %v, want %q", ManifestKey, got, ok, manifest)
	}
	if f.NumRows() != int64(len(rows)) {
		t.Errorf("NumRows = %d, want %d", f.NumRows(), len(rows))
	}
	if got := len(f.RowGroups()); got != 3 {
		t.Errorf("row groups = %d, want 3 (2500 rows in groups of 1000)", got)
	}
	// Schema: names in domain order, physical types, repetition.
	leaves := f.Metadata().Schema[1:]
	wantTypes := []format.Type{format.ByteArray, format.ByteArray, format.Int64, format.Double, format.Double, format.Int64, format.Int64}
	for i, a := range dom.Attrs() {
		el := leaves[i]
		if el.Name != a.Name {
			t.Errorf("column %d name = %q, want %q", i, el.Name, a.Name)
		}
		if el.Type.V != wantTypes[i] {
			t.Errorf("column %q type = %v, want %v", a.Name, el.Type.V, wantTypes[i])
		}
		wantRep := format.Required
		if a.Nullable {
			wantRep = format.Optional
		}
		if el.RepetitionType.V != wantRep {
			t.Errorf("column %q repetition = %v, want %v", a.Name, el.RepetitionType.V, wantRep)
		}
		if a.Kind == universe.Categorical && el.LogicalType.String() != "STRING" {
			t.Errorf("column %q: no STRING logical type", a.Name)
		}
	}
	// Strings are dictionary-encoded in every row group, and so are the
	// small integer and real columns written with Point values.
	for g, rg := range f.Metadata().RowGroups {
		for ci := range dom.Len() {
			enc := rg.Columns[ci].MetaData.Encoding
			if !slices.Contains(enc, format.RLEDictionary) && !slices.Contains(enc, format.PlainDictionary) {
				t.Errorf("row group %d column %d encodings %v: not dictionary-encoded", g, ci, enc)
			}
		}
	}
	// Values, nulls included.
	want := expected(t, dom, rows)
	rd := parquet.NewReader(f)
	buf := make([]parquet.Row, 100)
	i := 0
	for {
		n, err := rd.ReadRows(buf)
		for _, row := range buf[:n] {
			checkRow(t, dom, i, row, want[i])
			i++
		}
		if err != nil {
			break
		}
	}
	if i != len(rows) {
		t.Fatalf("read %d rows, want %d", i, len(rows))
	}
}

func checkRow(t *testing.T, dom *universe.Domain, i int, row parquet.Row, want []Value) {
	t.Helper()
	if len(row) != dom.Len() {
		t.Fatalf("row %d has %d values, want %d", i, len(row), dom.Len())
	}
	for j, a := range dom.Attrs() {
		v, w := row[j], want[j]
		if v.Column() != j {
			t.Fatalf("row %d value %d is of column %d", i, j, v.Column())
		}
		if v.IsNull() != w.Null {
			t.Fatalf("row %d column %q null = %v, want %v", i, a.Name, v.IsNull(), w.Null)
		}
		if w.Null {
			continue
		}
		var got, exp any
		switch a.Kind {
		case universe.Categorical:
			got, exp = v.String(), w.Str
		case universe.Numeric:
			got, exp = v.Double(), w.Float
		default:
			got, exp = v.Int64(), w.Int
		}
		if got != exp {
			t.Fatalf("row %d column %q = %v, want %v", i, a.Name, got, exp)
		}
	}
}

func TestParquetReadBackArrow(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	rows := testRows(dom, 3000, 2)
	const manifest = `{"rows": 3000}`
	data := writeTestParquet(t, dom, rows, DecodeSettings{}, &ParquetSettings{
		RowGroupRows: 1024, Compression: "zstd",
		Metadata: [][2]string{{ManifestKey, manifest}},
	})
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if v := pf.MetaData().KeyValueMetadata().FindValue(ManifestKey); v == nil || *v != manifest {
		t.Errorf("Arrow: metadata %q = %v, want %q", ManifestKey, v, manifest)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 512}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() != int64(len(rows)) {
		t.Fatalf("Arrow: %d rows, want %d", tbl.NumRows(), len(rows))
	}
	sc := tbl.Schema()
	wantTypes := []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64}
	for i, a := range dom.Attrs() {
		f := sc.Field(i)
		if f.Name != a.Name || !arrow.TypeEqual(f.Type, wantTypes[i]) || f.Nullable != a.Nullable {
			t.Errorf("Arrow field %d = %s %v nullable=%v, want %s %v nullable=%v", i, f.Name, f.Type, f.Nullable, a.Name, wantTypes[i], a.Nullable)
		}
	}
	want := expected(t, dom, rows)
	for j, a := range dom.Attrs() {
		col := tbl.Column(j)
		i := 0
		for _, chunk := range col.Data().Chunks() {
			for r := range chunk.Len() {
				w := want[i][j]
				if chunk.IsNull(r) != w.Null {
					t.Fatalf("Arrow row %d column %q null = %v, want %v", i, a.Name, chunk.IsNull(r), w.Null)
				}
				if !w.Null {
					var got, exp any
					switch c := chunk.(type) {
					case *array.String:
						got, exp = c.Value(r), w.Str
					case *array.Int64:
						got, exp = c.Value(r), w.Int
					case *array.Float64:
						got, exp = c.Value(r), w.Float
					default:
						t.Fatalf("Arrow column %q has type %T", a.Name, chunk)
					}
					if got != exp {
						t.Fatalf("Arrow row %d column %q = %v, want %v", i, a.Name, got, exp)
					}
				}
				i++
			}
		}
		if i != len(rows) {
			t.Fatalf("Arrow column %q has %d values, want %d", a.Name, i, len(rows))
		}
	}
}

// TestParquetUniformValues: uniform draws stay inside their bucket or bin
// (they encode back to the row's cell) and do vary.
func TestParquetUniformValues(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	rows := testRows(dom, 2000, 3)
	data := writeTestParquet(t, dom, rows, DecodeSettings{Integer: Uniform, Numeric: Uniform}, nil)
	// The columns are written in parallel, yet one seed gives one file.
	if again := writeTestParquet(t, dom, rows, DecodeSettings{Integer: Uniform, Numeric: Uniform}, nil); !bytes.Equal(data, again) {
		t.Error("two writes with the same seed differ")
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	rd := parquet.NewReader(f)
	buf := make([]parquet.Row, 1)
	codes := make([]int, dom.Len())
	distinct := map[float64]bool{}
	for i := range rows {
		if _, err := rd.ReadRows(buf); err != nil && i < len(rows)-1 {
			t.Fatal(err)
		}
		dom.Decode(uint64(rows[i]), codes)
		for j, a := range dom.Attrs() {
			v := buf[0][j]
			if v.IsNull() {
				if nc, _ := a.NullCode(); codes[j] != nc {
					t.Fatalf("row %d column %q is null, want code %d", i, a.Name, codes[j])
				}
				continue
			}
			var c int
			switch a.Kind {
			case universe.Numeric:
				c, _, err = a.EncodeFloat(v.Double(), universe.Policy{})
				distinct[v.Double()] = true
			case universe.Integer:
				c, _, err = a.EncodeInt(v.Int64(), universe.Policy{})
			default:
				continue
			}
			if err != nil || c != codes[j] {
				t.Fatalf("row %d column %q value %v encodes to %d (%v), want code %d", i, a.Name, v, c, err, codes[j])
			}
		}
	}
	if len(distinct) < 1000 {
		t.Errorf("uniform numeric values: %d distinct, want many", len(distinct))
	}
}

func TestDecoderValues(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	dec, err := NewDecoder(dom, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		attr, code int
		want       Value
	}{
		{0, 1, Value{Str: "M"}},
		{1, 3, Value{Null: true}},
		{2, 3, Value{Int: 34}}, // the bucket 30..39: its lower middle
		{2, 9, Value{Int: 94}},
		{3, 0, Value{Float: 12.5}},
		{3, 4, Value{Null: true}},
		{4, 3, Value{Float: 80}}, // the closed last bin [60, 100]
		{5, 2, Value{Int: 2}},
		{6, 0, Value{Int: -5}},
		{6, 11, Value{Null: true}},
	}
	for _, c := range cases {
		if got := dec.Value(c.attr, c.code); got != c.want {
			t.Errorf("Value(%s, %d) = %+v, want %+v", dom.Attr(c.attr).Name, c.code, got, c.want)
		}
	}
	if _, err := NewDecoder(dom, &DecodeSettings{Numeric: Uniform}, nil); err == nil {
		t.Error("NewDecoder(uniform, nil rand): no error")
	}
	for _, v := range []ValueRule{Point, Uniform} {
		if got, err := ParseValueRule(v.String()); err != nil || got != v {
			t.Errorf("ParseValueRule(%q) = %v, %v", v.String(), got, err)
		}
	}
}

// TestUniformEdges: draws near the top of a bin never leave it, even with a
// random source that returns the largest value below 1.
func TestUniformEdges(t *testing.T) {
	a, err := universe.NewNumeric("x", []float64{0, 0.1, 0.3, 1e308, math.MaxFloat64})
	if err != nil {
		t.Fatal(err)
	}
	dom, err := universe.NewDomain(a)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := NewDecoder(dom, &DecodeSettings{Numeric: Uniform}, maxRand{})
	if err != nil {
		t.Fatal(err)
	}
	for c := range 4 {
		v := dec.Value(0, c).Float
		got, _, err := a.EncodeFloat(v, universe.Policy{})
		if err != nil || got != c {
			t.Errorf("bin %d: uniform draw %v encodes to %d (%v)", c, v, got, err)
		}
	}
}

type maxRand struct{}

func (maxRand) Uint64() uint64   { return math.MaxUint64 }
func (maxRand) Float64() float64 { return math.Nextafter(1, 0) }

type failWriter struct{ after int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.after -= len(p); w.after < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestParquetErrors(t *testing.T) {
	dom := mustDomain(t, mixedDomain)
	dec, _ := NewDecoder(dom, nil, nil)
	rows := testRows(dom, 5000, 4)
	_, err := WriteParquet(context.Background(), &failWriter{after: 100}, rows, dec, &ParquetSettings{RowGroupRows: 500})
	if err == nil || !errors.Is(err, err) || !bytes.Contains([]byte(err.Error()), []byte("disk full")) {
		t.Errorf("WriteParquet to a failing writer: error = %v, want disk full", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := WriteParquet(ctx, &bytes.Buffer{}, rows, dec, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteParquet with a cancelled context: error = %v, want context.Canceled", err)
	}
	if _, err := NewParquetWriter(&bytes.Buffer{}, dec, &ParquetSettings{Compression: "lzma"}); err == nil {
		t.Error("unknown compression: no error")
	}
}

func TestSchemaString(t *testing.T) {
	s := fmt.Sprint(Schema(mustDomain(t, mixedDomain), nil))
	for _, want := range []string{"required binary sex (STRING)", "optional binary race (STRING)", "required int64 age", "optional double income", "optional int64 delta"} {
		if !bytes.Contains([]byte(s), []byte(want)) {
			t.Errorf("schema %s\nlacks %q", s, want)
		}
	}
}
