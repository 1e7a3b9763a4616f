// Package benchdata writes large pre-encoded tables for the ingest
// benchmarks. Rows are drawn with replacement from a shipped dataset, so
// that the number of distinct cells stays realistic (at most the dataset's
// distinct rows) however many rows are written.
//
// The draws use a fixed-seed math/rand/v2 PCG: this is test data, not a
// privacy mechanism.
package benchdata

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/universe"
)

// Table is a shipped dataset held in memory.
type Table struct {
	Domain *universe.Domain
	Header []string  // column names in file order
	Rows   [][]int32 // codes in file order
}

// Load reads the shipped dataset called name.
func Load(name string) (*Table, error) {
	ds, err := datasets.Lookup(name)
	if err != nil {
		return nil, err
	}
	db, err := datasets.ReadFile(ds.Domain)
	if err != nil {
		return nil, err
	}
	dom, err := universe.ParseDomain(db)
	if err != nil {
		return nil, err
	}
	data, err := datasets.ReadFile(ds.Data)
	if err != nil {
		return nil, err
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, err
	}
	t := &Table{Domain: dom, Header: recs[0]}
	for _, r := range recs[1:] {
		row := make([]int32, len(r))
		for j, v := range r {
			c, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", ds.Data, err)
			}
			row[j] = int32(c)
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// draw returns the sequence of source rows of a generated table.
func (t *Table) draw(seed uint64) func() []int32 {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	return func() []int32 { return t.Rows[rng.IntN(len(t.Rows))] }
}

// WriteCSV writes n rows (plus the header) drawn from t to w.
func (t *Table) WriteCSV(w io.Writer, n int, seed uint64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	next := t.draw(seed)
	for j, h := range t.Header {
		if j > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(h)
	}
	bw.WriteByte('\n')
	var buf []byte
	for range n {
		buf = buf[:0]
		for j, v := range next() {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, int64(v), 10)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteParquet writes n rows drawn from t to w as a Snappy-compressed
// Parquet file with int32 columns and row groups of groupRows rows.
func (t *Table) WriteParquet(w io.Writer, n, groupRows int, seed uint64) error {
	fields := make([]arrow.Field, len(t.Header))
	for j, h := range t.Header {
		fields[j] = arrow.Field{Name: h, Type: arrow.PrimitiveTypes.Int32}
	}
	sc := arrow.NewSchema(fields, nil)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(int64(groupRows)))
	fw, err := pqarrow.NewFileWriter(sc, w, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	next := t.draw(seed)
	for done := 0; done < n; {
		m := min(groupRows, n-done)
		for range m {
			for j, v := range next() {
				b.Field(j).(*array.Int32Builder).Append(v)
			}
		}
		rec := b.NewRecordBatch()
		err := fw.Write(rec)
		rec.Release()
		if err != nil {
			return err
		}
		done += m
	}
	return fw.Close()
}
