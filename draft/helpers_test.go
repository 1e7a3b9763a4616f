package draft

import (
	"bytes"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writeCSV writes a CSV file with a header row into t's temporary folder.
func writeCSV(t testing.TB, name string, header []string, cols [][]string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.Write(header)
	for i := range cols[0] {
		rec := make([]string, len(cols))
		for j := range cols {
			rec[j] = cols[j][i]
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// stringRecords returns a schema of string columns and a next function that
// yields cols as batches of at most batch rows.
func stringRecords(names []string, cols [][]string, batch int) (*arrow.Schema, func() (arrow.RecordBatch, error)) {
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: arrow.BinaryTypes.String}
	}
	sc := arrow.NewSchema(fields, nil)
	n := len(cols[0])
	pos := 0
	return sc, func() (arrow.RecordBatch, error) {
		if pos >= n {
			return nil, io.EOF
		}
		end := min(pos+batch, n)
		arrs := make([]arrow.Array, len(cols))
		for j, c := range cols {
			b := array.NewStringBuilder(memory.DefaultAllocator)
			b.AppendValues(c[pos:end], nil)
			arrs[j] = b.NewArray()
		}
		rows := end - pos
		pos = end
		return array.NewRecordBatch(sc, arrs, int64(rows)), nil
	}
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

type arrowBatch = arrow.RecordBatch
