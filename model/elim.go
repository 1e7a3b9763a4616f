package model

import (
	"fmt"
	"slices"
)

// Sources of an elimination factor.
const (
	fromBelief = iota // the calibrated belief of a clique
	fromCond          // a clique's belief divided by its separator marginal
	fromTable         // an intermediate table in the worker's arena
)

// fsrc names the table of an elimination factor: a clique's belief or
// conditional (c), or cells [off, off+n) of the worker's arena.
type fsrc struct {
	kind   int8
	c      int
	off, n int
}

// mulOp multiplies a destination table by a source factor broadcast onto
// it.
type mulOp struct {
	p   proj
	src fsrc
}

// elimStep sums one attribute out: the product of the factors that hold it
// (prodN cells) is built block by block (blk cells) in the arena's scratch
// at its start, each block summed onto a new table at [out, out+outN).
type elimStep struct {
	prodN     int
	blk       int
	muls      []mulOp
	sum       proj
	out, outN int
}

// setPlan answers the marginal of one set: the in-clique sum from a
// covering clique's belief, or variable elimination over the smallest
// subtree holding the set.
type setPlan struct {
	covering int  // covering clique, or -1
	carried  bool // a pair, or a triple with a covered pair, that no clique covers: answered by the batch's carry plans (pairs.go)
	whole    bool // the set is the covering clique: copy its belief
	p        proj // covering clique → set
	steps    []elimStep
	final    []mulOp // onto the output
	arenaN   int     // arena cells the plan needs
	cost     int     // cells it touches (for splitting sets over workers)
	err      error   // *TooLargeError: the plan would exceed MaxElimCells
}

// planFactor is an elimination factor while planning.
type planFactor struct {
	attrs []int
	src   fsrc
}

// planSet compiles the marginal on set (checked by the caller). A cross-clique
// plan reads, for every clique of the smallest subtree of the clique tree
// whose cliques hold all of set's attributes, the subtree root's belief or
// the other cliques' conditionals: on a connected subtree of a junction
// tree, D restricted to the subtree's attributes factorises as the subtree
// root's belief times, for every other clique, its belief divided by its
// separator marginal (the conditional of its new attributes given the
// separator). The attributes outside set are then summed out one at a time,
// each time the one whose elimination builds the smallest table (ties: the
// lowest attribute). needCond[c] is set for the conditionals it reads.
func (m *Model) planSet(set []int, needCond []bool) setPlan {
	t := m.t
	sizes := t.sizes
	var sp setPlan
	sp.covering = t.Covering(set)
	if c := sp.covering; c >= 0 {
		sp.whole = len(set) == len(t.cliques[c])
		sp.p = newProj(sizes, t.cliques[c], set)
		sp.cost = t.cells[c]
		return sp
	}
	fs := t.subtreeFactors(set, needCond)
	inSet := make([]bool, len(sizes))
	for _, a := range set {
		inSet[a] = true
	}
	var steps []elimStep
	maxProd, top := 0, 0
	ch := newElimChooser(len(sizes))
	for {
		best, bestCells, bestU := ch.next(sizes, fs, inSet)
		if best < 0 {
			break
		}
		if bestCells > float64(m.maxElim) {
			sp.err = &TooLargeError{
				What: fmt.Sprintf("marginal on attributes %s (eliminating attribute %d builds a table over %v; raise Settings.MaxElimCells or measure a covering set)",
					fmtSet(set), best, bestU),
				Cells: bestCells,
				Cap:   float64(m.maxElim),
			}
			return sp
		}
		st := elimStep{prodN: int(bestCells)}
		sp.cost += st.prodN
		rest := fs[:0:0]
		for _, f := range fs {
			if slices.Contains(f.attrs, best) {
				st.muls = append(st.muls, mulOp{newProj(sizes, bestU, f.attrs), f.src})
				sp.cost += st.prodN
			} else {
				rest = append(rest, f)
			}
		}
		na := slices.DeleteFunc(slices.Clone(bestU), func(a int) bool { return a == best })
		st.sum = newProj(sizes, bestU, na)
		st.blk = blockFor(&st.sum)
		maxProd = max(maxProd, min(st.blk, st.prodN))
		st.out, st.outN = top, st.sum.tcells // relative to the tables' region, fixed below
		top += st.outN
		steps = append(steps, st)
		fs = append(rest, planFactor{na, fsrc{kind: fromTable, off: st.out, n: st.outN}})
	}
	sp.layout(sizes, set, steps, fs, maxProd, top)
	return sp
}

// subtreeFactors returns the factors of the smallest subtree of the clique
// tree whose cliques hold all of set's attributes: its root's belief and
// every other clique's conditional (needCond set for those).
func (t *Tree) subtreeFactors(set []int, needCond []bool) []planFactor {
	k := len(t.cliques)
	chosen := make([]bool, k)
	for _, a := range set {
		chosen[t.first[a]] = true
	}
	edge := t.steinerEdges(chosen)
	in := slices.Clone(chosen)
	for c, e := range edge {
		if e {
			in[c], in[t.parent[c]] = true, true
		}
	}
	var fs []planFactor
	for c := range k {
		if !in[c] {
			continue
		}
		if !edge[c] { // the subtree's root
			fs = append(fs, planFactor{t.cliques[c], fsrc{kind: fromBelief, c: c, n: t.cells[c]}})
			continue
		}
		needCond[c] = true
		fs = append(fs, planFactor{t.cliques[c], fsrc{kind: fromCond, c: c, n: t.cells[c]}})
	}
	return fs
}

// elimChooser picks the next attribute to sum out. The union of the
// factors holding a variable is gathered by marking (stamp: this
// variable's turn) into u, sorted, and kept in bestU only when it wins;
// seen (also by stamp) skips variables met before in this step.
type elimChooser struct {
	mark, seen  []int
	stamp, step int
	u, bestU    []int
}

func newElimChooser(n int) *elimChooser {
	return &elimChooser{mark: make([]int, n), seen: make([]int, n)}
}

// next returns the attribute outside the set (inSet) whose elimination
// builds the smallest table (ties: the lowest attribute), that table's
// cells and attributes (valid until the next call); -1 when none is left.
func (ch *elimChooser) next(sizes []int, fs []planFactor, inSet []bool) (best int, bestCells float64, bestU []int) {
	best = -1
	ch.bestU = ch.bestU[:0]
	ch.step++
	for _, f := range fs {
		for _, v := range f.attrs {
			if inSet[v] || ch.seen[v] == ch.step {
				continue
			}
			ch.seen[v] = ch.step
			ch.stamp++
			ch.u = ch.u[:0]
			for _, g := range fs {
				if slices.Contains(g.attrs, v) {
					for _, a := range g.attrs {
						if ch.mark[a] != ch.stamp {
							ch.mark[a] = ch.stamp
							ch.u = append(ch.u, a)
						}
					}
				}
			}
			slices.Sort(ch.u)
			if cells := cellsOf(sizes, ch.u); best < 0 || cells < bestCells || (cells == bestCells && v < best) {
				best, bestCells, ch.bestU = v, cells, append(ch.bestU[:0], ch.u...)
			}
		}
	}
	return best, bestCells, ch.bestU
}

// layout places the plan's arena: the product scratch (maxProd cells)
// first, then the steps' tables (top cells), and adds the final products
// of the factors left onto set.
func (sp *setPlan) layout(sizes, set []int, steps []elimStep, fs []planFactor, maxProd, top int) {
	for i := range steps {
		steps[i].out += maxProd
		for j := range steps[i].muls {
			if s := &steps[i].muls[j].src; s.kind == fromTable {
				s.off += maxProd
			}
		}
	}
	for _, f := range fs {
		src := f.src
		if src.kind == fromTable {
			src.off += maxProd
		}
		sp.final = append(sp.final, mulOp{newProj(sizes, set, f.attrs), src})
		sp.cost += int(cellsOf(sizes, set))
	}
	sp.steps = steps
	sp.arenaN = maxProd + top
}

// newProj returns a projection from a table over from onto one over to,
// with its own backing arrays.
func newProj(sizes, from, to []int) proj {
	var p proj
	p.build(sizes, from, to, make([]int, 0, len(from)+1), make([]int, 0, len(from)+1))
	return p
}

// table returns the cells of src.
func (m *Model) table(src fsrc, cond [][]float64, arena []float64) []float64 {
	switch src.kind {
	case fromBelief:
		return m.belief[src.c]
	case fromCond:
		return cond[src.c]
	}
	return arena[src.off : src.off+src.n]
}

// elimBlock is the number of cells (128 KiB) of the blocks in which runCross
// builds a product and sums or normalises it, so that each block stays in
// the core's cache between the passes of its factors.
const elimBlock = 16384

// blockFor returns a block length near elimBlock that is a whole number of
// p's two innermost dimensions, so that summing a table block by block
// adds the same runs in the same order as one pass.
func blockFor(p *proj) int {
	last := len(p.dims) - 1
	unit := p.dims[last]
	if last >= 1 {
		unit *= p.dims[last-1]
	}
	return max(unit, elimBlock/unit*unit)
}

// runCross runs a cross-clique plan into out with the conditionals cond,
// the arena (at least sp.arenaN cells) and odometer scratch dig. Each
// product is built block by block (every cell gets the same operations in
// the same order as in whole-table passes, so the same bits).
func (m *Model) runCross(sp *setPlan, out []float64, cond [][]float64, arena []float64, dig []int) {
	for i := range sp.steps {
		st := &sp.steps[i]
		nt := arena[st.out : st.out+st.outN]
		clear(nt)
		for lo := 0; lo < st.prodN; lo += st.blk {
			hi := min(lo+st.blk, st.prodN)
			prod := arena[:hi-lo] // the product's block
			m.product(prod, st.muls, cond, arena, lo, hi, dig)
			st.sum.sumTo(nt, prod, lo, hi, dig)
		}
	}
	// The output in blocks of a multiple of 4 cells, summed in the four
	// running sums of sum4 on the way.
	n := len(out)
	n4 := n &^ 3
	var s0, s1, s2, s3 float64
	for lo := 0; lo < n; lo += elimBlock {
		hi := min(lo+elimBlock, n)
		if len(sp.final) == 0 {
			for k := lo; k < hi; k++ {
				out[k] = 1
			}
		} else {
			m.product(out[lo:hi], sp.final, cond, arena, lo, hi, dig)
		}
		k := lo
		for e := min(hi, n4); k < e; k += 4 {
			s0 += out[k]
			s1 += out[k+1]
			s2 += out[k+2]
			s3 += out[k+3]
		}
		for ; k < hi; k++ {
			s0 += out[k]
		}
	}
	if s := (s0 + s1) + (s2 + s3); s > 0 {
		divBy(out, s)
	}
}

// product writes cells [lo, hi) of the product of ops' factors into dst
// (dst[0] is cell lo), starting from the first factor rather than from 1 (the same bits:
// 1·x = x).
func (m *Model) product(dst []float64, ops []mulOp, cond [][]float64, arena []float64, lo, hi int, dig []int) {
	for j := range ops {
		op := &ops[j]
		if j == 0 {
			op.p.setFrom(dst, m.table(op.src, cond, arena), lo, hi, dig)
		} else {
			op.p.mulFrom(dst, m.table(op.src, cond, arena), lo, hi, dig)
		}
	}
}

// condTo writes clique c's belief divided by its separator marginal into
// dst (0 where the separator marginal is 0), with sep (sepCell[c] cells)
// as scratch.
func (m *Model) condTo(c int, dst, sep []float64, dig []int) {
	b := m.belief[c]
	p := &m.childP[c]
	clear(sep)
	p.sumTo(sep, b, 0, p.cells, dig)
	last := len(p.dims) - 1
	in, st := p.dims[last], p.inner()
	j := p.start(0, dig)
	for i := 0; i < p.cells; {
		run := in - dig[last]
		for q, v := range b[i : i+run] {
			if s := sep[j+q*st]; s > 0 {
				dst[i+q] = v / s
			} else {
				dst[i+q] = 0
			}
		}
		i += run
		j = p.next(dig, j, run)
	}
}

// crossMarginal computes the marginal of D on a set that no clique covers
// (see planSet), allocating its plan and tables.
func (m *Model) crossMarginal(set []int, out []float64) error {
	need := make([]bool, len(m.t.cliques))
	a, tg, ok, sp := m.crossPlan(set, need)
	if ok {
		if m.carriedMarginal(a, tg, out) {
			return nil
		}
		sp = m.planSet(set, need)
	}
	if sp.err != nil {
		return sp.err
	}
	cond := make([][]float64, len(m.t.cliques))
	dig := make([]int, len(m.t.sizes)+1)
	for c, ok := range need {
		if ok {
			cond[c] = make([]float64, m.t.cells[c])
			m.condTo(c, cond[c], make([]float64, m.t.sepCell[c]), dig)
		}
	}
	m.runCross(&sp, out, cond, make([]float64, sp.arenaN), dig)
	return nil
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
