package ingest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dpsynth/synth/universe"
)

// source is a stream of record batches plus what the pipeline needs to
// report on it.
type source struct {
	file   string
	format Format
	rr     array.RecordReader
	b      *binding
	// readErr converts a failure of rr into a *DataError or a *ReadError;
	// row is the 1-based data row the reader was reading.
	readErr func(err error, row int64) error
}

// job is one record batch and the number of rows before it.
type job struct {
	rec   arrow.RecordBatch
	start int64
}

// firstErr keeps the error of the earliest row (and leftmost column).
type firstErr struct {
	mu  sync.Mutex
	row atomic.Int64 // math.MaxInt64 while there is no error
	col int
	err error
}

func (f *firstErr) set(row int64, col int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.row.Load()
	if f.err == nil || row < cur || row == cur && col < f.col {
		f.err, f.col = err, col
		f.row.Store(row)
	}
}

// column is one input column the workers encode, in input order.
type column struct {
	field int // position in the record batch
	attr  int // attribute index, or -1 for the count column
}

// count runs the pipeline: the calling goroutine pulls record batches from
// the source and hands them to workers, each of which encodes whole batches
// into counts of its own; the counts are merged at the end.
func count(ctx context.Context, src *source, dom *universe.Domain, opts *Options) (*universe.Counts, *Stats, error) {
	cols, err := plan(src, dom)
	if err != nil {
		return nil, nil, err
	}
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	nw := opts.workers()
	jobs := make(chan job, nw)
	var fe firstErr
	fe.row.Store(math.MaxInt64)
	ws := make([]*worker, nw)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = newWorker(src, dom, cols, opts)
		wg.Go(func() { ws[i].loop(inner, jobs, &fe) })
	}

	var rows int64
	stopped := false
	for !stopped && src.rr.Next() {
		rec := src.rr.RecordBatch()
		n := rec.NumRows()
		if n == 0 {
			continue
		}
		rec.Retain()
		select {
		case jobs <- job{rec: rec, start: rows}:
			rows += n
			// Every row of the batches handed out so far is before any
			// error the workers may have found: stop reading.
			stopped = fe.row.Load() != math.MaxInt64
		case <-inner.Done():
			rec.Release()
			stopped = true
		}
	}
	close(jobs)
	wg.Wait()

	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if fe.err != nil {
		return nil, nil, fe.err
	}
	if err := src.rr.Err(); err != nil {
		return nil, nil, src.readErr(err, rows+1)
	}
	if rows == 0 {
		return nil, nil, &DataError{File: src.file, Err: fmt.Errorf("%w: the input has columns but no rows", ErrNoRows)}
	}

	parts := make([]*universe.Counts, nw)
	st := &Stats{File: src.file, Format: src.format, Rows: rows, Repairs: make([]Repairs, dom.Len())}
	for i, w := range ws {
		parts[i] = w.counts
		for a := range st.Repairs {
			st.Repairs[a].Clamped += w.rep[a][universe.Clamped]
			st.Repairs[a].MappedToOther += w.rep[a][universe.MappedToOther]
		}
	}
	for a := range st.Repairs {
		st.Repairs[a].Attribute = dom.Attr(a).Name
	}
	c, err := mergeSorted(dom, parts)
	if err != nil {
		return nil, nil, &DataError{File: src.file, Column: opts.CountColumn, Err: ErrCountOverflows}
	}
	st.N, st.Distinct = c.Total(), c.Distinct()
	return c, st, nil
}

// plan checks the column types and returns the columns to encode in input
// order.
func plan(src *source, dom *universe.Domain) ([]column, error) {
	sc := src.rr.Schema()
	byField := make(map[int]int, dom.Len()+1)
	for a, f := range src.b.attrCol {
		byField[f] = a
	}
	if src.b.countCol >= 0 {
		byField[src.b.countCol] = -1
	}
	cols := make([]column, 0, len(byField))
	for f := range sc.NumFields() {
		a, ok := byField[f]
		if !ok {
			continue // not bound: only possible for readers that drop no column
		}
		field := sc.Field(f)
		if !supported(field.Type) {
			return nil, &DataError{File: src.file, Column: field.Name, Err: fmt.Errorf("%w %s (want strings, integers, floats or a dictionary of them)", ErrColumnType, field.Type)}
		}
		cols = append(cols, column{field: f, attr: a})
	}
	return cols, nil
}

func supported(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW,
		arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64:
		return true
	case arrow.DICTIONARY:
		return supported(t.(*arrow.DictionaryType).ValueType)
	}
	return false
}

// mergeSorted merges the workers' counts into one histogram whose entries
// are in ascending cell order, so that the result does not depend on how
// batches were shared out.
func mergeSorted(dom *universe.Domain, parts []*universe.Counts) (*universe.Counts, error) {
	type ref struct {
		p *universe.Counts
		i int
	}
	var refs []ref
	for _, p := range parts {
		for i := range p.Distinct() {
			refs = append(refs, ref{p, i})
		}
	}
	slices.SortFunc(refs, func(x, y ref) int { return slices.Compare(x.p.Codes(x.i), y.p.Codes(y.i)) })
	out := universe.NewCounts(dom)
	codes := make([]int, dom.Len())
	for _, r := range refs {
		for j, v := range r.p.Codes(r.i) {
			codes[j] = int(v)
		}
		if err := out.Add(codes, r.p.Count(r.i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// worker encodes whole batches into counts of its own.
type worker struct {
	src     *source
	dom     *universe.Domain
	attrs   []*universe.Attribute
	cols    []column
	pol     universe.Policy
	width   int
	counted bool // pre-aggregated input

	counts  *universe.Counts
	codes   []int   // row-major: row i's codes are codes[i*width : (i+1)*width]
	weights []int64 // count column of the batch
	rep     [][3]int64
	dict    []int            // codes of dictionary entries, -1 until used
	dictRep []universe.Repair
}

func newWorker(src *source, dom *universe.Domain, cols []column, opts *Options) *worker {
	return &worker{
		src: src, dom: dom, attrs: dom.Attrs(), cols: cols, pol: opts.Policy, width: dom.Len(),
		counted: src.b.countCol >= 0,
		counts:  universe.NewCounts(dom),
		rep:     make([][3]int64, dom.Len()),
	}
}

func (w *worker) loop(ctx context.Context, jobs <-chan job, fe *firstErr) {
	for j := range jobs {
		// Skip work that cannot change the result: after cancellation, or
		// batches that start after a row already known to be bad.
		if ctx.Err() == nil && j.start < fe.row.Load() {
			if row, col, err := w.batch(j.rec, j.start); err != nil {
				fe.set(row, col, err)
			}
		}
		j.rec.Release()
	}
}

// batch encodes and counts one record batch. On bad data it returns the
// 1-based row, the field and the error of the first bad value (by row,
// then by column).
func (w *worker) batch(rec arrow.RecordBatch, start int64) (int64, int, error) {
	n := int(rec.NumRows())
	if need := n * w.width; cap(w.codes) < need {
		w.codes = make([]int, need)
	}
	w.codes = w.codes[:n*w.width]
	if w.counted {
		if cap(w.weights) < n {
			w.weights = make([]int64, n)
		}
		w.weights = w.weights[:n]
	}
	// Encode column by column (one type switch per column and batch). A bad
	// value at row i limits the later columns to rows before i, so the error
	// kept is the first by row and, within the row, by column.
	limit, bad, badCol := n, error(nil), -1
	for _, c := range w.cols {
		arr := rec.Column(c.field)
		var (
			i   int
			err error
		)
		if c.attr >= 0 {
			i, err = w.encodeColumn(c.attr, arr, limit)
		} else {
			i, err = w.encodeCounts(arr, limit)
		}
		if err != nil {
			limit, bad, badCol = i, err, c.field
		}
	}
	if bad != nil {
		row := start + int64(limit) + 1
		return row, badCol, &DataError{File: w.src.file, Row: row, Column: w.src.b.names[badCol], Err: detach(bad)}
	}
	for i := range n {
		weight := int64(1)
		if w.counted {
			if weight = w.weights[i]; weight == 0 {
				continue
			}
		}
		if err := w.counts.Add(w.codes[i*w.width:(i+1)*w.width], weight); err != nil {
			row := start + int64(i) + 1
			return row, w.src.b.countCol, &DataError{File: w.src.file, Row: row, Column: w.src.b.names[w.src.b.countCol], Err: ErrCountOverflows}
		}
	}
	return 0, 0, nil
}

// detach copies the value of a *universe.ValueError out of the batch's
// memory, which is released after the batch.
func detach(err error) error {
	var ve *universe.ValueError
	if errors.As(err, &ve) {
		c := *ve
		c.Value = strings.Clone(ve.Value)
		return &c
	}
	return err
}

// encodeFunc returns the code of row i of a column (never null).
type encodeFunc func(i int) (int, universe.Repair, error)

// fill writes the codes of rows 0..n-1 of a column for attribute attr and
// returns n, or the first bad row and its error.
func (w *worker) fill(attr int, arr arrow.Array, n int, enc encodeFunc) (int, error) {
	a := w.attrs[attr]
	nulls := arr.NullN() > 0
	codes, width, rep := w.codes, w.width, &w.rep[attr]
	for i := range n {
		var (
			c   int
			r   universe.Repair
			err error
		)
		if nulls && arr.IsNull(i) {
			c, err = a.EncodeNull()
		} else {
			c, r, err = enc(i)
		}
		if err != nil {
			return i, err
		}
		codes[i*width+attr] = c
		rep[r]++
	}
	return n, nil
}

// encodeColumn encodes rows 0..n-1 of a column for attribute attr.
func (w *worker) encodeColumn(attr int, arr arrow.Array, n int) (int, error) {
	a, p := w.attrs[attr], w.pol
	switch arr := arr.(type) {
	case *array.String:
		return w.fill(attr, arr, n, func(i int) (int, universe.Repair, error) { return a.EncodeString(arr.Value(i), p) })
	case *array.LargeString:
		return w.fill(attr, arr, n, func(i int) (int, universe.Repair, error) { return a.EncodeString(arr.Value(i), p) })
	case *array.StringView:
		return w.fill(attr, arr, n, func(i int) (int, universe.Repair, error) { return a.EncodeString(arr.Value(i), p) })
	case *array.Int8:
		return fillInts(w, attr, arr, n, arr.Int8Values())
	case *array.Int16:
		return fillInts(w, attr, arr, n, arr.Int16Values())
	case *array.Int32:
		return fillInts(w, attr, arr, n, arr.Int32Values())
	case *array.Int64:
		return fillInts(w, attr, arr, n, arr.Int64Values())
	case *array.Uint8:
		return fillInts(w, attr, arr, n, arr.Uint8Values())
	case *array.Uint16:
		return fillInts(w, attr, arr, n, arr.Uint16Values())
	case *array.Uint32:
		return fillInts(w, attr, arr, n, arr.Uint32Values())
	case *array.Uint64:
		v := arr.Uint64Values()
		return w.fill(attr, arr, n, func(i int) (int, universe.Repair, error) {
			if v[i] > math.MaxInt64 {
				return a.EncodeFloat(float64(v[i]), p)
			}
			return a.EncodeInt(int64(v[i]), p)
		})
	case *array.Float32:
		v := arr.Float32Values()
		return w.fill(attr, arr, n, func(i int) (int, universe.Repair, error) { return a.EncodeFloat(float64(v[i]), p) })
	case *array.Float64:
		v := arr.Float64Values()
		return w.fill(attr, arr, n, func(i int) (int, universe.Repair, error) { return a.EncodeFloat(v[i], p) })
	case *array.Dictionary:
		return w.fillDict(attr, arr, n)
	}
	panic(fmt.Sprintf("ingest: column type %s passed the type check", arr.DataType()))
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32
}

func fillInts[T integer](w *worker, attr int, arr arrow.Array, n int, v []T) (int, error) {
	a, p := w.attrs[attr], w.pol
	return w.fill(attr, arr, n, func(i int) (int, universe.Repair, error) { return a.EncodeInt(int64(v[i]), p) })
}

// fillDict encodes a dictionary column: each dictionary entry is encoded
// once, on first use, so entries no row uses are never checked.
func (w *worker) fillDict(attr int, arr *array.Dictionary, n int) (int, error) {
	a, p := w.attrs[attr], w.pol
	dict := arr.Dictionary()
	m := dict.Len()
	if cap(w.dict) < m {
		w.dict, w.dictRep = make([]int, m), make([]universe.Repair, m)
	}
	dc, dr := w.dict[:m], w.dictRep[:m]
	for k := range dc {
		dc[k] = -1
	}
	return w.fill(attr, arr, n, func(i int) (int, universe.Repair, error) {
		k := arr.GetValueIndex(i)
		if dc[k] < 0 {
			c, r, err := encodeAt(a, dict, k, p)
			if err != nil {
				return c, r, err
			}
			dc[k], dr[k] = c, r
		}
		return dc[k], dr[k], nil
	})
}

// encodeAt encodes value i of any supported column (the slow path, used
// for dictionary entries).
func encodeAt(a *universe.Attribute, arr arrow.Array, i int, p universe.Policy) (int, universe.Repair, error) {
	if arr.IsNull(i) {
		c, err := a.EncodeNull()
		return c, universe.NoRepair, err
	}
	switch arr := arr.(type) {
	case *array.String:
		return a.EncodeString(arr.Value(i), p)
	case *array.LargeString:
		return a.EncodeString(arr.Value(i), p)
	case *array.StringView:
		return a.EncodeString(arr.Value(i), p)
	case *array.Uint64:
		if v := arr.Value(i); v > math.MaxInt64 {
			return a.EncodeFloat(float64(v), p)
		}
		return a.EncodeInt(int64(arr.Value(i)), p)
	case *array.Float32:
		return a.EncodeFloat(float64(arr.Value(i)), p)
	case *array.Float64:
		return a.EncodeFloat(arr.Value(i), p)
	}
	if v, ok := intAt(arr, i); ok {
		return a.EncodeInt(v, p)
	}
	panic(fmt.Sprintf("ingest: column type %s passed the type check", arr.DataType()))
}

func intAt(arr arrow.Array, i int) (int64, bool) {
	switch arr := arr.(type) {
	case *array.Int8:
		return int64(arr.Value(i)), true
	case *array.Int16:
		return int64(arr.Value(i)), true
	case *array.Int32:
		return int64(arr.Value(i)), true
	case *array.Int64:
		return arr.Value(i), true
	case *array.Uint8:
		return int64(arr.Value(i)), true
	case *array.Uint16:
		return int64(arr.Value(i)), true
	case *array.Uint32:
		return int64(arr.Value(i)), true
	}
	return 0, false
}

// encodeCounts reads rows 0..n-1 of the count column into w.weights.
func (w *worker) encodeCounts(arr arrow.Array, n int) (int, error) {
	if d, ok := arr.(*array.Dictionary); ok {
		dict := d.Dictionary()
		for i := range n {
			if d.IsNull(i) {
				return i, badCount("", true)
			}
			c, err := countAt(dict, d.GetValueIndex(i))
			if err != nil {
				return i, err
			}
			w.weights[i] = c
		}
		return n, nil
	}
	for i := range n {
		c, err := countAt(arr, i)
		if err != nil {
			return i, err
		}
		w.weights[i] = c
	}
	return n, nil
}

// countAt returns the count in value i of a count column.
func countAt(arr arrow.Array, i int) (int64, error) {
	if arr.IsNull(i) {
		return 0, badCount("", true)
	}
	switch arr := arr.(type) {
	case *array.String:
		return parseCount(arr.Value(i))
	case *array.LargeString:
		return parseCount(arr.Value(i))
	case *array.StringView:
		return parseCount(arr.Value(i))
	case *array.Uint64:
		if v := arr.Value(i); v > math.MaxInt64 {
			return 0, badCount(strconv.FormatUint(v, 10), false)
		}
		return int64(arr.Value(i)), nil
	case *array.Float32:
		return floatCount(float64(arr.Value(i)))
	case *array.Float64:
		return floatCount(arr.Value(i))
	}
	if v, ok := intAt(arr, i); ok {
		if v < 0 {
			return 0, badCount(strconv.FormatInt(v, 10), false)
		}
		return v, nil
	}
	panic(fmt.Sprintf("ingest: column type %s passed the type check", arr.DataType()))
}

// parseCount parses a textual count: a non-negative integer, written as
// an integer or as an integral float ("12", "12.0", "1.2e1").
func parseCount(s string) (int64, error) {
	t := strings.Trim(s, " \t")
	if v, err := strconv.ParseInt(t, 10, 64); err == nil {
		if v < 0 {
			return 0, badCount(s, false)
		}
		return v, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" {
		return 0, badCount(s, t == "")
	}
	c, err := floatCount(f)
	if err != nil {
		return 0, badCount(s, false)
	}
	return c, nil
}

func floatCount(f float64) (int64, error) {
	if !(f >= 0) || f != math.Trunc(f) || f >= 9.2233720368547758e18 {
		return 0, badCount(strconv.FormatFloat(f, 'g', -1, 64), false)
	}
	return int64(f), nil
}

func badCount(v string, missing bool) error {
	if missing {
		return fmt.Errorf("%w, got a missing value", ErrBadCount)
	}
	return fmt.Errorf("%w, got %q", ErrBadCount, strings.Clone(v))
}
