package ingest

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"

	"github.com/dpsynth/synth/universe"
)

// The pipeline. The calling goroutine feeds jobs, in input order, to
// Options.Workers workers. A job is either a record batch (Parquet, Arrow)
// or a chunk of whole CSV records that the worker parses with an Arrow CSV
// reader of its own, so that parsing, the costliest step, uses every core.
// Each worker encodes and counts into a universe.Counts of its own; they
// are merged at the end in cell order, so the result does not depend on
// scheduling.
//
// A job's row numbers are relative to the job: the rows before it are only
// known once every earlier job is done (a CSV chunk's row count is known
// after parsing). Errors are therefore kept as (job, row in job, column),
// the first in input order wins, and the absolute row is resolved at the
// end. Jobs after a known error are skipped; jobs before it always run, so
// that the first error of the file is the one reported.

// source is what the workers need to know about the input.
type source struct {
	file   string
	format Format
	b      *binding
	schema *arrow.Schema // of the record batches
	cols   []column

	// CSV only: the header record, put in front of every chunk so that
	// the chunk's reader holds each record to the header's field count.
	header []byte
	// readErr converts a failure of a reader into a *DataError (with Row
	// relative to the job) or a *ReadError; row is the 1-based row in the
	// job the reader was reading.
	readErr func(err error, row int64) error
}

// job is a unit of work: a record batch or a chunk of CSV records.
type job struct {
	seq   int
	rec   arrow.RecordBatch
	chunk *[]byte // whole CSV records; returned to the pool when parsed
}

// pending is an error found in a job.
type pending struct {
	seq int
	row int64 // 1-based row in the job; 0 when not about a row
	col int   // field, or -1 for a whole row
	err error
}

func (p *pending) before(q *pending) bool {
	if p.seq != q.seq {
		return p.seq < q.seq
	}
	if p.row != q.row {
		return p.row < q.row
	}
	return p.col < q.col
}

// tracker records the rows of each job and the first error.
type tracker struct {
	mu    sync.Mutex
	rows  []int64 // rows of job seq, -1 until done
	first *pending
}

func (t *tracker) add(seq int) {
	t.mu.Lock()
	for len(t.rows) <= seq {
		t.rows = append(t.rows, -1)
	}
	t.mu.Unlock()
}

func (t *tracker) done(seq int, rows int64, p *pending) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rows[seq] = rows
	if p != nil && (t.first == nil || p.before(t.first)) {
		t.first = p
	}
}

// failedBefore reports whether an error is known in a job before seq.
func (t *tracker) failedBefore(seq int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.first != nil && t.first.seq < seq
}

func (t *tracker) failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.first != nil
}

// resolve returns the first error with its absolute row.
func (t *tracker) resolve() error {
	p := t.first
	if de, ok := p.err.(*DataError); ok && p.row > 0 {
		var before int64
		for _, r := range t.rows[:p.seq] {
			before += r
		}
		de.Row = before + p.row
	}
	return p.err
}

// feeder produces the jobs of an input in order. It calls emit for each
// and stops when emit returns false. A failure of the input is returned
// as a *DataError (about the row after the last emitted one) or a
// *ReadError.
type feeder func(emit func(job) bool) error

// column is one input column the workers encode, in input order.
type column struct {
	field int // position in the record batch
	attr  int // attribute index, or -1 for the count column
}

// count runs the pipeline over the jobs of feed.
func count(ctx context.Context, src *source, dom *universe.Domain, opts *Options, feed feeder) (*universe.Counts, *Stats, error) {
	nw := opts.workers()
	jobs := make(chan job, nw)
	var tr tracker
	ws := make([]*worker, nw)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = newWorker(src, dom, opts)
		wg.Go(func() { ws[i].loop(ctx, jobs, &tr) })
	}

	seq := 0
	emit := func(j job) bool {
		if ctx.Err() != nil || tr.failed() {
			j.release()
			return false
		}
		j.seq = seq
		tr.add(seq)
		select {
		case jobs <- j:
			seq++
			return true
		case <-ctx.Done():
			j.release()
			return false
		}
	}
	ferr := feed(emit)
	close(jobs)
	wg.Wait()

	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if ferr != nil {
		tr.add(seq)
		tr.done(seq, 0, &pending{seq: seq, row: 1, col: -1, err: ferr})
	}
	if tr.first != nil {
		return nil, nil, tr.resolve()
	}

	st := &Stats{File: src.file, Format: src.format, Repairs: make([]Repairs, dom.Len())}
	for _, r := range tr.rows {
		st.Rows += r
	}
	if st.Rows == 0 {
		return nil, nil, &DataError{File: src.file, Err: fmt.Errorf("%w: the input has columns but no rows", ErrNoRows)}
	}
	parts := make([]*universe.Counts, nw)
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

func (j *job) release() {
	if j.rec != nil {
		j.rec.Release()
	}
	if j.chunk != nil {
		chunkPool.Put(j.chunk)
	}
}

// ReadRecords counts the record batches of an Arrow record reader (typed
// columns as in ReadParquet); name is used in errors and Stats. It takes
// ownership of nothing: the caller still releases rr. Stats.Format is Auto.
func ReadRecords(ctx context.Context, rr array.RecordReader, name string, dom *universe.Domain, opts Options) (*universe.Counts, *Stats, error) {
	sc := rr.Schema()
	names := make([]string, sc.NumFields())
	for i := range names {
		names[i] = sc.Field(i).Name
	}
	b, err := bind(name, names, dom, opts.CountColumn)
	if err != nil {
		return nil, nil, err
	}
	cols, err := plan(name, sc, b)
	if err != nil {
		return nil, nil, err
	}
	readErr := func(err error, row int64) error { return &ReadError{File: name, Err: err} }
	src := &source{file: name, format: Auto, b: b, schema: sc, cols: cols, readErr: readErr}
	return count(ctx, src, dom, &opts, feedRecords(rr, readErr))
}

// feedRecords feeds the batches of an Arrow record reader.
func feedRecords(rr array.RecordReader, readErr func(error, int64) error) feeder {
	return func(emit func(job) bool) error {
		for rr.Next() {
			rec := rr.RecordBatch()
			if rec.NumRows() == 0 {
				continue
			}
			rec.Retain()
			if !emit(job{rec: rec}) {
				return nil
			}
		}
		if err := rr.Err(); err != nil {
			return readErr(err, 1)
		}
		return nil
	}
}

// plan checks the column types of the schema and lists the columns to
// encode in input order.
func plan(file string, sc *arrow.Schema, b *binding) ([]column, error) {
	attrOf := make(map[int]int, len(b.attrCol)+1)
	for a, f := range b.attrCol {
		attrOf[f] = a
	}
	if b.countCol >= 0 {
		attrOf[b.countCol] = -1
	}
	cols := make([]column, 0, len(attrOf))
	for f := range sc.NumFields() {
		a, ok := attrOf[f]
		if !ok {
			continue
		}
		field := sc.Field(f)
		if !supported(field.Type) {
			return nil, &DataError{File: file, Column: field.Name, Err: fmt.Errorf("%w %s (want strings, integers, floats or a dictionary of them)", ErrColumnType, field.Type)}
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
// are in ascending cell order (lexicographic order of the codes, which is
// the mixed-radix index order).
func mergeSorted(dom *universe.Domain, parts []*universe.Counts) (*universe.Counts, error) {
	type ref struct {
		idx  uint64 // cell index, when the universe is indexable
		p, i int32
	}
	var refs []ref
	indexable := dom.Indexable()
	for pi, p := range parts {
		for i := range p.Distinct() {
			r := ref{p: int32(pi), i: int32(i)}
			if indexable {
				r.idx = p.Index(i)
			}
			refs = append(refs, r)
		}
	}
	if indexable {
		slices.SortFunc(refs, func(x, y ref) int { return cmp.Compare(x.idx, y.idx) })
	} else {
		slices.SortFunc(refs, func(x, y ref) int {
			return slices.Compare(parts[x.p].Codes(int(x.i)), parts[y.p].Codes(int(y.i)))
		})
	}
	out := universe.NewCounts(dom)
	codes := make([]int, dom.Len())
	for _, r := range refs {
		p := parts[r.p]
		for j, v := range p.Codes(int(r.i)) {
			codes[j] = int(v)
		}
		if err := out.Add(codes, p.Count(int(r.i))); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// worker encodes jobs into counts of its own.
type worker struct {
	src     *source
	attrs   []*universe.Attribute
	pol     universe.Policy
	width   int
	batch   int  // rows per record batch when parsing CSV
	counted bool // pre-aggregated input

	counts  *universe.Counts
	codes   []int   // row-major: row i's codes are codes[i*width : (i+1)*width]
	weights []int64 // the count column of the batch
	rep     [][3]int64
	dict    []int // codes of dictionary entries, -1 until used
	dictRep []universe.Repair
}

func newWorker(src *source, dom *universe.Domain, opts *Options) *worker {
	return &worker{
		src: src, attrs: dom.Attrs(), pol: opts.Policy, width: dom.Len(), batch: opts.batchRows(),
		counted: src.b.countCol >= 0,
		counts:  universe.NewCounts(dom),
		rep:     make([][3]int64, dom.Len()),
	}
}

func (w *worker) loop(ctx context.Context, jobs <-chan job, tr *tracker) {
	for j := range jobs {
		var (
			rows int64
			p    *pending
		)
		// Skip work that cannot change the result: after cancellation, or
		// jobs after one already known to be bad.
		if ctx.Err() == nil && !tr.failedBefore(j.seq) {
			rows, p = w.do(&j)
		}
		tr.done(j.seq, rows, p)
		j.release()
	}
}

// do runs one job and returns its number of rows or its first error.
func (w *worker) do(j *job) (int64, *pending) {
	if j.rec != nil {
		if row, col, err := w.encode(j.rec, 0); err != nil {
			return 0, &pending{seq: j.seq, row: row, col: col, err: err}
		}
		return j.rec.NumRows(), nil
	}
	rr := csv.NewReader(io.MultiReader(bytes.NewReader(w.src.header), bytes.NewReader(*j.chunk)), w.src.schema,
		csv.WithHeader(true), csv.WithChunk(w.batch), csv.WithAllocator(batchAllocator))
	defer rr.Release()
	var rows int64
	for rr.Next() {
		rec := rr.RecordBatch()
		if row, col, err := w.encode(rec, rows); err != nil {
			return 0, &pending{seq: j.seq, row: row, col: col, err: err}
		}
		rows += rec.NumRows()
	}
	if err := rr.Err(); err != nil {
		return 0, &pending{seq: j.seq, row: rows + 1, col: -1, err: w.src.readErr(err, rows+1)}
	}
	return rows, nil
}

// encode encodes and counts one record batch whose first row is row
// start+1 of its job. On bad data it returns the row (in the job), the
// field and the error of the first bad value, by row and then by column.
func (w *worker) encode(rec arrow.RecordBatch, start int64) (int64, int, error) {
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
	// value at row i limits the later columns to rows before i.
	limit, bad, badCol := n, error(nil), -1
	for _, c := range w.src.cols {
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
