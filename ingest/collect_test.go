package ingest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dpsynth/synth/universe"
)

// TestCollectedErrors: a read lists the first MaxReported bad values in
// file order (row, then column) and counts them all, whatever the number
// of workers, the batch size and the chunk size.
func TestCollectedErrors(t *testing.T) {
	dom := testDom(t)
	var b strings.Builder
	b.WriteString("sex,race,age,income,job\n")
	wantRows := []string{}
	total := 0
	for i := 1; i <= 400; i++ {
		switch {
		case i%37 == 0: // two bad values in one row: age, then race (column order)
			b.WriteString("F,zz,130,1,x\n")
			wantRows = append(wantRows, fmt.Sprintf(`row %d, column "race": unknown category "zz"`, i), fmt.Sprintf(`row %d, column "age": out of range "130"`, i))
			total += 2
		case i%11 == 0:
			b.WriteString("F,a,1,-5,x\n")
			wantRows = append(wantRows, fmt.Sprintf(`row %d, column "income": out of range "-5"`, i))
			total++
		default:
			b.WriteString("M,b,42,50,y\n")
		}
	}
	in := b.String()
	defer func(n int) { chunkBytes = n }(chunkBytes)
	var first string
	for _, cb := range []int{1 << 20, 100} {
		chunkBytes = cb
		for _, o := range []Options{{Workers: 1, ShowValues: true}, {Workers: 3, BatchRows: 1, ShowValues: true}, {Workers: 2, BatchRows: 7, ShowValues: true}} {
			_, _, err := ReadCSV(context.Background(), strings.NewReader(in), "t.csv", dom, o)
			var de *DataError
			if !errors.As(err, &de) {
				t.Fatalf("ReadCSV = %v, want a *DataError", err)
			}
			if de.Total != int64(total) {
				t.Errorf("Total = %d, want %d", de.Total, total)
			}
			vals := de.Values()
			if len(vals) != MaxReported {
				t.Fatalf("%d values listed, want %d", len(vals), MaxReported)
			}
			for i, v := range vals {
				if got := v.Error(); !strings.Contains(got, wantRows[i]) {
					t.Errorf("value %d = %q, want %q", i, got, wantRows[i])
				}
			}
			msg := err.Error()
			for _, w := range []string{
				fmt.Sprintf("%d bad values in all; the first %d are listed", total, MaxReported),
				`hint: --clamp moves numbers out of range ("age", "income")`,
				`hint: --unknown-to-other maps unknown categories to the declared other value ("other" of "race")`,
			} {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if first == "" {
				first = msg
			} else if msg != first {
				t.Errorf("chunk %d, %+v: error\n%s\nwant (as with other settings)\n%s", cb, o, msg, first)
			}
		}
	}
}

// TestCollectedErrorsStop: a malformed row ends the read; the bad values
// before it are listed and it comes last.
func TestCollectedErrorsStop(t *testing.T) {
	dom := testDom(t)
	in := "sex,race,age,income,job\nF,a,1,1,x\nQ,a,1,1,x\nF,a,1,1,x\nF,a,1\nQ,a,1,1,x\n"
	for _, o := range []Options{{Workers: 1, ShowValues: true}, {Workers: 3, BatchRows: 1, ShowValues: true}} {
		_, _, err := ReadCSV(context.Background(), strings.NewReader(in), "t.csv", dom, o)
		var de *DataError
		if !errors.As(err, &de) {
			t.Fatalf("ReadCSV = %v, want a *DataError", err)
		}
		want := "t.csv: row 2, column \"sex\": unknown category \"Q\" (declared: categorical {\"F\", \"M\"})\n" +
			"t.csv: row 4: wrong number of fields: the header has 5\n" +
			"hint: unknown categories of \"sex\": declare them in the domain's \"values\", or declare an \"other\" value and use --unknown-to-other (docs/DOMAIN.md)"
		if err.Error() != want {
			t.Errorf("%+v: ReadCSV error\n%s\nwant\n%s", o, err, want)
		}
		if de.Total != 1 || de.Row != 2 || len(de.More) != 1 || de.More[0].Row != 4 {
			t.Errorf("Total %d, Row %d, More %v; want 1, 2 and one more at row 4", de.Total, de.Row, de.More)
		}
	}
}

// TestHints: each kind of bad value suggests its repair.
func TestHints(t *testing.T) {
	dom, err := universe.ParseDomain([]byte(`{"attributes": [
	  {"name": "c", "type": "encoded", "size": 3},
	  {"name": "s", "type": "categorical", "values": ["a"]},
	  {"name": "n", "type": "numeric", "lower": 0, "upper": 1, "bins": 2}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{"c,s,n\n3,a,0\n", `hint: codes too large for "c": declare the right size in the domain`},
		{"c,s,n\n0,,0\n", `hint: missing values of "s": declare a null token in the domain, e.g. "null": "" for empty fields`},
		{"c,s,n\n0,a,2\n", `hint: --clamp moves numbers out of range ("n")`},
		{"c,s,n\n0,a,x\n", `not a number "x"`},
	}
	for _, tt := range tests {
		_, _, err := ReadCSV(context.Background(), strings.NewReader(tt.in), "t.csv", dom, Options{ShowValues: true})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadCSV(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
	if _, _, err := ReadCSV(context.Background(), strings.NewReader("c,s,n\n0,a,x\n"), "t.csv", dom, Options{ShowValues: true}); err != nil && strings.Contains(err.Error(), "hint") {
		t.Errorf("a value no repair fixes got a hint: %v", err)
	}
}

// TestCollectedErrorsParquet: the same listing for typed record batches,
// over several batches and workers.
func TestCollectedErrorsParquet(t *testing.T) {
	dom := testDom(t)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "sex", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "race", Type: arrow.BinaryTypes.String},
		{Name: "age", Type: arrow.PrimitiveTypes.Int64},
		{Name: "income", Type: arrow.PrimitiveTypes.Float64},
		{Name: "job", Type: arrow.BinaryTypes.String},
	}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	var want []string
	for i := 1; i <= 100; i++ {
		sex, age, income := "F", int64(30), 10.0
		if i%9 == 0 {
			rb.Field(0).(*array.StringBuilder).AppendNull()
			want = append(want, fmt.Sprintf(`row %d, column "sex": missing value`, i))
		} else {
			rb.Field(0).(*array.StringBuilder).Append(sex)
		}
		if i%13 == 0 {
			age = 200
			want = append(want, fmt.Sprintf(`row %d, column "age": out of range "200"`, i))
		}
		if i%13 == 0 || i%17 == 0 {
			income = math.NaN()
			want = append(want, fmt.Sprintf(`row %d, column "income": not finite (NaN or Inf) "NaN"`, i))
		}
		rb.Field(1).(*array.StringBuilder).Append("a")
		rb.Field(2).(*array.Int64Builder).Append(age)
		rb.Field(3).(*array.Float64Builder).Append(income)
		rb.Field(4).(*array.StringBuilder).Append("x")
	}
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeParquet(t, path, rb.NewRecordBatch())
	var first string
	for _, o := range []Options{{Workers: 1, ShowValues: true}, {Workers: 3, BatchRows: 4, ShowValues: true}, {Workers: 2, BatchRows: 1, ShowValues: true}} {
		_, _, err := ReadFile(context.Background(), path, dom, o)
		var de *DataError
		if !errors.As(err, &de) {
			t.Fatalf("ReadFile = %v, want a *DataError", err)
		}
		if de.Total != int64(len(want)) {
			t.Errorf("%+v: Total %d, want %d", o, de.Total, len(want))
		}
		for i, v := range de.Values() {
			if !strings.Contains(v.Error(), want[i]) {
				t.Errorf("%+v: value %d = %q, want %q", o, i, v.Error(), want[i])
			}
		}
		if first == "" {
			first = err.Error()
		} else if err.Error() != first {
			t.Errorf("%+v: error differs from one worker's:\n%s\nwant\n%s", o, err, first)
		}
	}
}
