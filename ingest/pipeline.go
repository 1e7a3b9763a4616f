package ingest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"

	"github.com/dpsynth/synth/contrib"
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
// Bad values do not stop the read: each job keeps its first MaxReported
// bad values (by row, then column) and counts the others, so that the
// first MaxReported of the input and the total are known at the end
// whatever the scheduling. An error that is not about a value (a malformed
// row, an I/O error) ends the job: jobs after it are skipped and their
// findings dropped; jobs before it always run.
//
// A job's row numbers are relative to the job: the rows before it are only
// known once every earlier job is done (a CSV chunk's row count is known
// after parsing), so absolute rows are resolved at the end.

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
	row int64 // 1-based row in the job; 0 when not about a row
	col int   // field, or -1 for a whole row
	err error
}

func (p *pending) cmp(q *pending) int {
	if c := cmp.Compare(p.row, q.row); c != 0 {
		return c
	}
	return cmp.Compare(p.col, q.col)
}

// result is what a job found.
type result struct {
	rows int64
	bad  []pending // its first MaxReported bad values, by row and column
	nbad int64     // all its bad values
	sugg []suggestion
	stop *pending // the error that ended it, if one did
}

// tracker collects the results of the jobs.
type tracker struct {
	mu      sync.Mutex
	res     []*result // of job seq, nil until done
	stopped int       // the first job known to have ended on an error, or -1
}

func (t *tracker) add(seq int) {
	t.mu.Lock()
	for len(t.res) <= seq {
		t.res = append(t.res, nil)
	}
	t.mu.Unlock()
}

func (t *tracker) done(seq int, r *result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.res[seq] = r
	if r.stop != nil && (t.stopped < 0 || seq < t.stopped) {
		t.stopped = seq
	}
}

// stoppedBefore reports whether a job before seq ended on an error.
func (t *tracker) stoppedBefore(seq int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stopped >= 0 && t.stopped < seq
}

func (t *tracker) anyStopped() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stopped >= 0
}

// resolve returns the error of the read, if any: a *ReadError that ended
// it, or a *DataError listing its first bad values (absolute rows) and the
// error that ended it.
func (t *tracker) resolve(file string) error {
	last := len(t.res) - 1
	if t.stopped >= 0 {
		last = t.stopped
	}
	var (
		vals   []*DataError
		total  int64
		sugg   []suggestion
		before int64
		stop   error
	)
	abs := func(p *pending) error {
		if de, ok := p.err.(*DataError); ok && p.row > 0 {
			de.Row = before + p.row
		}
		return p.err
	}
	for _, r := range t.res[:last+1] {
		for i := range r.bad {
			if len(vals) < MaxReported {
				vals = append(vals, abs(&r.bad[i]).(*DataError))
			}
		}
		total += r.nbad
		sugg = addSuggestions(sugg, r.sugg...)
		if r.stop != nil {
			stop = abs(r.stop)
		}
		before += r.rows
	}
	if _, ok := stop.(*ReadError); ok {
		return stop
	}
	if stop != nil {
		vals = append(vals, stop.(*DataError))
	}
	if len(vals) == 0 {
		return nil
	}
	first := vals[0]
	first.More, first.Total, first.sugg, first.Hints = vals[1:], total, sugg, hints(sugg)
	return first
}

// feeder produces the jobs of an input in order. It calls emit for each
// and stops when emit returns false. A failure of the input is returned
// as a *DataError (about the row after the last emitted one) or a
// *ReadError.
type feeder func(emit func(job) bool) error

// column is one input column the workers encode, in input order.
type column struct {
	field int // position in the record batch
	attr  int // attribute index, or countAttr, or unitAttr
}

// The attr of the count column and of the privacy unit's column.
const (
	countAttr = -1
	unitAttr  = -2
)

// count runs the pipeline over the jobs of feed.
func count(ctx context.Context, src *source, dom *universe.Domain, opts *Options, feed feeder) (*universe.Counts, *Stats, error) {
	nw := opts.workers()
	jobs := make(chan job, nw)
	tr := tracker{stopped: -1}
	ws := make([]*worker, nw)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = newWorker(src, dom, opts)
		wg.Go(func() { ws[i].loop(ctx, jobs, &tr) })
	}

	seq := 0
	emit := func(j job) bool {
		if ctx.Err() != nil || tr.anyStopped() {
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
		// The failure is about the row after the last job, unless it names
		// no row (a corrupt compressed stream).
		row := int64(1)
		if de, ok := ferr.(*DataError); ok && de.Row == 0 {
			row = 0
		}
		tr.add(seq)
		tr.done(seq, &result{stop: &pending{row: row, col: -1, err: ferr}})
	}
	if err := tr.resolve(src.file); err != nil {
		return nil, nil, err
	}

	st := &Stats{File: src.file, Format: src.format, Repairs: make([]Repairs, dom.Len())}
	for _, r := range tr.res {
		st.Rows += r.rows
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
	return withUnits(ctx, name, dom, opts, func(o Options) (*universe.Counts, *Stats, error) { return readRecords(ctx, rr, name, dom, o) })
}

func readRecords(ctx context.Context, rr array.RecordReader, name string, dom *universe.Domain, opts Options) (*universe.Counts, *Stats, error) {
	sc := rr.Schema()
	names := make([]string, sc.NumFields())
	for i := range names {
		names[i] = sc.Field(i).Name
	}
	b, err := bind(name, names, dom, &opts)
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
		attrOf[b.countCol] = countAttr
	}
	if b.unitCol >= 0 {
		attrOf[b.unitCol] = unitAttr
	}
	cols := make([]column, 0, len(attrOf))
	for f := range sc.NumFields() {
		a, ok := attrOf[f]
		if !ok {
			continue
		}
		field := sc.Field(f)
		if a == unitAttr {
			if !unitSupported(field.Type) {
				return nil, unitColumnErr(file, field)
			}
			cols = append(cols, column{field: f, attr: a})
			continue
		}
		if !supported(field.Type) {
			return nil, &DataError{File: file, Column: field.Name, Err: fmt.Errorf("%w %s (want strings, integers, floats, decimals, booleans, dates, timestamps or a dictionary of them)", ErrColumnType, field.Type)}
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
		arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL, arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP,
		arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
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

	// With a privacy unit: the grouping, the salt, the batch's unit IDs and
	// scratch for a unit's text and a grouping key.
	grouping *grouping
	salt     contrib.Salt
	unitIDs  []contrib.ID
	unitBuf  []byte
	key      []byte

	res      *result   // of the current job
	start    int64     // rows of the job before the current batch
	batchBad []pending // bad values of the current batch
	colBad   int       // bad values of the current column listed in batchBad
	show     bool      // Options.ShowValues
}

func newWorker(src *source, dom *universe.Domain, opts *Options) *worker {
	return &worker{
		src: src, attrs: dom.Attrs(), pol: opts.Policy, width: dom.Len(), batch: opts.batchRows(),
		counted:  src.b.countCol >= 0,
		counts:   universe.NewCounts(dom),
		rep:      make([][3]int64, dom.Len()),
		grouping: opts.grouping, salt: opts.UnitSalt,
		show: opts.ShowValues,
	}
}

func (w *worker) loop(ctx context.Context, jobs <-chan job, tr *tracker) {
	for j := range jobs {
		// Skip work that cannot change the result: after cancellation, or
		// jobs after one that ended on an error.
		r := &result{}
		if ctx.Err() == nil && !tr.stoppedBefore(j.seq) {
			w.do(&j, r)
		}
		tr.done(j.seq, r)
		j.release()
	}
}

// do runs one job.
func (w *worker) do(j *job, r *result) {
	w.res, w.start = r, 0
	if j.rec != nil {
		w.encode(j.rec)
		if r.stop == nil {
			r.rows = j.rec.NumRows()
		}
		return
	}
	rr := csv.NewReader(io.MultiReader(bytes.NewReader(w.src.header), bytes.NewReader(*j.chunk)), w.src.schema,
		csv.WithHeader(true), csv.WithChunk(w.batch), csv.WithAllocator(batchAllocator))
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		w.encode(rec)
		if r.stop != nil {
			return
		}
		w.start += rec.NumRows()
	}
	r.rows = w.start
	if err := rr.Err(); err != nil {
		r.stop = &pending{row: w.start + 1, col: -1, err: w.src.readErr(err, w.start+1)}
	}
}

// bad records a bad value at row i of the batch in field col (attribute
// attr, or -1 for the count column). It lists the
// first MaxReported of each column of a batch; they are cut to the first
// MaxReported of the job in encode.
func (w *worker) bad(i, attr, col int, err error) {
	w.res.nbad++
	if k, token := suggestKind(err); k != 0 {
		var ve *universe.ValueError
		errors.As(err, &ve)
		w.res.sugg = addSuggestions(w.res.sugg, suggestion{kind: k, token: token, idx: attr, attr: ve.Attr})
	}
	if w.colBad >= MaxReported || len(w.res.bad) >= MaxReported {
		return
	}
	w.colBad++
	row := w.start + int64(i) + 1
	w.batchBad = append(w.batchBad, pending{row: row, col: col,
		err: &DataError{File: w.src.file, Row: row, Column: w.src.b.names[col], Err: detach(err, w.show)}})
}

// encode checks every value of one record batch and counts its rows; bad
// values go to the job's result, and a batch with one counts nothing (the
// read fails anyway).
func (w *worker) encode(rec arrow.RecordBatch) {
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
	// Encode column by column (one type switch per column and batch).
	before := w.res.nbad
	w.batchBad = w.batchBad[:0]
	for _, c := range w.src.cols {
		arr := rec.Column(c.field)
		w.colBad = 0
		switch c.attr {
		case countAttr:
			w.encodeCounts(c.field, arr, n)
		case unitAttr:
			w.encodeUnits(c.field, arr, n)
		default:
			w.encodeColumn(c.attr, c.field, arr, n)
		}
	}
	if w.res.nbad > before {
		slices.SortFunc(w.batchBad, func(a, b pending) int { return a.cmp(&b) })
		w.res.bad = append(w.res.bad, w.batchBad[:min(len(w.batchBad), MaxReported-len(w.res.bad))]...)
		return
	}
	if w.res.nbad > 0 {
		return
	}
	if w.grouping != nil {
		var weights []int64
		if w.counted {
			weights = w.weights
		}
		w.key = w.grouping.addBatch(w.unitIDs, w.codes, w.width, weights, w.key)
		return
	}
	for i := range n {
		weight := int64(1)
		if w.counted {
			if weight = w.weights[i]; weight == 0 {
				continue
			}
		}
		if err := w.counts.Add(w.codes[i*w.width:(i+1)*w.width], weight); err != nil {
			row := w.start + int64(i) + 1
			w.res.stop = &pending{row: row, col: w.src.b.countCol, err: &DataError{File: w.src.file, Row: row, Column: w.src.b.names[w.src.b.countCol], Err: ErrCountOverflows}}
			return
		}
	}
}
