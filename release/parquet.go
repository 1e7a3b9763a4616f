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
// with s (nil means the zero DecodeSettings): one column per attribute, in
// domain order, named as the attribute: categorical → a dictionary-encoded
// UTF-8 string (BYTE_ARRAY, STRING); integer and encoded → INT64; numeric →
// DOUBLE. Integer, encoded and numeric columns are dictionary-encoded too
// when each code has one value (Point rules, or integer width 1) and the
// attribute has at most 65,536 codes: a column of a few distinct values
// then takes a few bits per row instead of 8 bytes. Attributes with a null
// token are optional (nullable) columns; the others are required.
func Schema(dom *universe.Domain, s *DecodeSettings) *parquet.Schema {
	var set DecodeSettings
	if s != nil {
		set = *s
	}
	fields := make([]orderedField, dom.Len())
	for i, a := range dom.Attrs() {
		var n parquet.Node
		switch a.Kind {
		case universe.Categorical:
			n = parquet.String()
		case universe.Numeric:
			n = parquet.Leaf(parquet.DoubleType)
		default:
			n = parquet.Leaf(parquet.Int64Type)
		}
		if a.Kind == universe.Categorical || !randomValues(a, set) && a.Size() <= dictMax {
			n = parquet.Encoded(n, &parquet.RLEDictionary)
		}
		if a.Nullable {
			n = parquet.Optional(n)
		}
		fields[i] = orderedField{Node: n, name: a.Name, index: i}
	}
	return parquet.NewSchema("synthetic", orderedGroup(fields))
}

// randomValues reports whether a's values are drawn per row (Uniform rules).
func randomValues(a *universe.Attribute, s DecodeSettings) bool {
	return a.Kind == universe.Integer && s.Integer == Uniform && a.Width > 1 ||
		a.Kind == universe.Numeric && s.Numeric == Uniform
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

// column is the per-attribute state of the writer.
type column struct {
	attr     *universe.Attribute
	size     uint64
	table    []parquet.Value // value of each code, levels set; nil → compute
	strs     [][]byte        // categorical values as bytes
	defLevel int             // definition level of a present value
	vals     []parquet.Value // the current batch
	stride   uint64          // mixed-radix stride of the attribute
	random   bool            // values draw from the random source
	err      error
}

// ParquetWriter streams synthetic rows, given as cell indices, into a
// Parquet file with the schema of Schema(dom). Rows are decoded in batches
// and written column by column; a row group is flushed every RowGroupRows
// rows, so memory stays bounded whatever the number of rows.
type ParquetWriter struct {
	w       *parquet.Writer
	dec     *Decoder
	cols    []column
	rgRows  int
	inRG    int
	rows    int64
	closed  bool
	workers int
}

// NewParquetWriter returns a writer of synthetic.parquet to out, decoding
// cells with dec. Call Close to write the footer.
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
	opts := []parquet.WriterOption{
		Schema(dom, &dec.set),
		parquet.Compression(c),
		parquet.CreatedBy("synth", "", ""),
		// Row groups are cut by Flush below; this only guards the limit.
		parquet.MaxRowsPerRowGroup(int64(set.RowGroupRows)),
	}
	for _, kv := range set.Metadata {
		opts = append(opts, parquet.KeyValueMetadata(kv[0], kv[1]))
	}
	cfg, err := parquet.NewWriterConfig(opts...)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	pw := &ParquetWriter{w: parquet.NewWriter(out, cfg), dec: dec, rgRows: set.RowGroupRows,
		workers: min(runtime.GOMAXPROCS(0), dom.Len())}
	pw.cols = make([]column, dom.Len())
	for i, a := range dom.Attrs() {
		col := &pw.cols[i]
		col.attr, col.size = a, uint64(a.Size())
		col.defLevel = 0
		if a.Nullable {
			col.defLevel = 1
		}
		if a.Kind == universe.Categorical {
			col.strs = make([][]byte, len(a.Values))
			for c, v := range a.Values {
				col.strs[c] = []byte(v)
			}
		}
		col.vals = make([]parquet.Value, batchRows)
		col.stride = dom.Strides()[i]
		col.random = randomValues(a, dec.set)
		if !col.random && a.Size() <= tableMax {
			col.table = make([]parquet.Value, a.Size())
			for c := range col.table {
				col.table[c] = pw.value(i, c)
			}
		}
	}
	return pw, nil
}

// value returns the Parquet value of code c of column i, with its levels.
func (pw *ParquetWriter) value(i, c int) parquet.Value {
	col := &pw.cols[i]
	v := pw.dec.Value(i, c)
	var pv parquet.Value
	switch {
	case v.Null:
		return parquet.NullValue().Level(0, 0, i)
	case col.attr.Kind == universe.Categorical:
		pv = parquet.ByteArrayValue(col.strs[c])
	case col.attr.Kind == universe.Numeric:
		pv = parquet.DoubleValue(v.Float)
	default:
		pv = parquet.Int64Value(v.Int)
	}
	return pv.Level(0, col.defLevel, i)
}

// SetMetadata sets a key-value pair of the file footer (the last value set
// for a key wins). It may be called until Close.
func (pw *ParquetWriter) SetMetadata(key, value string) { pw.w.SetKeyValueMetadata(key, value) }

// Rows returns the number of rows written so far.
func (pw *ParquetWriter) Rows() int64 { return pw.rows }

// Write decodes and writes the rows whose cells are given, in order. It
// checks ctx between batches and returns ctx.Err() when it is done.
//
// Columns are independent, so each batch is decoded and encoded column by
// column on up to GOMAXPROCS goroutines. Columns whose values draw from the
// random source (Uniform rules) are all handled by one goroutine, in column
// order, so a seeded run writes the same file every time.
func (pw *ParquetWriter) Write(ctx context.Context, cells []uint32) error {
	if pw.closed {
		panic("release: Write on a closed ParquetWriter")
	}
	k, _ := pw.dec.Domain().Size()
	for _, cell := range cells {
		if uint64(cell) >= k {
			panic(fmt.Sprintf("release: cell %d out of range for a universe of %d cells", cell, k))
		}
	}
	for len(cells) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(cells), batchRows, pw.rgRows-pw.inRG)
		if err := pw.writeBatch(cells[:n]); err != nil {
			return err
		}
		cells = cells[n:]
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

// writeBatch decodes one batch into every column and hands it to the
// column writers, spreading the columns over the workers.
func (pw *ParquetWriter) writeBatch(batch []uint32) error {
	cws := pw.w.ColumnWriters()
	if pw.workers <= 1 {
		for i := range pw.cols {
			pw.writeColumn(i, batch, cws[i])
		}
	} else {
		var wg sync.WaitGroup
		next := make(chan int, len(pw.cols))
		random := -1 // the first random column: its worker takes them all
		for i := range pw.cols {
			switch {
			case !pw.cols[i].random:
				next <- i
			case random < 0:
				random = i
				next <- i
			}
		}
		close(next)
		for range pw.workers {
			wg.Go(func() {
				for i := range next {
					if i != random {
						pw.writeColumn(i, batch, cws[i])
						continue
					}
					for j := range pw.cols {
						if pw.cols[j].random {
							pw.writeColumn(j, batch, cws[j])
						}
					}
				}
			})
		}
		wg.Wait()
	}
	for i := range pw.cols {
		if err := pw.cols[i].err; err != nil {
			pw.cols[i].err = nil
			return fmt.Errorf("parquet: column %q: %w", pw.cols[i].attr.Name, err)
		}
	}
	return nil
}

// writeColumn decodes column i of the batch and writes it.
func (pw *ParquetWriter) writeColumn(i int, batch []uint32, cw *parquet.ColumnWriter) {
	col := &pw.cols[i]
	vals := col.vals[:len(batch)]
	// Cells, strides and sizes fit in 32 bits (Sample refuses more than
	// 2^32 cells), and 32-bit division is the cheaper one.
	stride, size := uint32(col.stride), uint32(col.size)
	if col.table != nil {
		for r, cell := range batch {
			vals[r] = col.table[cell/stride%size]
		}
	} else {
		for r, cell := range batch {
			vals[r] = pw.value(i, int(cell/stride%size))
		}
	}
	_, col.err = cw.WriteRowValues(vals)
}

func (pw *ParquetWriter) flush() error {
	for i, cw := range pw.w.ColumnWriters() {
		if err := cw.Close(); err != nil {
			return fmt.Errorf("parquet: column %q: %w", pw.cols[i].attr.Name, err)
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
