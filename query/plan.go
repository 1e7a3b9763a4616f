package query

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
)

// The operator answers every query from the table of its block's attribute
// set, its target: a marginal block is that table, a range or predicate
// sums a box of it, a prefix family is its running sum. The target tables
// come from one pass over D in tiles, planned from the public workload
// alone.
//
// A tile is D with the codes of the leading attributes (the prefix) fixed:
// a contiguous run of cells over the remaining (inner) attributes, small
// enough to stay in the L1 or L2 cache. Within a tile, a small lattice of
// local tables computes the tile's marginal on the inner part of every
// target (each local table is its parent with a run of consecutive inner
// attributes summed out, so summing out attributes once serves every table
// below that excludes them; lattice.go plans it). The tile's marginal on a
// target's inner part is then added into the target table at the row of
// the tile's prefix codes. D is read once, sequentially; the local tables
// never leave the cache; the target tables are the only tables written
// across tiles. Workers claim batches of consecutive tiles, each worker
// with its own local tables and target tables, which are summed at the
// end.
//
// Adjoint runs the same plan backwards: the weights of each target's
// queries form a weight table of the target's shape; per tile, the rows of
// those tables at the tile's prefix codes are broadcast back up the local
// lattice, and the tile of the output is written once.

// tileCells is the smallest tile: the longest prefix considered is the
// longest run of leading attributes whose inner cells still number at
// least tileCells (16 KiB of float64); the planner may choose a shorter
// prefix (larger tiles, up to maxTileCells). A variable so that tests can
// cut tiny universes into many tiles.
var tileCells = 2048

// parallelMin is the universe size from which a call is split across the
// workers; smaller universes run on the calling goroutine. A variable so
// that tests can split tiny universes.
var parallelMin = 1 << 16

// streamBytes is the size of D from which Adjoint writes its output with
// non-temporal stores: beyond the last-level cache, the output's lines
// would otherwise be read from memory before being written. A variable for
// tests.
var streamBytes = 64 << 20

// maxTileCells is the largest tile the planner considers (256 KiB of
// float64, in the L2 cache with the local tables). A variable for tests.
var maxTileCells = 1 << 15

// node is one local table: the marginal of a tile on a set of inner
// attributes. Node 0 is the tile itself.
type node struct {
	attrs    []int // domain positions, increasing
	sizes    []int // sizes of attrs
	size     int   // product of sizes
	parent   int   // -1 for the tile
	dropN    int   // codes of the run of attributes summed out of the parent
	dropS    int   // cells after the run in the parent
	children []int
	off      int   // offset of the table in a worker's local scratch; tile: -1
	targets  []int // targets whose inner part is this node's set
}

// target is one distinct attribute set read by the blocks: its table G_T
// is the marginal of D on the set, in mixed-radix order of the set.
type target struct {
	attrs   []int // domain positions, increasing
	sizes   []int
	strides []int
	size    int
	off     int   // offset of G_T in a worker's target scratch; -1: the full set, D itself
	node    int   // local node holding the inner part; -1 when the inner part is empty
	usize   int   // cells of the inner part (a contiguous row of G_T)
	pstr    []int // per prefix attribute, its stride in G_T (0 if not in the set)
	items   []int // readouts of the blocks reading it
	cost    int   // cells touched by its readouts
}

// item is one readout: block b reads target t's table.
type item struct {
	block  int
	target int
	cost   int
}

type plan struct {
	p      int   // prefix length
	psizes []int // sizes of the prefix attributes
	tile   int   // cells per tile
	nTiles int

	nodes   []node // local lattice, pre-order (children after parents)
	local   int    // cells of a worker's local scratch
	sumNode int    // the smallest local table: targets with an empty inner part sum it

	targets []target
	full    bool // a target is the full attribute set (off −1): Adjoint adds its weights outside the tiles
	gsize   int  // cells of a worker's target scratch
	items   []item

	workers int
	serial  bool  // run everything on the calling goroutine
	stream  bool  // Adjoint assembles each tile in scratch and streams it out
	batch   int   // tiles claimed at a time
	order   []int // targets, largest first
	scratch int   // cells of all scratch tables

	work float64 // local table-cell adds per cell of D (Describe)
}

// setKey renders a sorted attribute set as a map key.
func setKey(attrs []int) string { return fmt.Sprint(attrs) }

func prod(s []int) int {
	n := 1
	for _, x := range s {
		n *= x
	}
	return n
}

// newPlan plans the tiles, the local lattice and the target tables for the
// blocks of w over an explicit universe.
func newPlan(w *Workload, workers int) *plan {
	sizes := w.dom.Sizes()
	k := prod(sizes)
	pl := &plan{}
	pl.addTargets(w)
	p, lp := pl.chooseTiling(sizes, k)
	pl.buildNodes(sizes, k, p, lp)
	pl.layout(len(sizes), p)
	pl.schedule(workers, k)
	return pl
}

// addTargets groups the workload's blocks by attribute set: one target per
// set, one item (with its cost in cells read) per block.
func (pl *plan) addTargets(w *Workload) {
	byKey := map[string]int{}
	for bi := range w.blocks {
		b := &w.blocks[bi]
		key := setKey(b.attrs)
		ti, ok := byKey[key]
		if !ok {
			ti = len(pl.targets)
			byKey[key] = ti
			pl.targets = append(pl.targets, target{attrs: b.attrs})
		}
		cost := b.n
		if b.kind == bProduct {
			cost = 1
			for _, rs := range b.runs {
				c := 0
				for _, r := range rs {
					c += int(r.hi-r.lo) + 1
				}
				cost *= c
			}
		}
		pl.items = append(pl.items, item{block: bi, target: ti, cost: cost})
		t := &pl.targets[ti]
		t.items = append(t.items, len(pl.items)-1)
		t.cost += cost
	}
}

// chooseTiling returns the tiling's prefix length p: the longest prefix
// whose tiles hold tileCells cells, or a shorter one with tiles of at most
// maxTileCells if the cost model prefers it (fewer target rows to add per
// cell of D against a larger local lattice), and the lattice planner for
// it (nil: too many attributes or inner parts for its bit sets).
func (pl *plan) chooseTiling(sizes []int, k int) (int, *latticePlanner) {
	d := len(sizes)
	pMax, tile := 0, k
	for pMax < d && tile/sizes[pMax] >= tileCells {
		tile /= sizes[pMax]
		pMax++
	}
	bestP, bestCost := pMax, math.Inf(1)
	var bestLP *latticePlanner
	for p := pMax; p >= 0; p-- {
		tile := prod(sizes[p:])
		if p < pMax && tile > maxTileCells {
			break
		}
		lp, T := pl.lattice(sizes, p)
		if lp == nil {
			if p == pMax {
				bestP, bestLP = p, nil
			}
			break
		}
		c := tileNs + lp.plan(nil, -1, 1<<(d-p)-1, T, p)
		for ti := range pl.targets {
			t := &pl.targets[ti]
			if len(t.attrs) < d && innerLen(t.attrs, p) > 0 {
				c += callNs + scatterNs*float64(prod(innerSizes(t.attrs, sizes, p)))
			}
		}
		if c /= float64(tile); c < bestCost {
			bestP, bestCost, bestLP = p, c, lp
		}
	}
	return bestP, bestLP
}

// buildNodes sets the tiling at prefix p and builds the local lattice of
// nodes under the tile's root (with lp, or by growing it from the targets'
// inner parts when lp is nil), each node's children ordered for the
// adjoint.
func (pl *plan) buildNodes(sizes []int, k, p int, lp *latticePlanner) {
	d := len(sizes)
	tile := prod(sizes[p:])
	pl.p, pl.psizes, pl.tile, pl.nTiles = p, sizes[:p], tile, k/tile
	for ti := range pl.targets {
		pl.targets[ti] = newTarget(pl.targets[ti], sizes, p)
	}
	inner := make([]int, d-p)
	for i := range inner {
		inner[i] = p + i
	}
	pl.nodes = []node{{attrs: inner, sizes: sizes[p:], size: tile, parent: -1, off: -1}}
	if lp != nil {
		_, T := pl.lattice(sizes, p)
		lp.plan(pl, 0, 1<<(d-p)-1, T, p)
	} else { // too many attributes or inner parts for the planner's bit sets
		var parts [][]int
		seen := map[string]bool{setKey(inner): true}
		for ti := range pl.targets {
			u := pl.targets[ti].attrs[len(pl.targets[ti].attrs)-innerLen(pl.targets[ti].attrs, p):]
			if key := setKey(u); len(u) > 0 && !seen[key] {
				seen[key] = true
				parts = append(parts, u)
			}
		}
		pl.grow(0, parts)
	}
	// Adjoint writes the first child of a node and adds the others: put
	// first the child whose broadcast adds worst (rows of s%4 != 0 lanes).
	for ni := range pl.nodes {
		slices.SortStableFunc(pl.nodes[ni].children, func(a, b int) int {
			ka, kb := pl.nodes[a].dropS%4 != 0, pl.nodes[b].dropS%4 != 0
			switch {
			case ka && !kb:
				return -1
			case kb && !ka:
				return 1
			}
			return 0
		})
	}
}

// layout places the nodes' buffers in the local scratch and the targets'
// in the global one, attaches each target to the node of its inner part,
// and sets the plan's work per cell of D.
func (pl *plan) layout(d, p int) {
	nodeOf := map[string]int{}
	for ni := range pl.nodes {
		if key := setKey(pl.nodes[ni].attrs); ni == 0 || nodeOf[key] == 0 {
			nodeOf[key] = ni
		}
	}
	for ni := 1; ni < len(pl.nodes); ni++ {
		n := &pl.nodes[ni]
		n.off = pl.local
		pl.local += n.size
		if n.size < pl.nodes[pl.sumNode].size {
			pl.sumNode = ni
		}
	}
	work := 0
	for ni := range pl.nodes {
		work += pl.nodes[ni].size * len(pl.nodes[ni].children)
	}
	for ti := range pl.targets {
		t := &pl.targets[ti]
		if len(t.attrs) == d {
			t.off, t.node = -1, 0
			pl.full = true
			continue
		}
		t.off = pl.gsize
		pl.gsize += t.size
		t.node = -1
		if u := t.attrs[len(t.attrs)-innerLen(t.attrs, p):]; len(u) > 0 {
			t.node = nodeOf[setKey(u)]
			pl.nodes[t.node].targets = append(pl.nodes[t.node].targets, ti)
			work += t.usize
		}
	}
	pl.work = float64(work) / float64(pl.tile)
}

// innerSizes returns the sizes of the attributes of attrs at positions >= p.
func innerSizes(attrs, sizes []int, p int) []int {
	var out []int
	for _, a := range attrs {
		if a >= p {
			out = append(out, sizes[a])
		}
	}
	return out
}

// lattice returns the planner of the local lattice for prefix length p
// and the set of its targets (the distinct inner parts that are neither
// empty nor all inner attributes), or nil if they do not fit its bit sets.
func (pl *plan) lattice(sizes []int, p int) (*latticePlanner, uint64) {
	q := len(sizes) - p
	if q > 63 {
		return nil, 0
	}
	lp := &latticePlanner{sizes: sizes[p:], memo: map[[2]uint64]lchoice{}}
	seen := map[uint64]bool{0: true, 1<<q - 1: true}
	for ti := range pl.targets {
		var u uint64
		for _, a := range pl.targets[ti].attrs {
			if a >= p {
				u |= 1 << (a - p)
			}
		}
		if !seen[u] {
			seen[u] = true
			lp.targets = append(lp.targets, u)
		}
	}
	if len(lp.targets) > 64 {
		return nil, 0
	}
	return lp, 1<<len(lp.targets) - 1
}

// addNode adds below node ni the table over the inner attributes of set
// (bit i: domain position base+i), computed by summing out n codes with s
// cells after them.
func (pl *plan) addNode(ni int, set uint64, base int, sizes []int, n, s int) int {
	c := node{parent: ni, dropN: n, dropS: s, off: -1, size: 1}
	for r := set; r != 0; r &= r - 1 {
		i := bits.TrailingZeros64(r)
		c.attrs = append(c.attrs, base+i)
		c.sizes = append(c.sizes, sizes[i])
		c.size *= sizes[i]
	}
	ci := len(pl.nodes)
	pl.nodes = append(pl.nodes, c)
	pl.nodes[ni].children = append(pl.nodes[ni].children, ci)
	return ci
}

// innerLen is the number of attributes of attrs at positions >= p.
func innerLen(attrs []int, p int) int {
	n := 0
	for _, a := range attrs {
		if a >= p {
			n++
		}
	}
	return n
}

// newTarget completes t (attrs, items and cost set) for prefix length p.
func newTarget(t target, domSizes []int, p int) target {
	attrs := t.attrs
	t.sizes, t.strides, t.pstr = make([]int, len(attrs)), make([]int, len(attrs)), make([]int, p)
	for i, a := range attrs {
		t.sizes[i] = domSizes[a]
	}
	acc := 1
	for i := len(attrs) - 1; i >= 0; i-- {
		t.strides[i] = acc
		acc *= t.sizes[i]
	}
	t.size = acc
	t.usize = 1
	for i, a := range attrs {
		if a < p {
			t.pstr[a] = t.strides[i]
		} else {
			t.usize *= t.sizes[i]
		}
	}
	return t
}

// grow adds below node ni the children that serve targets (strict subsets
// of ni's set), for lattices beyond the bit sets of latticePlanner,
// greedily: summing out the attribute that the most targets
// exclude, preferring cheap kernels and small children.
func (p *plan) grow(ni int, targets [][]int) {
	for len(targets) > 0 {
		n := &p.nodes[ni]
		best, bestCov, bestCost, bestSize := -1, -1, 0.0, 0
		for u, a := range n.attrs {
			cov := 0
			for _, s := range targets {
				if !slices.Contains(s, a) {
					cov++
				}
			}
			cost := dropCost(n, u)
			if cov > bestCov || cov == bestCov && (cost < bestCost || cost == bestCost && n.sizes[u] > bestSize) {
				best, bestCov, bestCost, bestSize = u, cov, cost, n.sizes[u]
			}
		}
		a := n.attrs[best]
		child := node{parent: ni, dropN: n.sizes[best], dropS: prod(n.sizes[best+1:]), off: -1}
		child.attrs = slices.Delete(slices.Clone(n.attrs), best, best+1)
		child.sizes = slices.Delete(slices.Clone(n.sizes), best, best+1)
		child.size = n.size / n.sizes[best]
		var covered, rest [][]int
		for _, s := range targets {
			switch {
			case slices.Contains(s, a):
				rest = append(rest, s)
			case !slices.Equal(s, child.attrs):
				covered = append(covered, s)
			}
		}
		ci := len(p.nodes)
		p.nodes = append(p.nodes, child)
		p.nodes[ni].children = append(p.nodes[ni].children, ci)
		p.grow(ci, covered)
		targets = rest
	}
}

// dropCost estimates the relative cost per parent cell of summing out
// position u of n with reduceSet: rows of 4 cells or more are summed 4
// lanes at a time, rows of 1 (the last attribute) are horizontal sums,
// rows of 2 or 3 are scalar.
func dropCost(n *node, u int) float64 {
	switch s := prod(n.sizes[u+1:]); {
	case s >= 4:
		return 0.3 + 1/float64(s)
	case s == 1:
		return 0.6
	default:
		return 0.8
	}
}

// schedule sets the parallel work: tiles claimed in batches (about 8 per
// worker, contiguous so that D is read in long runs), targets claimed
// largest first.
func (p *plan) schedule(workers, k int) {
	if workers <= 1 || k < parallelMin || p.nTiles < 2 {
		workers = 1
		p.serial = true
	}
	p.workers = workers
	p.batch = max(1, p.nTiles/(8*workers))
	if p.serial {
		p.batch = p.nTiles
	}
	p.stream = k*8 >= streamBytes
	p.scratch = workers * (p.local + p.gsize)
	if p.stream {
		p.scratch += workers * p.tile
	}
	p.order = make([]int, len(p.targets))
	for i := range p.order {
		p.order[i] = i
	}
	cost := func(t *target) int { return workers*t.size + t.cost }
	sort.SliceStable(p.order, func(i, j int) bool { return cost(&p.targets[p.order[i]]) > cost(&p.targets[p.order[j]]) })
}
