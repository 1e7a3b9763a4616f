package model

import (
	"fmt"
	"math"
)

// Drift bounds how far the marginals of a model moved between two of its
// calibrations on one tree: for any attribute set, an upper bound on the L1
// distance between its marginals before (q) and after (p), computed from
// the cliques' beliefs by sums within cliques (no marginal across cliques
// is formed).
//
// The bound. On a junction tree the joint of the attributes held by a
// connected subtree T with top clique R is p_R · Π_{c ∈ T, c ≠ R} p(x_c |
// x_sep(c)), and the same holds for the sets N_c ⊆ c that keep, of each
// clique, the set's attributes assigned to it, its separator with its
// parent in T and its children's in T (the attributes summed out appear in
// one clique only). Replacing the factors of q by those of p one at a time,
// from the top (the hybrid argument), gives
//
//	‖p − q‖₁ on ∪N_c ≤ ‖p_{N_R} − q_{N_R}‖₁ + Σ_{c ≠ R} E_{s∼p_sep(c)} ‖p_{N_c}(·|s) − q_{N_c}(·|s)‖₁,
//
// each term a sum over one clique's belief before and after. Where q_sep(s)
// = 0 the conditional of q is free (q puts no mass there) and is taken to be
// p's. A set's marginal is a marginal of that joint, and marginalising does
// not increase the L1 distance. Where a separator is empty the parts on its
// two sides are independent in both models and the distance of a product is
// at most the sum of its factors': the subtree splits there. Each attribute
// is assigned to its top clique (the first in preorder that holds it); a set
// that one clique covers gets its exact distance from that clique.
//
// Bound caches each term it computes until the next Measure; it is not safe
// for concurrent use. A reduced term costs a pass over its clique's belief
// before and after, so their work between two Measures is capped
// (driftWork); past the cap a term is the whole clique's, which Measure
// computes for every clique and which is never smaller.
type Drift struct {
	t      *Tree
	m      *Model
	before []float64 // q's beliefs, clique after clique (the caller's)
	off    []int     // each clique's start in before
	top    []int     // per attribute: the first clique in preorder holding it
	depth  []int
	full   []uint64 // each clique's attributes as a mask of positions
	pos    [][]int8 // pos[c][a]: a's position in clique c, −1 if not in it (cliques of up to 64 attributes)
	cache  map[driftKey]float64
	node   []float64 // the whole clique's term as the top of a part: ‖p_c − q_c‖₁
	edge   []float64 // the whole clique's term under its parent: E_{s∼p_sep(c)} ‖p_c(·|s) − q_c(·|s)‖₁
	work   float64   // clique cells summed by term since Measure
	budget float64   // the most term may sum: driftWork × the model's cells

	// scratch
	nodes          []driftNode
	pn, qn, ps, qs []float64
	dims, stride   []int
	dims2, stride2 []int
	dig            []int
	attrsN, attrsS []int
}

type driftKey struct {
	c    int32
	n, s uint64 // the kept and the conditioning attributes, as masks of positions in the clique (s = 0 and root: a marginal term)
	root bool
}

type driftNode struct {
	c    int
	need uint64 // positions in clique c of the attributes kept there
}

// BeliefsTo appends the calibrated beliefs of every clique, one after the
// other in the tree's clique order, to dst and returns it: the "before"
// of Drift.Measure. It panics if the model is not calibrated.
func (m *Model) BeliefsTo(dst []float64) []float64 {
	m.mustCalibrated()
	return append(dst, m.beliefAll...)
}

// Measure sets d to bound the drift between before (BeliefsTo of a model
// on m's tree, which the caller keeps unchanged until the next Measure) and
// m's beliefs, which must stay calibrated and unchanged while Bound is
// used. It panics if before is not of the tree's length or m is not
// calibrated.
func (d *Drift) Measure(before []float64, m *Model) {
	m.mustCalibrated()
	t := m.t
	if len(before) != len(m.beliefAll) {
		panic(fmt.Sprintf("model: drift: %d beliefs before, %d in the model", len(before), len(m.beliefAll)))
	}
	d.m, d.before = m, before
	if d.cache == nil {
		d.cache = make(map[driftKey]float64)
	}
	clear(d.cache)
	if d.t != t {
		d.setTree(t)
	}
	d.work, d.budget = 0, driftWork*t.total
	for c := range t.cliques {
		if d.pos[c] == nil {
			continue // never used: Bound gives +Inf through such a clique
		}
		d.node[c] = d.reduced(c, d.full[c], 0, true)
		d.edge[c] = 0
		if t.parent[c] >= 0 {
			ms, _ := d.mask(c, t.sep[c])
			d.edge[c] = d.reduced(c, d.full[c], ms, false)
		}
	}
}

// driftWork bounds the work of Bound's reduced terms between two Measures:
// summing clique cells up to this many times the model's cells, beyond
// which a term is the whole clique's (Measure computes those for every
// clique: three passes over the model). A reduced term costs one pass over
// its clique, as much as the exact marginal of a set it covers; the cap
// keeps the bounds' cost a few passes over the model per fit on any table
// while on small models every term is reduced. A variable for tests.
var driftWork = 8.0

// setTree prepares d for tree t.
func (d *Drift) setTree(t *Tree) {
	d.t = t
	k := len(t.cliques)
	d.node = make([]float64, k)
	d.edge = make([]float64, k)
	d.full = make([]uint64, k)
	d.off = make([]int, k)
	d.depth = make([]int, k)
	d.pos = make([][]int8, k)
	d.top = make([]int, len(t.sizes))
	for a := range d.top {
		d.top[a] = -1
	}
	off := 0
	for c, cl := range t.cliques {
		d.off[c] = off
		off += t.cells[c]
		if p := t.parent[c]; p >= 0 {
			d.depth[c] = d.depth[p] + 1
		}
		for _, a := range cl {
			if d.top[a] < 0 {
				d.top[a] = c
			}
		}
		if len(cl) <= 64 {
			pos := make([]int8, len(t.sizes))
			for a := range pos {
				pos[a] = -1
			}
			for i, a := range cl {
				pos[a] = int8(i)
			}
			d.pos[c] = pos
			d.full[c] = 1<<uint(len(cl)) - 1
		}
	}
	n := len(t.sizes) + 1
	d.dims, d.stride = make([]int, 0, n), make([]int, 0, n)
	d.dims2, d.stride2 = make([]int, 0, n), make([]int, 0, n)
	d.dig = make([]int, n)
}

// Bound returns an upper bound on the L1 distance between set's marginals
// before and after (see Drift), or +Inf if an attribute of set is in no
// clique or a clique of more than 64 attributes would be needed.
func (d *Drift) Bound(set []int) float64 {
	t := d.t
	if c := t.Covering(set); c >= 0 {
		if mask, ok := d.mask(c, set); ok {
			return d.term(c, mask, 0, true)
		}
	}
	// The subtrees joining the attributes' top cliques: move the deepest
	// node to its parent, carrying its separator, until one is left.
	nodes := d.nodes[:0]
	for _, a := range set {
		c := d.top[a]
		if c < 0 || d.pos[c] == nil {
			return math.Inf(1)
		}
		nodes = addNeed(nodes, c, 1<<uint(d.pos[c][a]))
	}
	sum := 0.0
	for len(nodes) > 0 {
		deep := 0
		for i, x := range nodes {
			if d.depth[x.c] > d.depth[nodes[deep].c] {
				deep = i
			}
		}
		x := nodes[deep]
		nodes[deep] = nodes[len(nodes)-1]
		nodes = nodes[:len(nodes)-1]
		sep := t.sep[x.c]
		if len(nodes) == 0 || len(sep) == 0 {
			// The top of its part: no other node lies below it, being no
			// deeper (an empty separator), or none is left.
			sum += d.term(x.c, x.need, 0, true)
			continue
		}
		ms, _ := d.mask(x.c, sep)
		sum += d.term(x.c, x.need|ms, ms, false)
		p := t.parent[x.c]
		if d.pos[p] == nil {
			d.nodes = nodes
			return math.Inf(1)
		}
		mp, _ := d.mask(p, sep)
		nodes = addNeed(nodes, p, mp)
	}
	d.nodes = nodes
	return sum
}

// addNeed adds the positions need of clique c to its node, adding the node
// if it is not there.
func addNeed(nodes []driftNode, c int, need uint64) []driftNode {
	for i := range nodes {
		if nodes[i].c == c {
			nodes[i].need |= need
			return nodes
		}
	}
	return append(nodes, driftNode{c, need})
}

// mask returns set's positions in clique c as a mask, and whether c holds
// every attribute of set and has at most 64 attributes.
func (d *Drift) mask(c int, set []int) (uint64, bool) {
	pos := d.pos[c]
	if pos == nil {
		return 0, false
	}
	var m uint64
	for _, a := range set {
		if pos[a] < 0 {
			return 0, false
		}
		m |= 1 << uint(pos[a])
	}
	return m, true
}

// term returns, for clique c and the attributes n (a mask of positions),
// ‖p_n − q_n‖₁ (root) or E_{s∼p_s} ‖p_n(·|s) − q_n(·|s)‖₁ for the
// attributes s ⊆ n, from c's beliefs before and after; cached.
func (d *Drift) term(c int, n, s uint64, root bool) float64 {
	if root {
		s = 0
	}
	if n == s && !root {
		return 0
	}
	key := driftKey{int32(c), n, s, root}
	if v, ok := d.cache[key]; ok {
		return v
	}
	cells := float64(d.t.cells[c])
	if d.work+cells > d.budget {
		// Over the budget: the whole clique's term, at least as large (s
		// is always the clique's separator when not at a top).
		if root {
			return d.node[c]
		}
		return d.edge[c]
	}
	d.work += cells
	v := d.reduced(c, n, s, root)
	d.cache[key] = v
	return v
}

// reduced computes term's value for clique c.
func (d *Drift) reduced(c int, n, s uint64, root bool) float64 {
	t := d.t
	cl := t.cliques[c]
	d.attrsN = maskAttrs(d.attrsN[:0], cl, n)
	var pr proj
	pr.build(t.sizes, cl, d.attrsN, d.dims[:0:cap(d.dims)], d.stride[:0:cap(d.stride)])
	d.pn = resize(d.pn, pr.tcells)
	d.qn = resize(d.qn, pr.tcells)
	clear(d.pn)
	clear(d.qn)
	cells := t.cells[c]
	pr.sumTo(d.pn, d.m.belief[c], 0, cells, d.dig)
	pr.sumTo(d.qn, d.before[d.off[c]:d.off[c]+cells], 0, cells, d.dig)
	v := 0.0
	if root {
		for i, x := range d.pn {
			v += math.Abs(x - d.qn[i])
		}
	} else {
		d.attrsS = maskAttrs(d.attrsS[:0], cl, s)
		var ps proj
		ps.build(t.sizes, d.attrsN, d.attrsS, d.dims2[:0:cap(d.dims2)], d.stride2[:0:cap(d.stride2)])
		d.ps = resize(d.ps, ps.tcells)
		d.qs = resize(d.qs, ps.tcells)
		clear(d.ps)
		clear(d.qs)
		ps.sumTo(d.ps, d.pn, 0, ps.cells, d.dig)
		ps.sumTo(d.qs, d.qn, 0, ps.cells, d.dig)
		j := ps.start(0, d.dig)
		for i, x := range d.pn {
			if qs := d.qs[j]; qs > 0 {
				v += math.Abs(x - d.ps[j]*(d.qn[i]/qs))
			}
			j = ps.next(d.dig, j, 1)
		}
	}
	return v
}

// maskAttrs appends the attributes of clique cl at the positions in mask.
func maskAttrs(dst, cl []int, mask uint64) []int {
	for i, a := range cl {
		if mask&(1<<uint(i)) != 0 {
			dst = append(dst, a)
		}
	}
	return dst
}

func resize(x []float64, n int) []float64 {
	if cap(x) < n {
		return make([]float64, n)
	}
	return x[:n]
}
