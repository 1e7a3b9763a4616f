package query

import (
	"fmt"

	"github.com/dpsynth/synth/universe"
)

// AnswerProduct writes into out (len m) the answers of the workload on the
// product distribution D(z) = Π_i p[i][z_i], where p[i] is a distribution
// over the codes of attribute i (len = its size). It costs O(m + Σ sizes)
// and never forms a vector over the universe. With p the data's one-way
// tables this is the "independent attributes" baseline.
func (w *Workload) AnswerProduct(p [][]float64, out []float64) []float64 {
	if len(out) != w.m {
		panic(fmt.Sprintf("query: AnswerProduct into %d answers for a workload of %d queries", len(out), w.m))
	}
	return w.AnswerProductRange(p, 0, out)
}

// AnswerProductRange writes into out the answers of queries lo, lo+1, …,
// lo+len(out)−1 on the product distribution of p, as AnswerProduct does
// (the same bits), so that a caller can answer the workload a chunk at a
// time into a small buffer. A marginal cell's answer is its weight times
// the one-way values of its codes, the last attribute's first; the cells
// of a run of the last attribute are computed together, without division
// per cell. It allocates nothing.
func (w *Workload) AnswerProductRange(p [][]float64, lo int, out []float64) []float64 {
	if lo < 0 || lo+len(out) > w.m {
		panic(fmt.Sprintf("query: AnswerProductRange of queries [%d, %d) for a workload of %d queries", lo, lo+len(out), w.m))
	}
	w.checkProduct(p)
	for j, hi := lo, lo+len(out); j < hi; {
		b := &w.blocks[w.blockOf(j)]
		end := min(b.off+b.n, hi)
		productBlock(b, p, j-b.off, out[j-lo:end-lo])
		j = end
	}
	return out
}

// checkProduct panics unless p holds one table per attribute of the
// right size.
func (w *Workload) checkProduct(p [][]float64) {
	if len(p) != w.dom.Len() {
		panic(fmt.Sprintf("query: AnswerProduct with %d one-way tables for %d attributes", len(p), w.dom.Len()))
	}
	for i, a := range w.dom.Attrs() {
		if len(p[i]) != a.Size() {
			panic(fmt.Sprintf("query: AnswerProduct: table of %q has %d entries, want %d", a.Name, len(p[i]), a.Size()))
		}
	}
}

// productBlock writes the product answers of the queries c0, c0+1, … of
// block b into q. A marginal cell gets weight·p_last[c_last], then times
// p[a][c_a] for the other attributes from the last but one to the first:
// the order of the multiplications of the cell-by-cell form.
func productBlock(b *block, p [][]float64, c0 int, q []float64) {
	switch b.kind {
	case bMarginal:
		k := len(b.attrs)
		if k == 0 {
			for i := range q {
				q[i] = b.weight
			}
			return
		}
		last := p[b.attrs[k-1]]
		sz := len(last)
		for i := 0; i < len(q); {
			row, c := (c0+i)/sz, (c0+i)%sz
			seg := q[i : i+min(sz-c, len(q)-i)]
			for t := range seg {
				seg[t] = b.weight * last[c+t]
			}
			for a := k - 2; a >= 0; a-- {
				pa := p[b.attrs[a]]
				x := pa[row%len(pa)]
				row /= len(pa)
				for t := range seg {
					seg[t] *= x
				}
			}
			i += len(seg)
		}
	case bPrefix:
		pa := p[b.attrs[0]]
		var s float64
		for _, v := range pa[:c0] {
			s += v
		}
		for i := range q {
			s += pa[c0+i]
			q[i] = b.weight * s
		}
	case bProduct:
		v := b.weight
		for k, a := range b.attrs {
			var s float64
			for _, r := range b.runs[k] {
				for c := r.lo; c <= r.hi; c++ {
					s += p[a][c]
				}
			}
			v *= s
		}
		q[0] = v
	}
}

// NullLabel labels the null code of a nullable attribute in query labels,
// whatever its null token (often the empty string): "occupation=<null>".
const NullLabel = "<null>"

// codeLabel is universe's label of code c, or NullLabel for the null code.
func codeLabel(a *universe.Attribute, c int) string {
	if nc, ok := a.NullCode(); ok && c == nc {
		return NullLabel
	}
	return a.Label(c)
}
