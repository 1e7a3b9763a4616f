package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dpsynth/synth/universe"
)

const testDomain = `{"attributes": [
  {"name": "sex", "type": "categorical", "values": ["F", "M"]},
  {"name": "race", "type": "categorical", "values": ["a", "b", "other"], "other": "other"},
  {"name": "age", "type": "integer", "min": 0, "max": 99, "width": 10},
  {"name": "income", "type": "numeric", "lower": 0, "upper": 100, "bins": 4},
  {"name": "job", "type": "categorical", "values": ["x", "y", "a\nb"], "null": "NA"}
]}`

func testDom(t testing.TB) *universe.Domain {
	t.Helper()
	d, err := universe.ParseDomain([]byte(testDomain))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// table renders counts as "codes:count" entries, in order.
func table(c *universe.Counts) string {
	var s []string
	for i := range c.Distinct() {
		s = append(s, fmt.Sprintf("%v:%d", c.Codes(i), c.Count(i)))
	}
	return strings.Join(s, " ")
}

func TestReadCSV(t *testing.T) {
	dom := testDom(t)
	tests := []struct {
		name string
		in   string
		opts Options
		want string // counts, or the error text
		reps []Repairs
	}{
		{"one row", "sex,race,age,income,job\nM,b,42,50,y\n", Options{},
			"[1 1 4 2 1]:1", nil},
		{"any column order, CRLF, BOM", "\xef\xbb\xbfjob,income,age,race,sex\r\nx,0,0,a,F\r\nx,100,99,a,F\r\n", Options{},
			"[0 0 0 0 0]:1 [0 0 9 3 0]:1", nil},
		{"blank lines skipped", "\n\nsex,race,age,income,job\n\nF,a,1,1,x\n\nF,a,1,1,x\n", Options{},
			"[0 0 0 0 0]:2", nil},
		{"null token and quoted newline", "sex,race,age,income,job\nF,a,1,1,NA\nF,a,1,1,\"a\nb\"\n", Options{},
			"[0 0 0 0 2]:1 [0 0 0 0 3]:1", nil},
		{"quoted header", "\"sex\",\"race\",age,income,job\nF,a,1,1,x\n", Options{},
			"[0 0 0 0 0]:1", nil},
		{"no final newline", "sex,race,age,income,job\nF,a,1,1,x", Options{},
			"[0 0 0 0 0]:1", nil},
		{"sorted cells", "sex,race,age,income,job\nM,a,1,1,x\nF,b,1,1,x\nF,a,1,1,x\nM,a,1,1,x\n", Options{Workers: 3, BatchRows: 1},
			"[0 0 0 0 0]:1 [0 1 0 0 0]:1 [1 0 0 0 0]:2", nil},
		{"clamp", "sex,race,age,income,job\nF,a,-4,101,x\nF,a,120,50,x\n", Options{Policy: universe.Policy{Clamp: true}},
			"[0 0 0 3 0]:1 [0 0 9 2 0]:1",
			[]Repairs{{"sex", 0, 0}, {"race", 0, 0}, {"age", 2, 0}, {"income", 1, 0}, {"job", 0, 0}}},
		{"unknown to other", "sex,race,age,income,job\nF,zz,1,1,x\nF,a,1,1,x\n", Options{Policy: universe.Policy{UnknownToOther: true}},
			"[0 0 0 0 0]:1 [0 2 0 0 0]:1",
			[]Repairs{{"sex", 0, 0}, {"race", 0, 1}, {"age", 0, 0}, {"income", 0, 0}, {"job", 0, 0}}},
		{"unknown to other needs a declared other", "sex,race,age,income,job\nQ,a,1,1,x\n", Options{Policy: universe.Policy{UnknownToOther: true}},
			`t.csv: row 1, column "sex": unknown category "Q"`, nil},
		{"pre-aggregated", "sex,race,age,income,job,n\nF,a,1,1,x,5\nM,a,1,1,x,0\nF,a,1,1,x,1e1\n", Options{CountColumn: "n"},
			"[0 0 0 0 0]:15", nil},
		{"count column must not be an attribute", "sex,race,age,income,job\nF,a,1,1,x\n", Options{CountColumn: "age"},
			`t.csv: header, column "age": count column is also an attribute`, nil},
		{"missing count column", "sex,race,age,income,job\nF,a,1,1,x\n", Options{CountColumn: "n"},
			`t.csv: header, column "n": missing column: "n"`, nil},
		{"typo: extra and missing", "sex,race,agee,income,job\nF,a,1,1,x\n", Options{},
			`t.csv: header, column "agee": extra column: "agee" is not an attribute of the domain; missing "age"`, nil},
		{"first error in the file wins", "sex,race,age,income,job\nF,a,1,1,x\nF,a,1,1,x\nF,a,1,1,x\nF,a,1,999,x\nF,a,999,1,x\n", Options{Workers: 2, BatchRows: 1},
			`t.csv: row 4, column "income": out of range "999"`, nil},
		{"leftmost column wins within a row", "sex,race,age,income,job\nF,a,1,1,x\nF,zz,999,1,x\n", Options{},
			`t.csv: row 2, column "race": unknown category "zz"`, nil},
		{"unterminated quote", "sex,race,age,income,job\nF,a,1,1,x\nF,a,1,1,\"x\n", Options{},
			`t.csv: row 2: malformed input: extraneous or missing " in quoted-field`, nil},
		{"surrounding spaces in numbers", "sex,race,age,income,job\nF,a, 7 ,\t1.5,x\n", Options{},
			"[0 0 0 0 0]:1", nil},
		{"spaces are part of categories", "sex,race,age,income,job\nF ,a,1,1,x\n", Options{},
			`t.csv: row 1, column "sex": unknown category "F "`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.ShowValues = true // the wants name the bad values
			c, st, err := ReadCSV(context.Background(), strings.NewReader(tt.in), "t.csv", dom, tt.opts)
			var got string
			if err != nil {
				got = err.Error()
				if !strings.HasPrefix(got, tt.want) {
					t.Errorf("ReadCSV(%q) error = %q, want prefix %q", tt.in, got, tt.want)
				}
				return
			}
			if got = table(c); got != tt.want {
				t.Errorf("ReadCSV(%q) = %s, want %s", tt.in, got, tt.want)
			}
			if tt.reps != nil && !slices.Equal(st.Repairs, tt.reps) {
				t.Errorf("ReadCSV(%q) repairs = %v, want %v", tt.in, st.Repairs, tt.reps)
			}
		})
	}
}

// TestChunks cuts the input into tiny chunks so that records, quoted
// newlines and errors fall on chunk boundaries.
func TestChunks(t *testing.T) {
	defer func(n int) { chunkBytes = n }(chunkBytes)
	dom := testDom(t)
	var in strings.Builder
	in.WriteString("sex,race,age,income,job\n")
	const rows = 500
	for i := range rows {
		job := []string{"x", "y", "\"a\nb\"", "NA"}[i%4]
		fmt.Fprintf(&in, "%s,%s,%d,%d,%s\n", []string{"F", "M"}[i%2], []string{"a", "b"}[i%3%2], i%100, i%101, job)
	}
	want, _, err := ReadCSV(context.Background(), strings.NewReader(in.String()), "t.csv", dom, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(in.String(), "\n"+"M,a,71,71,NA\n", "\nM,a,71,171,NA\n", 1) // row 72 (0-based 71)
	if bad == in.String() {
		t.Fatal("test input does not hold the row to spoil")
	}
	for _, size := range []int{1, 7, 64, 1000} {
		chunkBytes = size
		for _, w := range []int{1, 2, 5} {
			opts := Options{Workers: w, BatchRows: 3, ShowValues: true}
			got, st, err := ReadCSV(context.Background(), iotest.HalfReader(strings.NewReader(in.String())), "t.csv", dom, opts)
			if err != nil {
				t.Fatalf("chunks of %d bytes, %d workers: %v", size, w, err)
			}
			if st.Rows != rows || table(got) != table(want) {
				t.Errorf("chunks of %d bytes, %d workers: %d rows, counts differ from one chunk's", size, w, st.Rows)
			}
			_, _, err = ReadCSV(context.Background(), strings.NewReader(bad), "t.csv", dom, opts)
			if err == nil || !strings.HasPrefix(err.Error(), `t.csv: row 72, column "income": out of range "171"`) {
				t.Errorf("chunks of %d bytes, %d workers: error %v, want row 72", size, w, err)
			}
		}
	}
}

// TestOpenQuote: an unbalanced quote does not pull the rest of the input
// into memory; it is reported at its row.
func TestOpenQuote(t *testing.T) {
	defer func(c, m int) { chunkBytes, maxRecordBytes = c, m }(chunkBytes, maxRecordBytes)
	chunkBytes, maxRecordBytes = 16, 256
	dom := testDom(t)
	in := "sex,race,age,income,job\nF,a,1,1,x\nF,a,1,1,\"x\n" + strings.Repeat("F,a,1,1,x\n", 1000)
	_, _, err := ReadCSV(context.Background(), strings.NewReader(in), "t.csv", dom, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), `t.csv: row 2: malformed input: extraneous or missing " in quoted-field`) {
		t.Errorf("ReadCSV(open quote) = %v, want a malformed row 2", err)
	}
}

func TestLastRecordEnd(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 0},
		{"a\n", 2},
		{"a\nb", 2},
		{"a\nb\n", 4},
		{"\"a\nb\"", 0},
		{"\"a\nb\"\n", 6},
		{"x,\"a\"\"\nb\"\nc", 10},
		{"x\n\"a\n", 2},
	}
	for _, tt := range tests {
		if got := lastRecordEnd([]byte(tt.in)); got != tt.want {
			t.Errorf("lastRecordEnd(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestReadRecords covers typed Arrow columns: integers, floats, strings,
// dictionaries and nulls.
func TestReadRecords(t *testing.T) {
	dom := testDom(t)
	mem := memory.DefaultAllocator
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "sex", Type: dictType, Nullable: true},
		{Name: "race", Type: arrow.BinaryTypes.LargeString},
		{Name: "age", Type: arrow.PrimitiveTypes.Uint8},
		{Name: "income", Type: arrow.PrimitiveTypes.Float32},
		{Name: "job", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "count", Type: arrow.PrimitiveTypes.Uint64},
	}, nil)
	build := func(sex []string, race []string, age []uint8, income []float32, job []string, count []uint64) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, sc)
		defer b.Release()
		for i := range sex {
			if sex[i] == "" {
				b.Field(0).AppendNull()
			} else {
				b.Field(0).(*array.BinaryDictionaryBuilder).AppendString(sex[i])
			}
			b.Field(1).(*array.LargeStringBuilder).Append(race[i])
			b.Field(2).(*array.Uint8Builder).Append(age[i])
			b.Field(3).(*array.Float32Builder).Append(income[i])
			if job[i] == "" {
				b.Field(4).AppendNull()
			} else {
				b.Field(4).(*array.StringBuilder).Append(job[i])
			}
			b.Field(5).(*array.Uint64Builder).Append(count[i])
		}
		return b.NewRecordBatch()
	}
	tests := []struct {
		name string
		rec  arrow.RecordBatch
		want string
	}{
		{"typed", build([]string{"M", "F", "M"}, []string{"a", "b", "a"}, []uint8{5, 99, 5}, []float32{25, 100, 25}, []string{"x", "", "x"}, []uint64{1, 2, 3}),
			"[0 1 9 3 3]:2 [1 0 0 1 0]:4"},
		{"dictionary null without a null token", build([]string{"M", ""}, []string{"a", "a"}, []uint8{1, 1}, []float32{1, 1}, []string{"x", "x"}, []uint64{1, 1}),
			`rec: row 2, column "sex": missing value but no null token is declared`},
		{"integer over range", build([]string{"M"}, []string{"a"}, []uint8{200}, []float32{1}, []string{"x"}, []uint64{1}),
			`rec: row 1, column "age": out of range "200"`},
		{"float NaN", build([]string{"M"}, []string{"a"}, []uint8{1}, []float32{float32(math.NaN())}, []string{"x"}, []uint64{1}),
			`rec: row 1, column "income": not finite (NaN or Inf) "NaN"`},
		{"count over int64", build([]string{"M"}, []string{"a"}, []uint8{1}, []float32{1}, []string{"x"}, []uint64{math.MaxUint64}),
			`rec: row 1, column "count": count must be a non-negative integer, got "18446744073709551615"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr, err := array.NewRecordReader(sc, []arrow.RecordBatch{tt.rec})
			if err != nil {
				t.Fatal(err)
			}
			defer rr.Release()
			tt.rec.Release()
			c, _, err := ReadRecords(context.Background(), rr, "rec", dom, Options{CountColumn: "count", ShowValues: true})
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = table(c)
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("ReadRecords = %s, want %s", got, tt.want)
			}
		})
	}

	// A numeric column for a categorical attribute is refused per value,
	// a list column up front.
	bad := arrow.NewSchema([]arrow.Field{{Name: "sex", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}}, nil)
	one, _ := universe.NewCategorical("sex", []string{"F", "M"})
	d1, _ := universe.NewDomain(one)
	rr, _ := array.NewRecordReader(bad, nil)
	_, _, err := ReadRecords(context.Background(), rr, "rec", d1, Options{})
	if !errors.Is(err, ErrColumnType) {
		t.Errorf("ReadRecords(list column) = %v, want ErrColumnType", err)
	}
}

func TestReadFileFormats(t *testing.T) {
	dom := testDom(t)
	// A Parquet file is detected by its magic whatever its name.
	for _, tt := range []struct {
		name, content string
		want          Format
	}{
		{"x.csv", "a,b\n", CSV},
		{"x.data", "PAR1....", Parquet},
		{"x.PARQUET", "", Parquet},
		{"x", "", CSV},
	} {
		got, err := Detect(tt.name, strings.NewReader(tt.content))
		if err != nil || got != tt.want {
			t.Errorf("Detect(%q, %q) = %v, %v; want %v", tt.name, tt.content, got, err, tt.want)
		}
	}
	if _, _, err := ReadFile(context.Background(), "testdata/no-such-file.csv", dom, Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing file) = %v, want fs.ErrNotExist", err)
	}
	for _, s := range []string{"auto", "CSV", "parquet"} {
		if _, err := ParseFormat(s); err != nil {
			t.Errorf("ParseFormat(%q): %v", s, err)
		}
	}
	if _, err := ParseFormat("xlsx"); err == nil {
		t.Errorf("ParseFormat(xlsx) succeeded")
	}
}

func TestReadErrors(t *testing.T) {
	dom := testDom(t)
	in := "sex,race,age,income,job\n" + strings.Repeat("F,a,1,1,x\n", 1000)
	// A failing reader is an I/O error, not a data error.
	r := io.MultiReader(strings.NewReader(in), iotest.ErrReader(errors.New("disk on fire")))
	_, _, err := ReadCSV(context.Background(), r, "t.csv", dom, Options{})
	var re *ReadError
	var de *DataError
	if !errors.As(err, &re) || errors.As(err, &de) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("ReadCSV(failing reader) = %v, want a *ReadError", err)
	}
	_, _, err = ReadCSV(context.Background(), iotest.ErrReader(errors.New("gone")), "t.csv", dom, Options{})
	if !errors.As(err, &re) {
		t.Errorf("ReadCSV(failing reader at the header) = %v, want a *ReadError", err)
	}
	// A canceled context stops the read.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := ReadCSV(ctx, strings.NewReader(in), "t.csv", dom, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadCSV(canceled) = %v, want context.Canceled", err)
	}
	// Canceled while reading: the read stops between chunks.
	defer func(n int) { chunkBytes = n }(chunkBytes)
	chunkBytes = 64
	ctx2, cancel2 := context.WithCancel(context.Background())
	big := "sex,race,age,income,job\n" + strings.Repeat("F,a,1,1,x\n", 50000) // 500 kB: several reads of bufio's 64 KiB
	r2 := &cancelAfter{r: strings.NewReader(big), n: 3, cancel: cancel2}
	if _, _, err := ReadCSV(ctx2, r2, "t.csv", dom, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadCSV(canceled while reading) = %v, want context.Canceled", err)
	}
	if r2.reads > 5 {
		t.Errorf("ReadCSV went on reading after cancellation: %d reads", r2.reads)
	}
	if _, _, err := ReadParquet(ctx, bytes.NewReader(nil), "t.parquet", dom, Options{}); err == nil {
		t.Errorf("ReadParquet(empty) succeeded")
	}
}

// cancelAfter cancels a context after n reads.
type cancelAfter struct {
	r      io.Reader
	n      int
	reads  int
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	c.reads++
	if c.reads == c.n {
		c.cancel()
	}
	return c.r.Read(p)
}

// TestBadValuesNotPrinted: by default a bad value's message says where it
// is and why, never what it is (a private wage must not land in a CI log);
// ShowValues prints it.
func TestBadValuesNotPrinted(t *testing.T) {
	dom := testDom(t)
	const secret = "98765"
	in := "sex,race,age,income,job\nF,a,1," + secret + ",x\nF,secretrace,1,1,x\n"
	_, _, err := ReadCSV(context.Background(), strings.NewReader(in), "t.csv", dom, Options{})
	if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "secretrace") {
		t.Fatalf("ReadCSV error = %v, want an error without the values", err)
	}
	for _, want := range []string{`t.csv: row 1, column "income": out of range`, `t.csv: row 2, column "race": unknown category`, "--show-values"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ReadCSV error = %v, want it to contain %q", err, want)
		}
	}
	_, _, err = ReadCSV(context.Background(), strings.NewReader(in), "t.csv", dom, Options{ShowValues: true})
	if err == nil || !strings.Contains(err.Error(), `"`+secret+`"`) || strings.Contains(err.Error(), "--show-values") {
		t.Errorf("ReadCSV(ShowValues) error = %v, want the value and no hint", err)
	}
}
