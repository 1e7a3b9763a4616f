package sqlsrc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dpsynth/synth/ingest"
)

// writeCountsParquet writes columns a (nullable int64), b (nullable int32)
// and count (int64) as Parquet; a negative code stands for NULL.
func writeCountsParquet(t *testing.T, a, b []int64, count []int64) string {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "count", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer bld.Release()
	for i := range count {
		if a[i] < 0 {
			bld.Field(0).AppendNull()
		} else {
			bld.Field(0).(*array.Int64Builder).Append(a[i])
		}
		if b[i] < 0 {
			bld.Field(1).AppendNull()
		} else {
			bld.Field(1).(*array.Int32Builder).Append(int32(b[i]))
		}
		bld.Field(2).(*array.Int64Builder).Append(count[i])
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "counts.parquet")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadMarginalCountsParquet(t *testing.T) {
	dom := mustDomain(t, `{"a": 2, "b": 3}`)
	path := writeCountsParquet(t, []int64{0, 1, -1, -1, -1, -1}, []int64{2, 0, 0, 1, 2, -1}, []int64{4, 6, 1, 2, 7, 10})
	m, err := ReadMarginalCounts(path, dom)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Marginals(context.Background(), [][]int{{0, 1}, {1}, {0}, {}})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int64{{0, 0, 4, 6, 0, 0}, {1, 2, 7}, {4, 6}, {10}}
	for j := range want {
		if !slices.Equal(got[j], want[j]) {
			t.Errorf("Marginals set %d = %v, want %v", j, got[j], want[j])
		}
	}
	bad := writeCountsParquet(t, []int64{0, 5}, []int64{0, 0}, []int64{1, 1})
	var de *ingest.DataError
	if _, err := ReadMarginalCounts(bad, dom); !errors.Is(err, ErrBadCode) || !errors.As(err, &de) || de.Row != 2 || de.Column != "a" {
		t.Errorf("ReadMarginalCounts(code 5) = %v, want ErrBadCode at row 2, column a", err)
	}
}
