package release

import (
	"compress/gzip"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dpsynth/synth/universe"
)

// CSVSettings configures NewCSVWriter. The zero value writes plain CSV.
type CSVSettings struct {
	// Gzip compresses the output (gzip, default level); the pipeline sets
	// it when the file name ends in ".gz".
	Gzip bool
}

// GzipName reports whether a file name asks for gzip (it ends in ".gz").
func GzipName(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".gz") }

// CSVWriter streams synthetic rows into CSV: a header row with the column
// names of Columns, then one record per row, quoted as RFC 4180 asks
// (encoding/csv, CRLF line ends). Values: categorical → the category,
// integer → decimal, numeric → Go's shortest round-trip form
// (strconv 'g'), labels as text; the null code → an empty field. Note that
// a category that is the empty string is written as an empty field too,
// so in CSV it reads back as null: declare such a category's null token
// instead, or use Parquet.
//
// Memory: one record and encoding/csv's buffer, whatever the number of
// rows.
type CSVWriter struct {
	dec    *Decoder
	cw     *csv.Writer
	gz     *gzip.Writer
	nattr  int
	rec    []string
	table  [][]string // per column: the text of each code (nil: computed)
	rows   int64
	closed bool
	header bool
}

// NewCSVWriter returns a CSV writer to out, decoding codes with dec. The
// header is written with the first rows (or by Close for an empty table).
//
// Privacy: writing is post-processing of the sampled rows.
func NewCSVWriter(out io.Writer, dec *Decoder, s *CSVSettings) *CSVWriter {
	w := &CSVWriter{dec: dec, nattr: dec.Domain().Len()}
	if s != nil && s.Gzip {
		w.gz = gzip.NewWriter(out)
		out = w.gz
	}
	w.cw = csv.NewWriter(out)
	w.cw.UseCRLF = true
	cols := dec.Columns()
	w.rec = make([]string, len(cols))
	w.table = make([][]string, len(cols))
	for j, c := range cols {
		a := dec.Domain().Attr(c.Attr)
		if c.Random || a.Size() > tableMax {
			continue
		}
		t := make([]string, a.Size())
		for code := range t {
			t[code] = csvText(dec.ColumnValue(j, code), c.Type, a)
		}
		w.table[j] = t
	}
	return w
}

// csvText writes a value of attribute a: dates as YYYY-MM-DD, timestamps
// in RFC 3339 with the offset of the attribute's zone, booleans as
// true/false.
func csvText(v Value, t ColumnType, a *universe.Attribute) string {
	switch {
	case v.Null:
		return ""
	case t == StringColumn:
		return v.Str
	case t == FloatColumn:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	case t == BoolColumn:
		return strconv.FormatBool(v.Int != 0)
	case t == DateColumn:
		return universe.FormatDate(v.Int)
	case t == TimestampColumn:
		return time.UnixMicro(v.Int).In(a.Zone).Format(time.RFC3339Nano)
	}
	return strconv.FormatInt(v.Int, 10)
}

func (w *CSVWriter) writeHeader() error {
	if w.header {
		return nil
	}
	w.header = true
	for j, c := range w.dec.Columns() {
		w.rec[j] = c.Name
	}
	return w.cw.Write(w.rec)
}

// Rows returns the number of rows written so far.
func (w *CSVWriter) Rows() int64 { return w.rows }

// WriteRows writes rows given as codes, row-major: dom.Len() codes per
// row. It checks ctx every batchRows rows.
func (w *CSVWriter) WriteRows(ctx context.Context, rows []int32) error {
	if w.closed {
		panic("release: WriteRows on a closed CSVWriter")
	}
	checkRows(w.dec.Domain(), rows)
	if err := w.writeHeader(); err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	cols := w.dec.Columns()
	for r := 0; r*w.nattr < len(rows); r++ {
		if r%batchRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		row := rows[r*w.nattr : (r+1)*w.nattr]
		for j, c := range cols {
			code := row[c.Attr]
			if t := w.table[j]; t != nil {
				w.rec[j] = t[code]
			} else {
				w.rec[j] = csvText(w.dec.ColumnValue(j, int(code)), c.Type, w.dec.Domain().Attr(c.Attr))
			}
		}
		if err := w.cw.Write(w.rec); err != nil {
			return fmt.Errorf("csv: %w", err)
		}
		w.rows++
	}
	return nil
}

// Write writes the rows whose cells are given (an indexable universe).
func (w *CSVWriter) Write(ctx context.Context, cells []uint32) error {
	return WriteCells(ctx, w, w.dec.Domain(), cells)
}

// Close writes the header if no row came, flushes the buffer and ends the
// gzip stream; it does not close the underlying writer.
func (w *CSVWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if err := w.writeHeader(); err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	w.cw.Flush()
	if err := w.cw.Error(); err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	if w.gz != nil {
		if err := w.gz.Close(); err != nil {
			return fmt.Errorf("csv: gzip: %w", err)
		}
	}
	return nil
}
