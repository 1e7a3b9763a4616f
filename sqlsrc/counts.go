package sqlsrc

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dpsynth/synth/ingest"
	"github.com/dpsynth/synth/universe"
)

// Errors of marginal count files, wrapped in an *ingest.DataError (test
// with errors.Is).
var (
	// ErrMissingSet: the file holds neither the set nor a superset of it.
	ErrMissingSet = errors.New("marginal not in the file")
	// ErrInconsistent: the sets of the file do not total the same n.
	ErrInconsistent = errors.New("the marginals of the file do not total the same number of rows")
	// ErrBadCode: a code is not an integer in 0..size-1.
	ErrBadCode = errors.New("not a code of the attribute")
)

// Marginaler gives marginal count tables: a Source (counted by a database)
// or MarginalCounts (read from a file) serve the same solvers.
type Marginaler interface {
	Marginals(ctx context.Context, sets [][]int) ([][]int64, error)
}

var (
	_ Marginaler = (*Source)(nil)
	_ Marginaler = (*MarginalCounts)(nil)
)

// MarginalCounts are the marginal count tables of a file (see the package
// documentation for its columns), as read by ReadMarginalCounts.
type MarginalCounts struct {
	dom  *universe.Domain
	file string
	sets map[string]*setCounts
	n    int64
}

// setCounts holds the cells of one set: sparse, indexed in the set's mixed
// radix (attributes in domain order, the last fastest).
type setCounts struct {
	attrs []int
	cells uint64 // number of cells of the set's table
	cnt   map[uint64]int64
	total int64
}

// N is the number of rows the marginals count.
func (m *MarginalCounts) N() int64 { return m.n }

// Sets returns the attribute sets the file holds, in domain order, sorted.
func (m *MarginalCounts) Sets() [][]int {
	var out [][]int
	for _, s := range m.sets {
		out = append(out, slices.Clone(s.attrs))
	}
	slices.SortFunc(out, func(a, b []int) int {
		if c := len(a) - len(b); c != 0 {
			return c
		}
		return slices.Compare(a, b)
	})
	return out
}

// ReadMarginalCounts reads a marginal count file, CSV (with a header row)
// or Parquet (detected as ingest.Detect does). Bad content is an
// *ingest.DataError naming the file, row and column; a failing read an
// *ingest.ReadError.
func ReadMarginalCounts(path string, dom *universe.Domain) (*MarginalCounts, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	format, err := ingest.Detect(path, f)
	if err != nil {
		return nil, &ingest.ReadError{File: path, Err: err}
	}
	r := &countsReader{m: &MarginalCounts{dom: dom, file: path, sets: map[string]*setCounts{}}}
	if format == ingest.Parquet {
		err = r.parquet(f)
	} else {
		err = r.csv(f)
	}
	if err != nil {
		return nil, err
	}
	return r.finish()
}

// countsReader adds rows to a MarginalCounts.
type countsReader struct {
	m     *MarginalCounts
	names []string
	attr  []int // column -> attribute, -1 for the count column
	count int
	row   int64
	codes []int
	set   []int
}

func (r *countsReader) fail(col int, err error) error {
	e := &ingest.DataError{File: r.m.file, Row: r.row, Err: err}
	if col >= 0 {
		e.Column = r.names[col]
	}
	return e
}

// header binds the columns to attributes.
func (r *countsReader) header(names []string) error {
	r.names, r.count = names, -1
	r.attr = make([]int, len(names))
	seen := map[string]bool{}
	for j, n := range names {
		if seen[n] {
			return &ingest.DataError{File: r.m.file, Column: n, Err: ingest.ErrDuplicateCol}
		}
		seen[n] = true
		if n == CountColumn {
			r.count, r.attr[j] = j, -1
			continue
		}
		a, ok := r.m.dom.Index(n)
		if !ok {
			return &ingest.DataError{File: r.m.file, Column: n, Err: fmt.Errorf("%w: not an attribute of the domain nor %q", ingest.ErrExtraColumn, CountColumn)}
		}
		r.attr[j] = a
	}
	if r.count < 0 {
		return &ingest.DataError{File: r.m.file, Column: CountColumn, Err: ingest.ErrMissingColumn}
	}
	r.codes = make([]int, r.m.dom.Len())
	return nil
}

// add adds one row; cell(j) returns column j's text and whether it is NULL.
func (r *countsReader) add(cell func(j int) (string, bool)) error {
	r.row++
	r.set = r.set[:0]
	var w int64
	for j, a := range r.attr {
		v, null := cell(j)
		if a < 0 {
			if null {
				return r.fail(j, fmt.Errorf("%w, got a missing value", ingest.ErrBadCount))
			}
			c, ok := parseInt(v)
			if !ok || c < 0 {
				return r.fail(j, fmt.Errorf("%w, got %q", ingest.ErrBadCount, v))
			}
			w = c
			continue
		}
		if null || isNullText(v) {
			continue
		}
		attr := r.m.dom.Attr(a)
		c, ok := parseInt(v)
		if ok && c == -1 {
			// The compiled SQL gives -1 to a value outside the domain.
			return r.fail(j, fmt.Errorf("%w %q (codes 0..%d): -1, the code the counting SQL gives a value outside the declared domain (%s); run the query of synth sql --check on the table to count them and see an example, then fix the data or the domain, or allow a repair (--clamp, --unknown-to-other)",
				ErrBadCode, attr.Name, attr.Size()-1, attr.Describe()))
		}
		if !ok || c < 0 || c >= int64(attr.Size()) {
			return r.fail(j, fmt.Errorf("%w %q (codes 0..%d): %q", ErrBadCode, attr.Name, attr.Size()-1, v))
		}
		r.codes[a] = int(c)
		r.set = append(r.set, a)
	}
	slices.Sort(r.set)
	key := setKey(r.set)
	s := r.m.sets[key]
	if s == nil {
		cells := new(big.Int).SetInt64(1)
		for _, a := range r.set {
			cells.Mul(cells, big.NewInt(int64(r.m.dom.Attr(a).Size())))
		}
		if !cells.IsUint64() {
			return r.fail(-1, fmt.Errorf("the marginal over %s has %s cells, too many to index", setNames(r.m.dom, r.set), cells))
		}
		s = &setCounts{attrs: slices.Clone(r.set), cells: cells.Uint64(), cnt: map[uint64]int64{}}
		r.m.sets[key] = s
	}
	var idx uint64
	for _, a := range s.attrs {
		idx = idx*uint64(r.m.dom.Attr(a).Size()) + uint64(r.codes[a])
	}
	if s.total > math.MaxInt64-w {
		return r.fail(r.count, ingest.ErrCountOverflows)
	}
	s.total += w
	if w > 0 {
		s.cnt[idx] += w
	}
	return nil
}

func isNullText(v string) bool {
	switch strings.TrimSpace(v) {
	case "", `\N`, "NULL", "null":
		return true
	}
	return false
}

// parseInt parses an integer, written as one or as an integral float.
func parseInt(v string) (int64, bool) {
	t := strings.TrimSpace(v)
	if c, err := strconv.ParseInt(t, 10, 64); err == nil {
		return c, true
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 9.2233720368547758e18 {
		return 0, false
	}
	return int64(f), true
}

func (r *countsReader) csv(f io.Reader) error {
	cr := csv.NewReader(bufio.NewReaderSize(f, 1<<16))
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return &ingest.DataError{File: r.m.file, Err: ingest.ErrEmpty}
	}
	if err != nil {
		return r.csvErr(err)
	}
	if err := r.header(slices.Clone(head)); err != nil {
		return err
	}
	cr.FieldsPerRecord = len(head)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			r.row++
			return r.csvErr(err)
		}
		if err := r.add(func(j int) (string, bool) { return rec[j], false }); err != nil {
			return err
		}
	}
}

func (r *countsReader) csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return &ingest.DataError{File: r.m.file, Row: r.row, Err: fmt.Errorf("%w: the header has %d", ingest.ErrFieldCount, len(r.names))}
		}
		return &ingest.DataError{File: r.m.file, Row: r.row, Err: fmt.Errorf("%w: %v", ingest.ErrMalformed, pe.Err)}
	}
	return &ingest.ReadError{File: r.m.file, Err: err}
}

func (r *countsReader) parquet(f *os.File) error {
	bad := func(err error) error {
		return &ingest.DataError{File: r.m.file, Err: fmt.Errorf("%w: not a valid Parquet file: %v", ingest.ErrMalformed, err)}
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return bad(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 14}, memory.DefaultAllocator)
	if err != nil {
		return bad(err)
	}
	sc, err := fr.Schema()
	if err != nil {
		return bad(err)
	}
	names := make([]string, sc.NumFields())
	for i := range names {
		names[i] = sc.Field(i).Name
	}
	if err := r.header(names); err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return bad(err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := range int(rec.NumRows()) {
			err := r.add(func(j int) (string, bool) {
				col := rec.Column(j)
				if col.IsNull(i) {
					return "", true
				}
				return col.ValueStr(i), false
			})
			if err != nil {
				return err
			}
		}
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return bad(err)
	}
	return nil
}

// finish checks that every set totals the same n.
func (r *countsReader) finish() (*MarginalCounts, error) {
	m := r.m
	if len(m.sets) == 0 {
		return nil, &ingest.DataError{File: m.file, Err: ingest.ErrNoRows}
	}
	first := true
	for _, set := range m.Sets() {
		s := m.sets[setKey(set)]
		if first {
			m.n, first = s.total, false
			continue
		}
		if s.total != m.n {
			return nil, &ingest.DataError{File: m.file, Err: fmt.Errorf("%w: %s totals %d, %s totals %d",
				ErrInconsistent, setNames(m.dom, m.Sets()[0]), m.n, setNames(m.dom, set), s.total)}
		}
	}
	return m, nil
}

// Marginals returns one count table per set (attribute positions), in the
// set's mixed radix with its last attribute varying fastest; the empty set
// gives [n]. A set the file lacks is summed from the smallest superset it
// holds; with none, the error (an *ingest.DataError wrapping
// ErrMissingSet) names the set.
func (m *MarginalCounts) Marginals(ctx context.Context, sets [][]int) ([][]int64, error) {
	if _, err := normalizeSets(m.dom, sets); err != nil {
		return nil, err
	}
	out := make([][]int64, len(sets))
	for j, set := range sets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		k, err := cells(m.dom, set)
		if err != nil {
			return nil, err
		}
		src := m.superset(set)
		if src == nil {
			return nil, &ingest.DataError{File: m.file, Err: fmt.Errorf("%w: the marginal over %s (nor any superset of it)", ErrMissingSet, setNames(m.dom, set))}
		}
		t := make([]int64, k)
		codes := make([]int, m.dom.Len())
		for idx, c := range src.cnt {
			for p := len(src.attrs) - 1; p >= 0; p-- {
				sz := uint64(m.dom.Attr(src.attrs[p]).Size())
				codes[src.attrs[p]] = int(idx % sz)
				idx /= sz
			}
			i := 0
			for _, a := range set {
				i = i*m.dom.Attr(a).Size() + codes[a]
			}
			t[i] += c
		}
		out[j] = t
	}
	return out, nil
}

// superset returns the set's counts, or those of its smallest superset.
func (m *MarginalCounts) superset(set []int) *setCounts {
	var best *setCounts
	for _, s := range m.sets {
		ok := true
		for _, a := range set {
			if !slices.Contains(s.attrs, a) {
				ok = false
				break
			}
		}
		if ok && (best == nil || s.cells < best.cells || s.cells == best.cells && slices.Compare(s.attrs, best.attrs) < 0) {
			best = s
		}
	}
	return best
}
