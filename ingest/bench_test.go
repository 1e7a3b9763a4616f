package ingest

import (
	"bytes"
	"context"
	"flag"
	"io"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pgo "github.com/parquet-go/parquet-go"

	"github.com/dpsynth/synth/ingest/internal/benchdata"
)

// The benchmarks read an in-memory table of -ingest.rows rows drawn from
// the shipped adult dataset (14 pre-encoded columns). For the 10^7-row
// figures with peak memory use ingest/internal/ingestbench.
var benchRows = flag.Int("ingest.rows", 200_000, "rows of the generated benchmark table")

var bench struct {
	once    sync.Once
	table   *benchdata.Table
	csv     []byte
	parquet []byte
	err     error
}

func benchData(b *testing.B) *benchdata.Table {
	b.Helper()
	bench.once.Do(func() {
		t, err := benchdata.Load("adult")
		if err != nil {
			bench.err = err
			return
		}
		var c, p bytes.Buffer
		if err := t.WriteCSV(&c, *benchRows, 1); err != nil {
			bench.err = err
			return
		}
		if err := t.WriteParquet(&p, *benchRows, 1<<20, 1); err != nil {
			bench.err = err
			return
		}
		bench.table, bench.csv, bench.parquet = t, c.Bytes(), p.Bytes()
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.table
}

func reportRows(b *testing.B, rows int) {
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkReadCSV(b *testing.B) {
	t := benchData(b)
	b.SetBytes(int64(len(bench.csv)))
	b.ReportAllocs()
	for b.Loop() {
		c, _, err := ReadCSV(context.Background(), bytes.NewReader(bench.csv), "bench.csv", t.Domain, Options{})
		if err != nil || c.Total() != int64(*benchRows) {
			b.Fatal(err)
		}
	}
	reportRows(b, *benchRows)
}

// BenchmarkReadCSVCompressed reads the CSV of BenchmarkReadCSV compressed
// with gzip and zstd (default levels); bytes/s count the uncompressed CSV.
func BenchmarkReadCSVCompressed(b *testing.B) {
	t := benchData(b)
	for _, c := range []struct {
		name string
		pack func(testing.TB, []byte) []byte
	}{{"gzip", gzipped}, {"zstd", zstded}} {
		packed := c.pack(b, bench.csv)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(bench.csv)))
			b.ReportAllocs()
			for b.Loop() {
				c, _, err := ReadCSV(context.Background(), bytes.NewReader(packed), "bench.csv", t.Domain, Options{})
				if err != nil || c.Total() != int64(*benchRows) {
					b.Fatal(err)
				}
			}
			reportRows(b, *benchRows)
		})
	}
}

func BenchmarkReadParquet(b *testing.B) {
	t := benchData(b)
	b.SetBytes(int64(len(bench.parquet)))
	b.ReportAllocs()
	for b.Loop() {
		c, _, err := ReadParquet(context.Background(), bytes.NewReader(bench.parquet), "bench.parquet", t.Domain, Options{})
		if err != nil || c.Total() != int64(*benchRows) {
			b.Fatal(err)
		}
	}
	reportRows(b, *benchRows)
}

// BenchmarkParquetDecode compares the two Parquet libraries on the part
// they would do: decoding every column of the file into int32 values,
// in one goroutine. ReadParquet uses pqarrow (see docs/BENCHMARKS.md).
func BenchmarkParquetDecode(b *testing.B) {
	benchData(b)
	b.Run("pqarrow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			pf, err := file.NewParquetReader(bytes.NewReader(bench.parquet))
			if err != nil {
				b.Fatal(err)
			}
			fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: DefaultBatchRows}, memory.DefaultAllocator)
			if err != nil {
				b.Fatal(err)
			}
			rr, err := fr.GetRecordReader(context.Background(), nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			var n int64
			for rr.Next() {
				rec := rr.RecordBatch()
				for _, col := range rec.Columns() {
					for _, v := range col.(*array.Int32).Int32Values() {
						n += int64(v)
					}
				}
			}
			if rr.Err() != nil || n == 0 {
				b.Fatal(rr.Err())
			}
			rr.Release()
			pf.Close()
		}
		reportRows(b, *benchRows)
	})
	b.Run("parquet-go", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]int32, DefaultBatchRows)
		vals := make([]pgo.Value, DefaultBatchRows)
		for b.Loop() {
			f, err := pgo.OpenFile(bytes.NewReader(bench.parquet), int64(len(bench.parquet)))
			if err != nil {
				b.Fatal(err)
			}
			var n int64
			for _, rg := range f.RowGroups() {
				for _, cc := range rg.ColumnChunks() {
					pages := cc.Pages()
					for {
						p, err := pages.ReadPage()
						if err == io.EOF {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						// Typed reads where the page supports them (plain
						// pages); dictionary pages only give generic values.
						if r, ok := p.Values().(pgo.Int32Reader); ok {
							for {
								k, err := r.ReadInt32s(buf)
								for _, v := range buf[:k] {
									n += int64(v)
								}
								if err == io.EOF {
									break
								}
								if err != nil {
									b.Fatal(err)
								}
							}
						} else {
							r := p.Values()
							for {
								k, err := r.ReadValues(vals)
								for _, v := range vals[:k] {
									n += int64(v.Int32())
								}
								if err == io.EOF {
									break
								}
								if err != nil {
									b.Fatal(err)
								}
							}
						}
						pgo.Release(p)
					}
					pages.Close()
				}
			}
			if n == 0 {
				b.Fatal("no values")
			}
		}
		reportRows(b, *benchRows)
	})
}

// BenchmarkEncodeBatch times the workers' hot loop alone: encoding one
// record batch of DefaultBatchRows rows (14 columns) and counting it. After
// the first batch every cell is known, so the loop must not allocate.
func BenchmarkEncodeBatch(b *testing.B) {
	t := benchData(b)
	for _, typ := range []string{"int32", "string"} {
		b.Run(typ, func(b *testing.B) {
			fields := make([]arrow.Field, len(t.Header))
			for j, h := range t.Header {
				fields[j] = arrow.Field{Name: h, Type: arrow.PrimitiveTypes.Int32}
				if typ == "string" {
					fields[j].Type = arrow.BinaryTypes.String
				}
			}
			sc := arrow.NewSchema(fields, nil)
			rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			defer rb.Release()
			for i := range DefaultBatchRows {
				for j, v := range t.Rows[i%len(t.Rows)] {
					switch fb := rb.Field(j).(type) {
					case *array.Int32Builder:
						fb.Append(v)
					case *array.StringBuilder:
						fb.Append(strconv.Itoa(int(v)))
					}
				}
			}
			rec := rb.NewRecordBatch()
			defer rec.Release()
			bnd, err := bind("bench", t.Header, t.Domain, &Options{})
			if err != nil {
				b.Fatal(err)
			}
			cols, err := plan("bench", sc, bnd)
			if err != nil {
				b.Fatal(err)
			}
			w := newWorker(&source{file: "bench", b: bnd, schema: sc, cols: cols}, t.Domain, &Options{})
			w.res = &result{}
			if w.encode(rec); w.res.nbad != 0 || w.res.stop != nil {
				b.Fatalf("bad values in the benchmark batch: %+v", w.res)
			}
			b.ReportAllocs()
			for b.Loop() {
				w.encode(rec)
			}
			if w.res.nbad != 0 || w.res.stop != nil {
				b.Fatalf("bad values in the benchmark batch: %+v", w.res)
			}
			reportRows(b, DefaultBatchRows)
		})
	}
}
