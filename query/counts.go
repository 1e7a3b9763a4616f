package query

import (
	"fmt"

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
	clear(out)
	if c.Total() == 0 {
		return out
	}
	// Marginal strides within each set.
	strides := make([][]int, len(w.blocks))
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
		strides[bi] = s
	}
	for i := range c.Distinct() {
		codes := c.Codes(i)
		cnt := float64(c.Count(i))
		for bi := range w.blocks {
			b := &w.blocks[bi]
			switch b.kind {
			case bMarginal:
				idx := 0
				for p, a := range b.attrs {
					idx += int(codes[a]) * strides[bi][p]
				}
				out[b.off+idx] += cnt
			case bPrefix:
				// Count by code now; the running sum comes below.
				if code := int(codes[b.attrs[0]]); code < b.n {
					out[b.off+code] += cnt
				}
			case bProduct:
				if inProduct(codes, b) {
					out[b.off] += cnt
				}
			}
		}
	}
	inv := 1 / float64(c.Total())
	for bi := range w.blocks {
		b := &w.blocks[bi]
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
