package draft

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	stdcsv "encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/zstd"

	"github.com/dpsynth/synth/privacy"
)

// srcType is how a column is held: text (voted on) or typed (kind from the
// schema).
type srcType int

const (
	srcText srcType = iota // CSV fields, Parquet strings and dictionaries of strings
	srcBool
	srcInt
	srcFloat // floats and decimals
	srcDate
	srcTimestamp
)

func (s srcType) String() string {
	return [...]string{"text", "boolean", "integer", "float", "date", "timestamp"}[s]
}

// column holds one drafted column's values, one per row read.
type column struct {
	name     string
	src      srcType
	nullable bool // the schema allows typed nulls
	dt       arrow.DataType
	text     []string  // srcText
	num      []float64 // typed: 0/1, integers, reals, days since 1970-01-01, Unix seconds
	null     []bool    // typed nulls (nil when !nullable)
	intern   map[string]string
}

func (c *column) isNull(i int32) bool { return c.null != nil && c.null[i] }

// table is what a draft reads: the drafted columns and the unit column.
type table struct {
	st       *settings
	cols     []*column
	unitName string
	unit     []string // the unit column as text, one per row
	n        int      // rows read
	skipped  []string // columns of unsupported types
	bytes    uint64   // estimated memory of the values held
}

// rowBytes estimates the memory one row takes in the table: a string
// header per text field, a float64 per number, a bool per nullable typed
// field, and the unit's string header (its text is counted as read).
func (t *table) rowBytes() uint64 {
	b := uint64(0)
	for _, c := range t.cols {
		if c.src == srcText {
			b += 16
		} else {
			b += 8
		}
		if c.nullable {
			b++
		}
	}
	if t.unitName != "" {
		b += 16
	}
	return b
}

// reserve adds n rows (and extra bytes) to the estimate and refuses a
// table over the cap.
func (t *table) reserve(n int, extra uint64) error {
	t.bytes += uint64(n)*t.rowBytes() + extra
	if t.bytes > t.st.MemoryCap {
		return &MemoryError{Rows: int64(t.n + n), Need: t.bytes, Cap: t.st.MemoryCap}
	}
	return nil
}

// srcOf returns how a column of type dt is drafted; ok is false for types
// the draft does not support.
func srcOf(dt arrow.DataType) (srcType, bool) {
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return srcText, true
	case arrow.DICTIONARY:
		switch dt.(*arrow.DictionaryType).ValueType.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
			return srcText, true
		}
	case arrow.BOOL:
		return srcBool, true
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return srcInt, true
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		return srcFloat, true
	case arrow.DATE32, arrow.DATE64:
		return srcDate, true
	case arrow.TIMESTAMP:
		return srcTimestamp, true
	}
	return 0, false
}

// newTable checks the schema against the settings (public inputs only) and
// lays out the columns to draft.
func newTable(schema *arrow.Schema, st *settings) (*table, error) {
	if schema == nil || schema.NumFields() == 0 {
		return nil, errors.New("draft: the table has no columns")
	}
	seen := map[string]bool{}
	for _, f := range schema.Fields() {
		if seen[f.Name] {
			return nil, fmt.Errorf("draft: the table has two columns named %q (a domain's names are unique)", f.Name)
		}
		seen[f.Name] = true
	}
	for _, x := range st.Exclude {
		if !seen[x] {
			return nil, fmt.Errorf("draft: excluded column %q is not a column of the table", x)
		}
	}
	t := &table{st: st, unitName: st.PrivacyUnit}
	if st.PrivacyUnit != "" {
		if !seen[st.PrivacyUnit] {
			return nil, fmt.Errorf("draft: privacy-unit column %q is not a column of the table", st.PrivacyUnit)
		}
		f, _ := schema.FieldsByName(st.PrivacyUnit)
		if _, ok := srcOf(f[0].Type); !ok {
			return nil, fmt.Errorf("draft: privacy-unit column %q has type %s, which cannot identify a unit", st.PrivacyUnit, f[0].Type)
		}
	}
	for _, f := range schema.Fields() {
		if f.Name == st.PrivacyUnit || contains(st.Exclude, f.Name) {
			continue
		}
		src, ok := srcOf(f.Type)
		if !ok {
			t.skipped = append(t.skipped, fmt.Sprintf("column %q: type %s is not drafted (left out of the domain)", f.Name, f.Type))
			continue
		}
		t.cols = append(t.cols, &column{name: f.Name, src: src, nullable: f.Nullable, dt: f.Type})
	}
	if len(t.cols) == 0 {
		return nil, errors.New("draft: no column to draft (all are excluded, the privacy unit or of unsupported types)")
	}
	return t, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (t *table) skippedNotes() []string { return t.skipped }

// append reads one record batch. Columns are found by name, so a batch may
// hold more columns than are drafted, in any order.
func (t *table) append(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	if int64(t.n)+int64(n) > math.MaxInt32 {
		return errors.New("draft: more than 2^31 rows: draft from a sample of the table's files")
	}
	if err := t.reserve(n, 0); err != nil {
		return err
	}
	sc := rec.Schema()
	find := func(name string) (arrow.Array, error) {
		idx := sc.FieldIndices(name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("draft: a record batch has no column %q", name)
		}
		return rec.Column(idx[0]), nil
	}
	for _, c := range t.cols {
		arr, err := find(c.name)
		if err != nil {
			return err
		}
		if err := c.appendArray(arr, t.st.loc); err != nil {
			return fmt.Errorf("draft: column %q: %w", c.name, err)
		}
	}
	if t.unitName != "" {
		arr, err := find(t.unitName)
		if err != nil {
			return err
		}
		get, err := stringGetter(arr)
		if err != nil {
			get = arr.ValueStr // exact text of integers, dates, timestamps
		}
		for i := range n {
			if arr.IsNull(i) || get(i) == "" {
				return fmt.Errorf("draft: row %d: the privacy-unit column %q is empty (every row needs a unit)", t.n+i+1, t.unitName)
			}
			u := strings.Clone(get(i))
			t.unit = append(t.unit, u)
			t.bytes += uint64(len(u))
		}
		if err := t.reserve(0, 0); err != nil {
			return err
		}
	}
	t.n += n
	return nil
}

// maxInterned bounds the distinct strings a column shares between rows.
const maxInterned = 1 << 16

// keep returns a copy of s that does not alias Arrow's buffers, shared
// between the rows of a column while it has few distinct values.
func (c *column) keep(s string) string {
	if v, ok := c.intern[s]; ok {
		return v
	}
	v := strings.Clone(s)
	if len(c.intern) < maxInterned {
		if c.intern == nil {
			c.intern = map[string]string{}
		}
		c.intern[v] = v
	}
	return v
}

// appendArray appends the values of arr (strings are copied: Arrow's
// buffers are not kept).
func (c *column) appendArray(arr arrow.Array, loc *time.Location) error {
	n := arr.Len()
	if !arrow.TypeEqual(arr.DataType(), c.dt) {
		if s, ok := srcOf(arr.DataType()); !ok || s != c.src {
			return fmt.Errorf("type %s in a record batch, %s in the schema", arr.DataType(), c.dt)
		}
	}
	if !c.nullable && arr.NullN() > 0 {
		return errors.New("a null in a column the schema declares not nullable")
	}
	if c.nullable {
		if c.null == nil {
			c.null = make([]bool, len(c.text)+len(c.num))
		}
		for i := range n {
			c.null = append(c.null, arr.IsNull(i))
		}
	}
	if c.src == srcText {
		get, err := stringGetter(arr)
		if err != nil {
			return err
		}
		for i := range n {
			if arr.IsNull(i) {
				c.text = append(c.text, "")
				continue
			}
			c.text = append(c.text, c.keep(get(i)))
		}
		return nil
	}
	start := len(c.num)
	c.num = append(c.num, make([]float64, n)...)
	out := c.num[start:]
	switch a := arr.(type) {
	case *array.Boolean:
		for i := range n {
			if a.Value(i) {
				out[i] = 1
			}
		}
	case *array.Int8:
		fill(out, a.Int8Values())
	case *array.Int16:
		fill(out, a.Int16Values())
	case *array.Int32:
		fill(out, a.Int32Values())
	case *array.Int64:
		fill(out, a.Int64Values())
	case *array.Uint8:
		fill(out, a.Uint8Values())
	case *array.Uint16:
		fill(out, a.Uint16Values())
	case *array.Uint32:
		fill(out, a.Uint32Values())
	case *array.Uint64:
		fill(out, a.Uint64Values())
	case *array.Float16:
		for i, v := range a.Values() {
			out[i] = float64(v.Float32())
		}
	case *array.Float32:
		fill(out, a.Float32Values())
	case *array.Float64:
		copy(out, a.Float64Values())
	case *array.Decimal32:
		decimals(out, a.Values(), a.DataType().(arrow.DecimalType).GetScale())
	case *array.Decimal64:
		decimals(out, a.Values(), a.DataType().(arrow.DecimalType).GetScale())
	case *array.Decimal128:
		decimals(out, a.Values(), a.DataType().(arrow.DecimalType).GetScale())
	case *array.Decimal256:
		decimals(out, a.Values(), a.DataType().(arrow.DecimalType).GetScale())
	case *array.Date32:
		for i, v := range a.Date32Values() {
			out[i] = float64(v)
		}
	case *array.Date64:
		for i, v := range a.Date64Values() {
			out[i] = math.Floor(float64(v) / 86400000)
		}
	case *array.Timestamp:
		tt := a.DataType().(*arrow.TimestampType)
		for i, v := range a.TimestampValues() {
			if a.IsNull(i) {
				continue
			}
			tm := v.ToTime(tt.Unit)
			if tt.TimeZone == "" {
				// A wall-clock time without a zone: read in Settings.TimeZone.
				tm = time.Date(tm.Year(), tm.Month(), tm.Day(), tm.Hour(), tm.Minute(), tm.Second(), tm.Nanosecond(), loc)
			}
			out[i] = unixSeconds(tm)
		}
	default:
		return fmt.Errorf("unsupported array type %s", arr.DataType())
	}
	return nil
}

func fill[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32](out []float64, in []T) {
	for i, v := range in {
		out[i] = float64(v)
	}
}

func decimals[T interface{ ToFloat64(int32) float64 }](out []float64, in []T, scale int32) {
	for i, v := range in {
		out[i] = v.ToFloat64(scale)
	}
}

func unixSeconds(t time.Time) float64 { return float64(t.Unix()) + float64(t.Nanosecond())/1e9 }

// stringGetter returns the string accessor of a string-like array.
func stringGetter(arr arrow.Array) (func(int) string, error) {
	switch a := arr.(type) {
	case *array.String:
		return a.Value, nil
	case *array.LargeString:
		return a.Value, nil
	case *array.StringView:
		return a.Value, nil
	case *array.Dictionary:
		get, err := stringGetter(a.Dictionary())
		if err != nil {
			return nil, err
		}
		return func(i int) string { return get(a.GetValueIndex(i)) }, nil
	}
	return nil, fmt.Errorf("type %s is not a string type", arr.DataType())
}

// File drafts a domain for a CSV file (.csv, also compressed with gzip or
// zstd: .csv.gz, .csv.zst, recognised by their first bytes) or a Parquet
// file (.parquet, .pq), chosen by the name's extension. A CSV file's first
// record is its header and every field is read as text (Arrow's CSV reader
// with every column STRING); a Parquet file is read through pqarrow. With
// Settings.Epsilon == 0 only the header (CSV) or the footer's schema
// (Parquet) is read: no row.
func File(ctx context.Context, path string, s Settings, r *privacy.Rand) (*Draft, error) {
	st, err := s.check()
	if err != nil {
		return nil, err
	}
	name := strings.ToLower(filepath.Base(path))
	var d *Draft
	switch {
	case strings.HasSuffix(name, ".parquet") || strings.HasSuffix(name, ".pq"):
		d, err = parquetFile(ctx, path, st, r)
	case strings.HasSuffix(name, ".csv") || strings.HasSuffix(name, ".csv.gz") ||
		strings.HasSuffix(name, ".csv.zst") || strings.HasSuffix(name, ".csv.zstd"):
		d, err = csvFile(ctx, path, st, r)
	default:
		return nil, fmt.Errorf("draft: %s: unknown file type (want .csv, .csv.gz, .csv.zst or .parquet)", path)
	}
	if err != nil && !strings.HasPrefix(err.Error(), "draft: ") {
		err = fmt.Errorf("draft: %s: %w", path, err)
	}
	return d, err
}

// openText opens a CSV file, decompresses it when it starts with the gzip
// or zstd magic bytes, and drops a UTF-8 byte order mark.
func openText(path string) (io.Reader, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	closers := []func(){func() { f.Close() }}
	done := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	br := bufio.NewReaderSize(f, 1<<16)
	magic, _ := br.Peek(4)
	var rd io.Reader = br
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		zr, err := gzip.NewReader(br)
		if err != nil {
			done()
			return nil, nil, err
		}
		closers = append(closers, func() { zr.Close() })
		rd = bufio.NewReaderSize(zr, 1<<16)
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br)
		if err != nil {
			done()
			return nil, nil, err
		}
		closers = append(closers, zr.Close)
		rd = bufio.NewReaderSize(zr, 1<<16)
	}
	b := rd.(*bufio.Reader)
	if bom, _ := b.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		b.Discard(3)
	}
	return b, done, nil
}

// csvHeader reads the header record only.
func csvHeader(path string) ([]string, error) {
	rd, done, err := openText(path)
	if err != nil {
		return nil, err
	}
	defer done()
	cr := stdcsv.NewReader(rd)
	cr.FieldsPerRecord = -1
	names, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("empty file: no header row")
	}
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	return names, nil
}

func csvFile(ctx context.Context, path string, st *settings, r *privacy.Rand) (*Draft, error) {
	names, err := csvHeader(path)
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: arrow.BinaryTypes.String}
	}
	schema := arrow.NewSchema(fields, nil)
	if st.Epsilon == 0 {
		return Records(ctx, schema, nil, st.Settings, r)
	}
	rd, done, err := openText(path)
	if err != nil {
		return nil, err
	}
	defer done()
	cr := csv.NewReader(rd, schema, csv.WithHeader(true), csv.WithChunk(1<<14), csv.WithNullReader(false))
	defer cr.Release()
	next := func() (arrow.RecordBatch, error) {
		if cr.Next() {
			return cr.RecordBatch(), nil
		}
		if err := cr.Err(); err != nil {
			var pe *stdcsv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("line %d: %w", pe.Line, pe.Err)
			}
			return nil, err
		}
		return nil, io.EOF
	}
	return Records(ctx, schema, next, st.Settings, r)
}

func parquetFile(ctx context.Context, path string, st *settings, r *privacy.Rand) (*Draft, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 14}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	schema, err := fr.Schema()
	if err != nil {
		return nil, err
	}
	if st.Epsilon == 0 {
		return Records(ctx, schema, nil, st.Settings, r)
	}
	// Read only the columns the draft uses (drafted and unit), when they
	// are all leaves of the Parquet schema.
	t, err := newTable(schema, st)
	if err != nil {
		return nil, err
	}
	if rows := pf.NumRows(); uint64(rows)*t.rowBytes() > st.MemoryCap {
		return nil, &MemoryError{Rows: rows, Need: uint64(rows) * t.rowBytes(), Cap: st.MemoryCap, BeforeRead: true}
	}
	want := map[string]bool{st.PrivacyUnit: st.PrivacyUnit != ""}
	for _, c := range t.cols {
		want[c.name] = true
	}
	var leaves []int
	for i, f := range schema.Fields() {
		if !want[f.Name] {
			continue
		}
		if ci := fr.Manifest.Fields[i].ColIndex; ci >= 0 && len(fr.Manifest.Fields[i].Children) == 0 {
			leaves = append(leaves, ci)
		} else {
			leaves = nil
			break
		}
	}
	if len(leaves) == 0 {
		leaves = nil
	}
	rr, err := fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	next := func() (arrow.RecordBatch, error) {
		if rr.Next() {
			return rr.RecordBatch(), nil
		}
		if err := rr.Err(); err != nil && err != io.EOF {
			return nil, err
		}
		return nil, io.EOF
	}
	return Records(ctx, schema, next, st.Settings, r)
}
