package release

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/dpsynth/synth/universe"
)

// ManifestKey is the Parquet key-value metadata key under which the
// manifest JSON is stored in synthetic.parquet.
const ManifestKey = "synth.manifest"

// DomainKey is the Parquet key-value metadata key under which every
// synthetic Parquet file holds its domain (universe.Domain.MarshalJSON),
// so that the file describes its own codes, bins and null tokens.
const DomainKey = "synth.domain"

// DefaultRowGroupRows is the default number of rows per Parquet row group.
// A row group is held in memory (encoded and compressed) until it is
// flushed, so it bounds the writer's memory: about 1–3 bytes per value
// after dictionary encoding, a few MiB per million rows and column.
const DefaultRowGroupRows = 1 << 20

// batchRows is the number of rows decoded and handed to the column writers
// at a time.
const batchRows = 16384

// ParquetSettings configures WriteParquet and NewParquetWriter. The zero
// value means the documented defaults.
type ParquetSettings struct {
	// RowGroupRows is the number of rows per row group (0 means
	// DefaultRowGroupRows).
	RowGroupRows int
	// Compression is "snappy" (the default, "" ), "zstd", "gzip" or "none".
	Compression string
	// Metadata are key-value pairs stored in the file footer, in order.
	// The manifest goes under ManifestKey; it may also be set later with
	// SetMetadata, up to Close.
	Metadata [][2]string
}

// dictMax is the largest attribute whose integer or real column is
// dictionary-encoded (when its values are the per-code representatives).
const dictMax = 1 << 16

// Schema returns the Parquet schema of the synthetic data for dom, decoded
// with s (nil means the zero DecodeSettings): one column per output column
// (see Columns: one per attribute, in domain order, named as the attribute,
// two for LowerUpper), typed by ColumnType: StringColumn → a
// dictionary-encoded UTF-8 string (BYTE_ARRAY, STRING); IntColumn → INT64;
// FloatColumn → DOUBLE; BoolColumn → BOOLEAN; DateColumn → DATE (INT32);
// TimestampColumn → TIMESTAMP(MICROS, adjusted to UTC). Integer, real,
// date and timestamp columns are dictionary-encoded too
// when each code has one value (not Uniform) and the attribute has at most
// 65,536 codes: a column of a few distinct values then takes a few bits per
// row instead of 8 bytes. Columns of attributes with a null token are
// optional (nullable); the others are required.
func Schema(dom *universe.Domain, s *DecodeSettings) (*parquet.Schema, error) {
	cols, err := Columns(dom, s)
	if err != nil {
		return nil, err
	}
	return schemaOf(dom, cols), nil
}

func schemaOf(dom *universe.Domain, cols []Column) *parquet.Schema {
	fields := make([]orderedField, len(cols))
	for i, c := range cols {
		var n parquet.Node
		switch c.Type {
		case StringColumn:
			n = parquet.String()
		case FloatColumn:
			n = parquet.Leaf(parquet.DoubleType)
		case BoolColumn:
			n = parquet.Leaf(parquet.BooleanType)
		case DateColumn:
			n = parquet.Date()
		case TimestampColumn:
			n = parquet.Timestamp(parquet.Microsecond)
		default:
			n = parquet.Leaf(parquet.Int64Type)
		}
		if c.Type == StringColumn || c.Type != BoolColumn && !c.Random && dom.Attr(c.Attr).Size() <= dictMax {
			n = parquet.Encoded(n, &parquet.RLEDictionary)
		}
		if c.Nullable {
			n = parquet.Optional(n)
		}
		fields[i] = orderedField{Node: n, name: c.Name, index: i}
	}
	return parquet.NewSchema("synthetic", orderedGroup(fields))
}

// orderedGroup is a Parquet group whose fields keep the given order
// (parquet.Group, a map, sorts them by name; the synthetic table keeps the
// domain's column order).
type orderedGroup []orderedField

type orderedField struct {
	parquet.Node
	name  string
	index int
}

func (f *orderedField) Name() string { return f.name }
func (f *orderedField) Value(base reflect.Value) reflect.Value {
	return base.Field(f.index)
}

func (g orderedGroup) ID() int                     { return 0 }
func (g orderedGroup) String() string              { return fmt.Sprint(parquet.NewSchema("", g)) }
func (g orderedGroup) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g orderedGroup) Optional() bool              { return false }
func (g orderedGroup) Repeated() bool              { return false }
func (g orderedGroup) Required() bool              { return true }
func (g orderedGroup) Leaf() bool                  { return false }
func (g orderedGroup) Encoding() encoding.Encoding { return nil }
func (g orderedGroup) Compression() compress.Codec { return nil }
func (g orderedGroup) Fields() []parquet.Field {
	out := make([]parquet.Field, len(g))
	for i := range g {
		out[i] = &g[i]
	}
	return out
}

// GoType is a struct with one exported field per column, in order.
func (g orderedGroup) GoType() reflect.Type {
	fs := make([]reflect.StructField, len(g))
	for i, f := range g {
		fs[i] = reflect.StructField{
			Name: fmt.Sprintf("F%d", i),
			Type: f.GoType(),
			Tag:  reflect.StructTag(fmt.Sprintf(`parquet:%q`, f.name)),
		}
	}
	return reflect.StructOf(fs)
}

func codec(name string) (compress.Codec, error) {
	switch strings.ToLower(name) {
	case "", "snappy":
		return &parquet.Snappy, nil
	case "zstd":
		return &parquet.Zstd, nil
	case "gzip":
		return &parquet.Gzip, nil
	case "none", "uncompressed":
		return &parquet.Uncompressed, nil
	}
	return nil, fmt.Errorf("parquet: unknown compression %q (want snappy, zstd, gzip or none)", name)
}

// tableMax is the largest attribute for which the Parquet values of all
// codes are precomputed.
const tableMax = 1 << 16

// column is the per-column state of the writer.
type column struct {
	Column
	size     int32
	table    []parquet.Value // value of each code, levels set; nil → compute
	strs     [][]byte        // categorical values as bytes
	defLevel int             // definition level of a present value
	vals     []parquet.Value // the current batch
	err      error
}

// ParquetWriter streams synthetic rows into a Parquet file with the schema
// of Schema(dom, settings). Rows come as per-attribute codes (WriteRows) or
// as cell indices of an indexable universe (Write); they are decoded in
// batches and written column by column; a row group is flushed every
// RowGroupRows rows, so memory stays bounded whatever the number of rows.
// The footer holds the domain under DomainKey and the caller's metadata.
type ParquetWriter struct {
	w       *parquet.Writer
	dec     *Decoder
	cols    []column
	nattr   int
	rgRows  int
	inRG    int
	rows    int64
	closed  bool
	workers int
	codes   []int32 // the cell path's decoded batch
}

// NewParquetWriter returns a writer of synthetic.parquet to out, decoding
// codes with dec. Call Close to write the footer.
//
// Privacy: writing is post-processing of the sampled rows.
func NewParquetWriter(out io.Writer, dec *Decoder, s *ParquetSettings) (*ParquetWriter, error) {
	var set ParquetSettings
	if s != nil {
		set = *s
	}
	if set.RowGroupRows < 0 {
		return nil, fmt.Errorf("parquet: negative row group size %d", set.RowGroupRows)
	}
	if set.RowGroupRows == 0 {
		set.RowGroupRows = DefaultRowGroupRows
	}
	c, err := codec(set.Compression)
	if err != nil {
		return nil, err
	}
	dom := dec.Domain()
	domJSON, err := dom.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("parquet: domain: %w", err)
	}
	opts := []parquet.WriterOption{
		schemaOf(dom, dec.Columns()),
		parquet.Compression(c),
		parquet.CreatedBy("synth", "", ""),
		// Row groups are cut by Flush below; this only guards the limit.
		parquet.MaxRowsPerRowGroup(int64(set.RowGroupRows)),
		parquet.KeyValueMetadata(DomainKey, string(domJSON)),
	}
	for _, kv := range set.Metadata {
		opts = append(opts, parquet.KeyValueMetadata(kv[0], kv[1]))
	}
	cfg, err := parquet.NewWriterConfig(opts...)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	dcols := dec.Columns()
	pw := &ParquetWriter{w: parquet.NewWriter(out, cfg), dec: dec, rgRows: set.RowGroupRows,
		nattr: dom.Len(), workers: min(runtime.GOMAXPROCS(0), len(dcols))}
	pw.cols = make([]column, len(dcols))
	for j, dc := range dcols {
		col := &pw.cols[j]
		a := dom.Attr(dc.Attr)
		col.Column, col.size = dc, int32(a.Size())
		if dc.Nullable {
			col.defLevel = 1
		}
		if a.Kind == universe.Categorical {
			col.strs = make([][]byte, len(a.Values))
			for c, v := range a.Values {
				col.strs[c] = []byte(v)
			}
		}
		col.vals = make([]parquet.Value, batchRows)
		if !col.Random && a.Size() <= tableMax {
			col.table = make([]parquet.Value, a.Size())
			for c := range col.table {
				col.table[c] = pw.value(j, c)
			}
		}
	}
	return pw, nil
}

// value returns the Parquet value of code c of column j, with its levels.
func (pw *ParquetWriter) value(j, c int) parquet.Value {
	col := &pw.cols[j]
	v := pw.dec.ColumnValue(j, c)
	var pv parquet.Value
	switch {
	case v.Null:
		return parquet.NullValue().Level(0, 0, j)
	case col.Type == StringColumn && col.strs != nil:
		pv = parquet.ByteArrayValue(col.strs[c])
	case col.Type == StringColumn:
		pv = parquet.ByteArrayValue([]byte(v.Str))
	case col.Type == FloatColumn:
		pv = parquet.DoubleValue(v.Float)
	case col.Type == BoolColumn:
		pv = parquet.BooleanValue(v.Int != 0)
	case col.Type == DateColumn:
		pv = parquet.Int32Value(int32(v.Int))
	default:
		pv = parquet.Int64Value(v.Int)
	}
	return pv.Level(0, col.defLevel, j)
}

// SetMetadata sets a key-value pair of the file footer (the last value set
// for a key wins). It may be called until Close.
func (pw *ParquetWriter) SetMetadata(key, value string) { pw.w.SetKeyValueMetadata(key, value) }

// Rows returns the number of rows written so far.
func (pw *ParquetWriter) Rows() int64 { return pw.rows }

// Write decodes and writes the rows whose cells are given, in order (the
// universe must be indexable). It decodes each batch of cells into codes
// and writes them as WriteRows does.
func (pw *ParquetWriter) Write(ctx context.Context, cells []uint32) error {
	if pw.closed {
		panic("release: Write on a closed ParquetWriter")
	}
	dom := pw.dec.Domain()
	k, ok := dom.Size()
	if !ok {
		return fmt.Errorf("parquet: universe of %s cells has no 64-bit cell index: write rows as codes", universe.FormatCount(dom.SizeBig()))
	}
	for _, cell := range cells {
		if uint64(cell) >= k {
			panic(fmt.Sprintf("release: cell %d out of range for a universe of %d cells", cell, k))
		}
	}
	if pw.codes == nil {
		pw.codes = make([]int32, batchRows*pw.nattr)
	}
	for len(cells) > 0 {
		n := min(len(cells), batchRows)
		cellCodes(dom, cells[:n], pw.codes)
		if err := pw.WriteRows(ctx, pw.codes[:n*pw.nattr]); err != nil {
			return err
		}
		cells = cells[n:]
	}
	return nil
}

// WriteRows writes rows given as codes, row-major: dom.Len() codes per
// row, each in [0, size of its attribute). It checks ctx between batches
// and returns ctx.Err() when it is done.
//
// Columns are independent, so each batch is decoded and encoded column by
// column on up to GOMAXPROCS goroutines. Columns whose values draw from the
// random source (Uniform rules) are all handled by one goroutine, in column
// order, so a seeded run writes the same file every time.
func (pw *ParquetWriter) WriteRows(ctx context.Context, rows []int32) error {
	if pw.closed {
		panic("release: WriteRows on a closed ParquetWriter")
	}
	checkRows(pw.dec.Domain(), rows)
	na := pw.nattr
	for len(rows) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(rows)/na, batchRows, pw.rgRows-pw.inRG)
		if err := pw.writeBatch(rows[:n*na], n); err != nil {
			return err
		}
		rows = rows[n*na:]
		pw.rows += int64(n)
		pw.inRG += n
		if pw.inRG == pw.rgRows {
			if err := pw.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeBatch decodes one batch of n rows into every column and hands it to
// the column writers, spreading the columns over the workers.
func (pw *ParquetWriter) writeBatch(batch []int32, n int) error {
	cws := pw.w.ColumnWriters()
	if pw.workers <= 1 {
		for j := range pw.cols {
			pw.writeColumn(j, batch, n, cws[j])
		}
	} else {
		var wg sync.WaitGroup
		next := make(chan int, len(pw.cols))
		random := -1 // the first random column: its worker takes them all
		for j := range pw.cols {
			switch {
			case !pw.cols[j].Random:
				next <- j
			case random < 0:
				random = j
				next <- j
			}
		}
		close(next)
		for range pw.workers {
			wg.Go(func() {
				for j := range next {
					if j != random {
						pw.writeColumn(j, batch, n, cws[j])
						continue
					}
					for i := range pw.cols {
						if pw.cols[i].Random {
							pw.writeColumn(i, batch, n, cws[i])
						}
					}
				}
			})
		}
		wg.Wait()
	}
	for j := range pw.cols {
		if err := pw.cols[j].err; err != nil {
			pw.cols[j].err = nil
			return fmt.Errorf("parquet: column %q: %w", pw.cols[j].Name, err)
		}
	}
	return nil
}

// writeColumn decodes column j of the batch and writes it.
func (pw *ParquetWriter) writeColumn(j int, batch []int32, n int, cw *parquet.ColumnWriter) {
	col := &pw.cols[j]
	vals := col.vals[:n]
	na, a := pw.nattr, col.Attr
	if col.table != nil {
		for r := range vals {
			vals[r] = col.table[batch[r*na+a]]
		}
	} else {
		for r := range vals {
			vals[r] = pw.value(j, int(batch[r*na+a]))
		}
	}
	_, col.err = cw.WriteRowValues(vals)
}

func (pw *ParquetWriter) flush() error {
	for j, cw := range pw.w.ColumnWriters() {
		if err := cw.Close(); err != nil {
			return fmt.Errorf("parquet: column %q: %w", pw.cols[j].Name, err)
		}
	}
	if err := pw.w.Flush(); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	pw.inRG = 0
	return nil
}

// Close flushes the last row group and writes the footer (with the
// key-value metadata). It does not close the underlying writer.
func (pw *ParquetWriter) Close() error {
	if pw.closed {
		return nil
	}
	pw.closed = true
	if err := pw.w.Close(); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}

// WriteParquet writes the rows whose cells are given to out as a Parquet
// file (see NewParquetWriter) and returns the number of rows written.
func WriteParquet(ctx context.Context, out io.Writer, cells []uint32, dec *Decoder, s *ParquetSettings) (int64, error) {
	pw, err := NewParquetWriter(out, dec, s)
	if err != nil {
		return 0, err
	}
	if err := pw.Write(ctx, cells); err != nil {
		return pw.Rows(), err
	}
	return pw.Rows(), pw.Close()
}
