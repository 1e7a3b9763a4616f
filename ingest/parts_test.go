package ingest

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/dpsynth/synth/universe"
)

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstded(t testing.TB, b []byte) []byte {
	t.Helper()
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return zw.EncodeAll(b, nil)
}

func write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func rawTable(t *testing.T) (*universe.Domain, string, []string) {
	t.Helper()
	dom, err := universe.LoadDomain(filepath.Join("testdata", "raw", "adult-raw-domain.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "raw", "adult-raw.csv")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return dom, path, strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestParts: a folder or glob of part files (plain, gzip and zstd CSV)
// counts what the whole file counts; markers and hidden files are ignored.
func TestParts(t *testing.T) {
	dom, whole, lines := rawTable(t)
	want, wst, err := ReadFile(context.Background(), whole, dom, Options{})
	if err != nil {
		t.Fatal(err)
	}
	header, rows := lines[0], lines[1:]
	dir := t.TempDir()
	third := len(rows) / 3
	part := func(rs []string) []byte { return []byte(header + strings.Join(rs, "")) }
	write(t, filepath.Join(dir, "part-00000.csv"), part(rows[:third]))
	write(t, filepath.Join(dir, "part-00001.csv.gz"), gzipped(t, part(rows[third:2*third])))
	write(t, filepath.Join(dir, "part-00002.csv"), zstded(t, part(rows[2*third:]))) // zstd under a .csv name
	write(t, filepath.Join(dir, "part-00003.csv"), nil)                             // empty part (as Spark writes them)
	write(t, filepath.Join(dir, "part-00004.csv"), []byte(header))                  // header-only part
	write(t, filepath.Join(dir, "_SUCCESS"), nil)
	write(t, filepath.Join(dir, "_committed_123"), []byte("{}"))
	write(t, filepath.Join(dir, ".part-00000.csv.crc"), []byte("\x00\x01garbage"))
	for _, path := range []string{dir, filepath.Join(dir, "part-*"), filepath.Join(dir, "part-0000[0-2].csv*")} {
		for _, o := range []Options{{}, {Workers: 3, BatchRows: 5}} {
			got, st, err := ReadFile(context.Background(), path, dom, o)
			if err != nil {
				t.Fatalf("ReadFile(%s): %v", path, err)
			}
			if table(got) != table(want) {
				t.Errorf("ReadFile(%s): counts differ from the whole file's", path)
			}
			if st.Rows != wst.Rows || st.N != wst.N || st.Distinct != wst.Distinct || st.File != path || st.Format != CSV {
				t.Errorf("ReadFile(%s): stats %+v, want rows %d, n %d, distinct %d", path, st, wst.Rows, wst.N, wst.Distinct)
			}
			if len(st.Parts) < 3 || filepath.Base(st.Parts[0]) != "part-00000.csv" {
				t.Errorf("ReadFile(%s): parts %v", path, st.Parts)
			}
		}
	}
	// Parts are read in name order: errors name the part file and its row.
	write(t, filepath.Join(dir, "part-00005.csv"), []byte(header+"Male,0,Martian,Never-married,Adm-clerical,Bachelors,32.5\n"+rows[0]+"Male,0,White,Never-married,Adm-clerical,Bachelors,200\n"))
	write(t, filepath.Join(dir, "part-00006.csv.gz"), gzipped(t, []byte(header+rows[0]+"Male,0,White,Never-married,Adm-clerical,Bachelors,1\n")))
	_, _, err = ReadFile(context.Background(), dir, dom, Options{ShowValues: true})
	var de *DataError
	if !errors.As(err, &de) {
		t.Fatalf("ReadFile(bad parts) = %v, want a *DataError", err)
	}
	p5, p6 := filepath.Join(dir, "part-00005.csv"), filepath.Join(dir, "part-00006.csv.gz")
	wantMsg := p5 + ": row 1, column \"race\": unknown category \"Martian\"" +
		" (declared: categorical {\"Amer-Indian-Eskimo\", \"Asian-Pac-Islander\", \"Black\", \"Other\", \"White\"} other \"Other\")\n" +
		p5 + ": row 3, column \"age\": out of range \"200\" (declared: numeric [17, 91] in 10 bins)\n" +
		p6 + ": row 2, column \"age\": out of range \"1\" (declared: numeric [17, 91] in 10 bins)\n" +
		"hint: --clamp moves numbers out of range (\"age\") to the nearest declared bound, row by row (the count goes to stderr and the internal report, never to a public file)\n" +
		"hint: --unknown-to-other maps unknown categories to the declared other value (\"Other\" of \"race\"), row by row (the count goes to stderr and the internal report, never to a public file)"
	if err.Error() != wantMsg {
		t.Errorf("ReadFile(bad parts) error\n%s\nwant\n%s", err, wantMsg)
	}
	if de.Total != 3 || de.File != p5 || de.Row != 1 {
		t.Errorf("Total %d, File %s, Row %d; want 3, %s, 1", de.Total, de.File, de.Row, p5)
	}
}

func TestPartsErrors(t *testing.T) {
	dom := testDom(t)
	good := []byte("sex,race,age,income,job\nF,a,1,1,x\n")
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	write(t, filepath.Join(empty, "_SUCCESS"), nil)
	_, _, err := ReadFile(context.Background(), empty, dom, Options{})
	var nf *NoFilesError
	if !errors.As(err, &nf) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no data files (1 ignored") {
		t.Errorf("ReadFile(empty folder) = %v, want a *NoFilesError", err)
	}
	if _, _, err := ReadFile(context.Background(), filepath.Join(dir, "nothing-*.csv"), dom, Options{}); !errors.As(err, &nf) {
		t.Errorf("ReadFile(glob without matches) = %v, want a *NoFilesError", err)
	}
	nested := filepath.Join(dir, "nested")
	write(t, filepath.Join(nested, "a.csv"), good)
	write(t, filepath.Join(nested, "year=2020", "b.csv"), good)
	if _, _, err := ReadFile(context.Background(), nested, dom, Options{}); !errors.Is(err, ErrNestedFolder) || !strings.Contains(err.Error(), "year=2020") {
		t.Errorf("ReadFile(nested folder) = %v, want ErrNestedFolder naming it", err)
	}
	mixed := filepath.Join(dir, "mixed")
	write(t, filepath.Join(mixed, "a.csv"), good)
	write(t, filepath.Join(mixed, "b.parquet"), []byte("PAR1"))
	if _, _, err := ReadFile(context.Background(), mixed, dom, Options{}); !errors.Is(err, ErrMixedFormats) {
		t.Errorf("ReadFile(mixed formats) = %v, want ErrMixedFormats", err)
	}
	hollow := filepath.Join(dir, "hollow")
	write(t, filepath.Join(hollow, "a.csv"), []byte("sex,race,age,income,job\n"))
	write(t, filepath.Join(hollow, "b.csv"), nil)
	if _, _, err := ReadFile(context.Background(), hollow, dom, Options{}); !errors.Is(err, ErrNoRows) || !strings.Contains(err.Error(), "none of the 2 part files has a data row") {
		t.Errorf("ReadFile(parts without rows) = %v, want ErrNoRows", err)
	}
	// A malformed part stops the read: the parts after it are not read.
	stop := filepath.Join(dir, "stop")
	write(t, filepath.Join(stop, "a.csv"), []byte("sex,race,age,income,job\nQ,a,1,1,x\n"))
	write(t, filepath.Join(stop, "b.csv"), []byte("sex,race,age,income,job\nF,a,1\n"))
	write(t, filepath.Join(stop, "c.csv"), []byte("sex,race,age,income,job\nQ,a,1,1,x\n"))
	_, _, err = ReadFile(context.Background(), stop, dom, Options{})
	var de *DataError
	if !errors.As(err, &de) || de.Total != 1 || len(de.More) != 1 || de.More[0].File != filepath.Join(stop, "b.csv") || !errors.Is(de.More[0].Err, ErrFieldCount) {
		t.Errorf("ReadFile(malformed part) = %v, want the bad value of a.csv, then b.csv's malformed row", err)
	}
	// A part with other columns is an error naming it.
	cols := filepath.Join(dir, "cols")
	write(t, filepath.Join(cols, "a.csv"), good)
	write(t, filepath.Join(cols, "b.csv"), []byte("sex,race,age,income\nF,a,1,1\n"))
	if _, _, err := ReadFile(context.Background(), cols, dom, Options{}); !errors.Is(err, ErrMissingColumn) || !strings.HasPrefix(err.Error(), filepath.Join(cols, "b.csv")+": header") {
		t.Errorf("ReadFile(part missing a column) = %v", err)
	}
}

func TestCompressed(t *testing.T) {
	dom := testDom(t)
	in := []byte("sex,race,age,income,job\n" + strings.Repeat("F,a,1,1,x\nM,b,42,50,y\n", 5000))
	want, _, err := ReadCSV(context.Background(), bytes.NewReader(in), "t.csv", dom, Options{})
	if err != nil {
		t.Fatal(err)
	}
	gz, zs := gzipped(t, in), zstded(t, in)
	for _, tt := range []struct {
		name string
		b    []byte
	}{{"gzip", gz}, {"zstd", zs}, {"gzip twice (multistream)", append(gzipped(t, in[:24]), gzipped(t, in[24:])...)}} {
		got, st, err := ReadCSV(context.Background(), bytes.NewReader(tt.b), "t.csv", dom, Options{Workers: 2})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if table(got) != table(want) || st.Rows != 10000 {
			t.Errorf("%s: counts %s (%d rows), want %s", tt.name, table(got), st.Rows, table(want))
		}
	}
	// Corrupt or truncated streams are bad data, not I/O errors.
	flipped := bytes.Clone(gz)
	flipped[len(flipped)-6] ^= 0xff // the CRC
	for _, tt := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated gzip", gz[:len(gz)/2], "t.csv: malformed input: corrupt gzip stream: unexpected EOF"},
		{"gzip checksum", flipped, "t.csv: malformed input: corrupt gzip stream: gzip: invalid checksum"},
		{"truncated zstd", zs[:len(zs)/2], "t.csv: malformed input: corrupt zstd stream"},
		{"gzip header only", gz[:4], "t.csv: malformed input: corrupt gzip stream"},
	} {
		_, _, err := ReadCSV(context.Background(), bytes.NewReader(tt.b), "t.csv", dom, Options{})
		var de *DataError
		if !errors.As(err, &de) || !errors.Is(err, ErrMalformed) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: ReadCSV = %v, want a *DataError %q", tt.name, err, tt.want)
		}
	}
}

func TestStdin(t *testing.T) {
	dom := testDom(t)
	in := "sex,race,age,income,job\nF,a,1,1,x\nM,b,42,50,y\n"
	for _, b := range [][]byte{[]byte(in), gzipped(t, []byte(in))} {
		c, st, err := ReadFile(context.Background(), Stdin, dom, Options{Stdin: bytes.NewReader(b)})
		if err != nil || c.Total() != 2 || st.File != "stdin" {
			t.Errorf("ReadFile(-) = %v, %+v, %v; want 2 records from stdin", c, st, err)
		}
	}
	_, _, err := ReadFile(context.Background(), Stdin, dom, Options{Stdin: strings.NewReader("sex,race,age,income,job\nQ,a,1,1,x\n")})
	if err == nil || !strings.HasPrefix(err.Error(), `stdin: row 1, column "sex"`) {
		t.Errorf("ReadFile(-, bad value) = %v, want an error naming stdin", err)
	}
	for _, o := range []Options{{Format: Parquet, Stdin: strings.NewReader("")}, {Stdin: strings.NewReader("PAR1xxxx")}} {
		if _, _, err := ReadFile(context.Background(), Stdin, dom, o); err == nil || !strings.Contains(err.Error(), "random access") {
			t.Errorf("ReadFile(-, Parquet) = %v, want a refusal", err)
		}
	}
}

// TestColumns: Options.Domain projects the domain; ignored table columns
// are skipped, in CSV and in Parquet (where they are not even read).
func TestColumns(t *testing.T) {
	dom := testDom(t) // sex race age income job
	csv := "id,sex,race,age,income,job,zip\n1,F,a,1,1,x,\"999\"\n2,M,b,42,50,y,123\n"
	tests := []struct {
		opts  Options
		attrs string
		want  string // counts or error
	}{
		{Options{Columns: []string{"age", "sex"}}, "sex,age", "[0 0]:1 [1 4]:1"},
		{Options{ExcludeColumns: []string{"race", "income", "job"}, IgnoreExtraColumns: true}, "sex,age", "[0 0]:1 [1 4]:1"},
		{Options{IgnoreExtraColumns: true}, "sex,race,age,income,job", "[0 0 0 0 0]:1 [1 1 4 2 1]:1"},
		{Options{}, "sex,race,age,income,job", `extra column: "id", "zip" are not attributes of the domain; to skip them give --ignore-extra-columns`},
		{Options{ExcludeColumns: []string{"job"}}, "sex,race,age,income", `extra column: "id", "zip"`},
		{Options{Columns: []string{"agee", "sex"}}, "", `--columns: "agee" is not an attribute of the domain (domain attributes: "sex", "race", "age", "income", "job")`},
		{Options{ExcludeColumns: []string{"id"}}, "", `--exclude-columns: "id" is not an attribute of the domain`},
	}
	for _, tt := range tests {
		d, err := tt.opts.Domain(dom)
		if err != nil {
			var ne *universe.NameError
			if !errors.As(err, &ne) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%+v: Domain = %v, want %q", tt.opts, err, tt.want)
			}
			continue
		}
		if got := strings.Join(d.Names(), ","); got != tt.attrs {
			t.Errorf("%+v: attributes %s, want %s", tt.opts, got, tt.attrs)
		}
		c, _, err := ReadCSV(context.Background(), strings.NewReader(csv), "t.csv", d, tt.opts)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = table(c)
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("%+v: ReadCSV = %s, want %s", tt.opts, got, tt.want)
		}
	}

	// Parquet: a wide table with a column of a type ingest cannot read,
	// which --columns leaves unread.
	path := filepath.Join(t.TempDir(), "wide.parquet")
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "blob", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)},
		{Name: "age", Type: arrow.PrimitiveTypes.Int64},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "sex", Type: arrow.BinaryTypes.String},
	}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	lb := rb.Field(0).(*array.ListBuilder)
	for i := range 3 {
		lb.Append(true)
		lb.ValueBuilder().(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.Int64Builder).Append(int64(10 * i))
		rb.Field(2).(*array.Int64Builder).Append(int64(i))
		rb.Field(3).(*array.StringBuilder).Append([]string{"F", "M", "F"}[i])
	}
	writeParquet(t, path, rb.NewRecordBatch())
	rb.Release()
	o := Options{Columns: []string{"sex", "age"}}
	d, err := o.Domain(dom)
	if err != nil {
		t.Fatal(err)
	}
	c, st, err := ReadFile(context.Background(), path, d, o)
	if err != nil {
		t.Fatalf("ReadFile(wide parquet, --columns): %v", err)
	}
	if got := table(c); got != "[0 0]:1 [0 2]:1 [1 1]:1" || st.Rows != 3 {
		t.Errorf("ReadFile(wide parquet, --columns) = %s (%d rows)", got, st.Rows)
	}
	if _, _, err := ReadFile(context.Background(), path, d, Options{}); !errors.Is(err, ErrExtraColumn) || !strings.Contains(err.Error(), `"blob", "id"`) {
		t.Errorf("ReadFile(wide parquet) = %v, want ErrExtraColumn naming blob and id", err)
	}
}
