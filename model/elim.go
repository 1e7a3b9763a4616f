package model

import (
	"fmt"
	"slices"
)

// factor is a table over an increasing attribute set.
type factor struct {
	attrs []int
	table []float64
}

// crossMarginal computes the marginal of D on a set that no clique covers,
// by variable elimination on the smallest subtree of the clique tree whose
// cliques hold all of set's attributes. On a connected subtree of a
// junction tree, D restricted to the subtree's attributes factorises as the
// subtree root's belief times, for every other clique, its belief divided
// by its separator marginal (the conditional of its new attributes given
// the separator); the attributes outside set are then summed out one at a
// time, each time the one whose elimination builds the smallest table.
func (m *Model) crossMarginal(set []int, out []float64) error {
	t := m.t
	k := len(t.cliques)
	sizes := t.sizes
	chosen := make([]bool, k)
	for _, a := range set {
		chosen[t.first[a]] = true
	}
	total := 0
	cnt := make([]int, k)
	for c := k - 1; c >= 0; c-- {
		if chosen[c] {
			cnt[c]++
			total++
		}
		if p := t.parent[c]; p >= 0 {
			cnt[p] += cnt[c]
		}
	}
	// edge[c]: the edge from c to its parent is in the subtree.
	edge := make([]bool, k)
	in := slices.Clone(chosen)
	for c := range k {
		if t.parent[c] >= 0 && cnt[c] > 0 && cnt[c] < total {
			edge[c] = true
			in[c], in[t.parent[c]] = true, true
		}
	}
	dig := make([]int, len(sizes)+1)
	var fs []factor
	for c := range k {
		if !in[c] {
			continue
		}
		b := m.belief[c]
		if !edge[c] { // the subtree's root
			fs = append(fs, factor{t.cliques[c], b})
			continue
		}
		var p proj
		p.build(sizes, t.cliques[c], t.sep[c], make([]int, len(t.cliques[c])+1), make([]int, len(t.cliques[c])+1))
		sep := make([]float64, t.sepCell[c])
		p.sumTo(sep, b, 0, p.cells, dig)
		cond := make([]float64, len(b))
		st := p.inner()
		p.each(0, p.cells, dig, func(i, j, run int) {
			for q, v := range b[i : i+run] {
				if s := sep[j+q*st]; s > 0 {
					cond[i+q] = v / s
				}
			}
		})
		fs = append(fs, factor{t.cliques[c], cond})
	}

	inSet := make([]bool, len(sizes))
	for _, a := range set {
		inSet[a] = true
	}
	for {
		// The variable whose elimination builds the smallest table.
		best, bestCells := -1, 0.0
		var bestU []int
		seen := make([]bool, len(sizes))
		for _, f := range fs {
			for _, v := range f.attrs {
				if inSet[v] || seen[v] {
					continue
				}
				seen[v] = true
				var u []int
				for _, g := range fs {
					if slices.Contains(g.attrs, v) {
						u = union(u, g.attrs)
					}
				}
				if cells := cellsOf(sizes, u); best < 0 || cells < bestCells || (cells == bestCells && v < best) {
					best, bestCells, bestU = v, cells, u
				}
			}
		}
		if best < 0 {
			break
		}
		if bestCells > float64(m.maxElim) {
			return &TooLargeError{
				What: fmt.Sprintf("marginal on attributes %s (eliminating attribute %d builds a table over %v; raise Settings.MaxElimCells or measure a covering set)",
					fmtSet(set), best, bestU),
				Cells: bestCells,
				Cap:   float64(m.maxElim),
			}
		}
		prod := make([]float64, int(bestCells))
		for i := range prod {
			prod[i] = 1
		}
		rest := fs[:0:0]
		for _, f := range fs {
			if slices.Contains(f.attrs, best) {
				mulInto(sizes, bestU, prod, f, dig)
			} else {
				rest = append(rest, f)
			}
		}
		na := slices.DeleteFunc(slices.Clone(bestU), func(a int) bool { return a == best })
		var p proj
		p.build(sizes, bestU, na, make([]int, len(bestU)+1), make([]int, len(bestU)+1))
		nt := make([]float64, p.tcells)
		p.sumTo(nt, prod, 0, p.cells, dig)
		fs = append(rest, factor{na, nt})
	}
	for i := range out {
		out[i] = 1
	}
	for _, f := range fs {
		mulInto(sizes, set, out, f, dig)
	}
	s := 0.0
	for _, v := range out {
		s += v
	}
	if s > 0 {
		for i := range out {
			out[i] /= s
		}
	}
	return nil
}

// mulInto multiplies dst, a table over attrs, by factor f broadcast onto it
// (f.attrs ⊆ attrs).
func mulInto(sizes, attrs []int, dst []float64, f factor, dig []int) {
	var p proj
	p.build(sizes, attrs, f.attrs, make([]int, len(attrs)+1), make([]int, len(attrs)+1))
	p.mulFrom(dst, f.table, 0, p.cells, dig)
}

// union returns the union of increasing a and b.
func union(a, b []int) []int {
	u := make([]int, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			u = append(u, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			u = append(u, b[j])
			j++
		default:
			u = append(u, a[i])
			i++
			j++
		}
	}
	return u
}
