package query

import (
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/dpsynth/synth/universe"
)

// AnswerCounts writes the exact answers of the workload on data, as
// fractions of n = c.Total(), into out (len M()) and returns it: out[j] =
// w_j·|{records in support_j}|/n. It reads only the distinct cells of c (no
// vector over the universe), in O(distinct cells × blocks) time; each
// marginal cell is found by stride arithmetic over the set's attributes.
// With no records every answer is 0.
//
// The answers are the private statistics themselves: a caller that
// releases them must add noise (package privacy).
func (w *Workload) AnswerCounts(c *universe.Counts, out []float64) []float64 {
	if len(out) != w.m {
		panic(fmt.Sprintf("query: AnswerCounts into %d answers for a workload of %d queries", len(out), w.m))
	}
	checkSameDomain(w.dom, c.Domain())
	// Count straight into out: no second vector of m floats.
	clear(out)
	t := w.newTally(out)
	t.AddCounts(c.Entries())
	return t.TakeAnswers()
}

// AnswerTables writes the exact answers of a workload of marginals from
// the count tables of its sets into out (len M()) and returns it: tables[i]
// is the table of Marginals()[i] in the set's mixed radix (its last
// attribute fastest, as universe.Counts.Marginals and the SQL sources serve
// them) and total the number of records. Each answer is the same, bit for
// bit, as AnswerCounts gives on the records the tables count: count ×
// (w/total), the count exact in a float64. The sets are split over the
// cores by cells. With total 0 every answer is 0.
//
// It panics if the workload holds a query that is not a marginal cell
// (ranges and predicates need the records), if len(tables) is not the
// number of marginal sets, or if a table or out has the wrong length.
func (w *Workload) AnswerTables(tables [][]int64, total int64, out []float64) []float64 {
	if len(out) != w.m {
		panic(fmt.Sprintf("query: AnswerTables into %d answers for a workload of %d queries", len(out), w.m))
	}
	if len(tables) != len(w.sets) {
		panic(fmt.Sprintf("query: AnswerTables with %d tables for %d marginal sets", len(tables), len(w.sets)))
	}
	for bi := range w.blocks {
		if b := &w.blocks[bi]; b.kind != bMarginal {
			panic("query: AnswerTables on a workload with a query that is not a marginal cell")
		}
	}
	for i, s := range w.sets {
		if len(tables[i]) != s.Cells {
			panic(fmt.Sprintf("query: AnswerTables: table %d has %d cells, its set %d", i, len(tables[i]), s.Cells))
		}
	}
	if total == 0 {
		clear(out)
		return out
	}
	inv := 1 / float64(total)
	fill := func(lo, hi int) {
		for bi := lo; bi < hi; bi++ {
			b := &w.blocks[bi]
			f := b.weight * inv
			q := out[b.off : b.off+b.n]
			for c, v := range tables[b.set] {
				q[c] = float64(v) * f
			}
		}
	}
	nb := len(w.blocks)
	workers := min(runtime.GOMAXPROCS(0), nb)
	if w.m < tallyParallel || workers < 2 {
		fill(0, nb)
		return out
	}
	// Split the blocks where the cumulative cells cross each worker's
	// share (blocks are in query order, so offsets are cumulative).
	var wg sync.WaitGroup
	lo := 0
	for k := 1; k <= workers; k++ {
		hi := nb
		if k < workers {
			target := w.m * k / workers
			hi = sort.Search(nb, func(i int) bool { return w.blocks[i].off >= target })
		}
		if hi > lo {
			wg.Add(1)
			go func(lo, hi int) {
				defer wg.Done()
				fill(lo, hi)
			}(lo, hi)
		}
		lo = hi
	}
	wg.Wait()
	return out
}

// Tally accumulates the workload's answers over records given by their
// codes, one record (or cell with its count) at a time: the streaming form
// of AnswerCounts, for rows that never sit in a universe.Counts (rows drawn
// from a factored model). Its memory is one float64 per query.
type Tally struct {
	w       *Workload
	strides [][]int // per block: the marginal strides within its set
	acc     []float64
	total   float64
	// addRows' scratch: a chunk's codes by attribute (for the attributes
	// in used) and its weights.
	cols [][]int32
	used []int
	wts  []float64
}

// NewTally returns an empty tally of the workload.
func (w *Workload) NewTally() *Tally { return w.newTally(make([]float64, w.m)) }

// newTally returns a tally that counts into acc (len M(), zero).
func (w *Workload) newTally(acc []float64) *Tally {
	t := &Tally{w: w, strides: make([][]int, len(w.blocks)), acc: acc}
	for bi := range w.blocks {
		b := &w.blocks[bi]
		if b.kind != bMarginal {
			continue
		}
		s := make([]int, len(b.attrs))
		acc := 1
		for p := len(b.attrs) - 1; p >= 0; p-- {
			s[p] = acc
			acc *= w.dom.Attr(b.attrs[p]).Size()
		}
		t.strides[bi] = s
	}
	return t
}

// Add counts cnt records of the given codes (one per attribute).
func (t *Tally) Add(codes []int32, cnt float64) {
	w := t.w
	for bi := range w.blocks {
		b := &w.blocks[bi]
		switch b.kind {
		case bMarginal:
			idx := 0
			for p, a := range b.attrs {
				idx += int(codes[a]) * t.strides[bi][p]
			}
			t.acc[b.off+idx] += cnt
		case bPrefix:
			// Count by code now; the running sum comes in Answers.
			if code := int(codes[b.attrs[0]]); code < b.n {
				t.acc[b.off+code] += cnt
			}
		case bProduct:
			if inProduct(codes, b) {
				t.acc[b.off] += cnt
			}
		}
	}
	t.total += cnt
}

// AddRows counts rows given row-major, Domain().Len() codes per row, as
// Add(row, 1) for each row would, with the same sums (a trailing partial
// row is ignored). See addRows for how.
func (t *Tally) AddRows(rows []int32) {
	d := t.w.dom.Len()
	t.addRows(rows[:len(rows)/d*d], nil)
}

// AddCounts counts cnt[i] records of each row i of rows (row-major,
// Domain().Len() codes per row), as Add(row i, cnt[i]) for each row in
// turn would, with the same sums. It panics if rows does not hold
// len(cnt) rows.
func (t *Tally) AddCounts(rows []int32, cnt []int64) {
	if d := t.w.dom.Len(); len(rows) != len(cnt)*d {
		panic(fmt.Sprintf("query: Tally.AddCounts with %d codes for %d rows of %d attributes", len(rows), len(cnt), d))
	}
	t.addRows(rows, cnt)
}

// tallyChunk is the number of rows addRows lays out column by column at a
// time: a few columns of it (int32s) stay in a core's cache while a block
// of queries reads them.
const tallyChunk = 1 << 14

// tallyParallel is the rows × blocks from which addRows uses every core.
const tallyParallel = 1 << 16

// addRows counts rows (row-major, with weights cnt, or 1 each when cnt is
// nil) chunk by chunk: each chunk's codes are laid out column by column,
// then every block of queries reads the chunk's rows in order (its counts
// stay in cache while the chunk passes), the blocks split over the cores
// when there is enough work. Every count gets the same additions in the
// same order as from Add, so the same sums.
func (t *Tally) addRows(rows []int32, cnt []int64) {
	d := t.w.dom.Len()
	if d == 0 {
		return
	}
	n := len(rows) / d
	if n == 0 {
		return
	}
	t.initCols(min(n, tallyChunk))
	nb := len(t.w.blocks)
	workers := min(runtime.GOMAXPROCS(0), nb)
	if n*nb < tallyParallel {
		workers = 1
	}
	for lo := 0; lo < n; lo += tallyChunk {
		hi := min(lo+tallyChunk, n)
		k := hi - lo
		t.transpose(rows, d, lo, hi)
		wts := t.wts[:k]
		for i := range wts {
			wts[i] = 1
			if cnt != nil {
				wts[i] = float64(cnt[lo+i])
			}
		}
		if workers <= 1 {
			t.addBlocks(k, wts, 0, nb)
		} else {
			var wg sync.WaitGroup
			for w := range workers {
				lo, hi := nb*w/workers, nb*(w+1)/workers
				wg.Add(1)
				go func() {
					defer wg.Done()
					t.addBlocks(k, wts, lo, hi)
				}()
			}
			wg.Wait()
		}
		for _, v := range wts {
			t.total += v
		}
	}
}

// initCols allocates the column scratch of addRows for the attributes
// some block reads, for chunks of up to rows rows: a tally of a few rows
// (one per solve of a small problem) does not clear a whole chunk's
// columns.
func (t *Tally) initCols(rows int) {
	if len(t.wts) >= rows {
		return
	}
	if t.cols == nil {
		t.cols = make([][]int32, t.w.dom.Len())
		for bi := range t.w.blocks {
			for _, a := range t.w.blocks[bi].attrs {
				if t.cols[a] == nil {
					t.cols[a] = []int32{}
					t.used = append(t.used, a)
				}
			}
		}
	}
	// At least double, so that calls of growing sizes reallocate a few
	// times only.
	rows = min(max(rows, 2*len(t.wts)), tallyChunk)
	for _, a := range t.used {
		t.cols[a] = make([]int32, rows)
	}
	t.wts = make([]float64, rows)
}

// transpose writes the codes of rows [lo, hi) of the attributes blocks read
// into t.cols[a][:hi-lo].
func (t *Tally) transpose(rows []int32, d, lo, hi int) {
	for i := lo; i < hi; i++ {
		row := rows[i*d : (i+1)*d : (i+1)*d]
		for _, a := range t.used {
			t.cols[a][i-lo] = row[a]
		}
	}
}

// addBlocks counts the k rows of the chunk in t.cols, with weights wts,
// into blocks [lo, hi).
func (t *Tally) addBlocks(k int, wts []float64, lo, hi int) {
	wts = wts[:k]
	for bi := lo; bi < hi; bi++ {
		b := &t.w.blocks[bi]
		acc := t.acc[b.off : b.off+b.n]
		switch b.kind {
		case bMarginal:
			st := t.strides[bi]
			switch len(b.attrs) {
			case 1:
				for r, v := range t.cols[b.attrs[0]][:k] {
					acc[v] += wts[r]
				}
			case 2:
				c0, c1, s0 := t.cols[b.attrs[0]][:k], t.cols[b.attrs[1]][:k], st[0]
				for r, w := range wts {
					acc[int(c0[r])*s0+int(c1[r])] += w
				}
			case 3:
				c0, c1, c2 := t.cols[b.attrs[0]][:k], t.cols[b.attrs[1]][:k], t.cols[b.attrs[2]][:k]
				s0, s1 := st[0], st[1]
				for r, w := range wts {
					acc[int(c0[r])*s0+int(c1[r])*s1+int(c2[r])] += w
				}
			default:
				for r, w := range wts {
					idx := 0
					for p, a := range b.attrs {
						idx += int(t.cols[a][r]) * st[p]
					}
					acc[idx] += w
				}
			}
		case bPrefix:
			for r, v := range t.cols[b.attrs[0]][:k] {
				if code := int(v); code < b.n {
					acc[code] += wts[r]
				}
			}
		case bProduct:
			for r, w := range wts {
				if t.inProductCol(b, r) {
					acc[0] += w
				}
			}
		}
	}
}

// inProductCol reports whether row r of the chunk in t.cols is in the
// product block b.
func (t *Tally) inProductCol(b *block, r int) bool {
	for p, a := range b.attrs {
		if !inRuns(t.cols[a][r], b.runs[p]) {
			return false
		}
	}
	return true
}

// Answers writes the answers as fractions of the records counted into out
// (len M()) and returns it; with no records every answer is 0.
func (t *Tally) Answers(out []float64) []float64 {
	if len(out) != t.w.m {
		panic(fmt.Sprintf("query: Tally.Answers into %d answers for a workload of %d queries", len(out), t.w.m))
	}
	clear(out)
	if t.total == 0 {
		return out
	}
	copy(out, t.acc)
	return t.scale(out)
}

// TakeAnswers turns the tally's counts into the answers in place and
// returns them: the values (and bits) Answers would write, without a
// second vector of M() floats. The tally is used up: it must not count
// or answer again.
func (t *Tally) TakeAnswers() []float64 {
	out := t.acc
	t.acc = nil
	if t.total == 0 {
		clear(out)
		return out
	}
	return t.scale(out)
}

// scale turns counts (len M(), in query order) into the answers as
// fractions of the records counted: the prefixes' running sums, each
// query times its weight over the total.
func (t *Tally) scale(out []float64) []float64 {
	inv := 1 / t.total
	for bi := range t.w.blocks {
		b := &t.w.blocks[bi]
		q := out[b.off : b.off+b.n]
		if b.kind == bPrefix {
			for i := 1; i < len(q); i++ {
				q[i] += q[i-1]
			}
		}
		for i := range q {
			q[i] *= b.weight * inv
		}
	}
	return out
}

func inProduct(codes []int32, b *block) bool {
	for p, a := range b.attrs {
		if !inRuns(codes[a], b.runs[p]) {
			return false
		}
	}
	return true
}

// inRuns reports whether code c lies in one of the runs.
func inRuns(c int32, runs []run) bool {
	for _, r := range runs {
		if c >= r.lo && c <= r.hi {
			return true
		}
	}
	return false
}

// checkSameDomain panics when two domains differ in shape (a programmer
// error: counts and workloads must be built over the same domain).
func checkSameDomain(a, b *universe.Domain) {
	if a == b {
		return
	}
	if a.Len() != b.Len() {
		panic(fmt.Sprintf("query: domains differ: %d and %d attributes", a.Len(), b.Len()))
	}
	for i := range a.Len() {
		if a.Attr(i).Name != b.Attr(i).Name || a.Attr(i).Size() != b.Attr(i).Size() {
			panic(fmt.Sprintf("query: domains differ at attribute %d: %q (%d codes) and %q (%d codes)",
				i+1, a.Attr(i).Name, a.Attr(i).Size(), b.Attr(i).Name, b.Attr(i).Size()))
		}
	}
}
