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
	if len(p) != w.dom.Len() {
		panic(fmt.Sprintf("query: AnswerProduct with %d one-way tables for %d attributes", len(p), w.dom.Len()))
	}
	for i, a := range w.dom.Attrs() {
		if len(p[i]) != a.Size() {
			panic(fmt.Sprintf("query: AnswerProduct: table of %q has %d entries, want %d", a.Name, len(p[i]), a.Size()))
		}
	}
	for bi := range w.blocks {
		b := &w.blocks[bi]
		q := out[b.off : b.off+b.n]
		switch b.kind {
		case bMarginal:
			for j := range q {
				v, rest := b.weight, j
				for k := len(b.attrs) - 1; k >= 0; k-- {
					a := b.attrs[k]
					size := len(p[a])
					v *= p[a][rest%size]
					rest /= size
				}
				q[j] = v
			}
		case bPrefix:
			var s float64
			for j := range q {
				s += p[b.attrs[0]][j]
				q[j] = b.weight * s
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
	return out
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
