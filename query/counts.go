package query

import (
	"fmt"
	"runtime"
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
	t := w.NewTally()
	for i := range c.Distinct() {
		t.Add(c.Codes(i), float64(c.Count(i)))
	}
	return t.Answers(out)
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
}

// NewTally returns an empty tally of the workload.
func (w *Workload) NewTally() *Tally {
	t := &Tally{w: w, strides: make([][]int, len(w.blocks)), acc: make([]float64, w.m)}
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
// Add(row, 1) for each row would, with the same sums: block by block (a
// block's counts stay in cache while every row passes), the blocks split
// over the cores when there is enough work.
func (t *Tally) AddRows(rows []int32) {
	d := t.w.dom.Len()
	n := len(rows) / d
	if n == 0 {
		return
	}
	rows = rows[:n*d]
	nb := len(t.w.blocks)
	workers := min(runtime.GOMAXPROCS(0), nb)
	if workers <= 1 || n*nb < tallyParallel {
		t.addBlocks(rows, d, 0, nb)
	} else {
		var wg sync.WaitGroup
		for w := range workers {
			lo, hi := nb*w/workers, nb*(w+1)/workers
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.addBlocks(rows, d, lo, hi)
			}()
		}
		wg.Wait()
	}
	t.total += float64(n)
}

// tallyParallel is the rows × blocks from which AddRows uses every core.
const tallyParallel = 1 << 16

// addBlocks counts rows (d codes each) into blocks [lo, hi).
func (t *Tally) addBlocks(rows []int32, d, lo, hi int) {
	for bi := lo; bi < hi; bi++ {
		b := &t.w.blocks[bi]
		acc := t.acc[b.off : b.off+b.n]
		switch b.kind {
		case bMarginal:
			st := t.strides[bi]
			switch len(b.attrs) {
			case 1:
				a := b.attrs[0]
				for r := 0; r < len(rows); r += d {
					acc[rows[r+a]]++
				}
			case 2:
				a0, a1, s0 := b.attrs[0], b.attrs[1], st[0]
				for r := 0; r < len(rows); r += d {
					acc[int(rows[r+a0])*s0+int(rows[r+a1])]++
				}
			case 3:
				a0, a1, a2, s0, s1 := b.attrs[0], b.attrs[1], b.attrs[2], st[0], st[1]
				for r := 0; r < len(rows); r += d {
					acc[int(rows[r+a0])*s0+int(rows[r+a1])*s1+int(rows[r+a2])]++
				}
			default:
				for r := 0; r < len(rows); r += d {
					idx := 0
					for p, a := range b.attrs {
						idx += int(rows[r+a]) * st[p]
					}
					acc[idx]++
				}
			}
		case bPrefix:
			a := b.attrs[0]
			for r := 0; r < len(rows); r += d {
				if code := int(rows[r+a]); code < b.n {
					acc[code]++
				}
			}
		case bProduct:
			for r := 0; r < len(rows); r += d {
				if inProduct(rows[r:r+d], b) {
					acc[0]++
				}
			}
		}
	}
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
		c := codes[a]
		ok := false
		for _, r := range b.runs[p] {
			if c >= r.lo && c <= r.hi {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
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
