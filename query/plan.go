package query

import (
	"fmt"
	"slices"
	"sort"
)

// The operator answers every query from the marginal table of its attribute
// set (a marginal block is that table, a range or predicate sums a box of
// it, a prefix family is its running sum). The tables come from a lattice
// planned from the public workload alone: the root is D itself, and each
// other table is computed from its parent by summing out one attribute.
// Summing out an attribute once serves every table below that excludes it,
// so D is read once, by the root's children, in one fused pass; every later
// table is computed from a smaller one.

// chunkCells is the target length of the slice of a parent table that all
// children read while it sits in the L1 cache (16 KiB). A variable so that
// tests can cut tiny tables into many chunks.
var chunkCells = 2048

// parallelMin is the parent size from which one stage is split across the
// workers; smaller stages run whole, one worker each. A variable so that
// tests can split tiny stages.
var parallelMin = 1 << 16

// node is one table of the lattice.
type node struct {
	attrs    []int // domain positions, increasing
	sizes    []int // sizes of attrs
	size     int   // product of sizes
	parent   int   // -1 for the root (D)
	drop     int   // position in the parent's attrs of the attribute summed out
	dropN    int   // its size
	dropS    int   // its stride in the parent (cells after it)
	strides  []int // strides of attrs within this table
	children []int
	off      int   // offset of the table in the scratch buffer; root: -1
	items    []int // readout items reading this table
	big      bool  // its stage (computing its children) is split across workers

	g geometry // chunking of this table, as a parent

	// Parallel stage: the chunk index where each worker starts (len W+1) and
	// for each child whether workers' writes may overlap (partial sums).
	bounds  []int
	partial []bool
	poff    [][]int // poff[ci][w]: scratch offset of worker w's partial of child ci (w >= 1)
}

// geometry cuts a table into chunks: a chunk is cc codes (fewer at the end)
// of attribute t with every cell of the attributes after t (inner cells),
// for fixed codes of the attributes before t.
type geometry struct {
	t       int
	inner   int // product of the sizes after t
	cc      int // codes of attribute t per chunk
	perBlk  int // chunks per block of attribute t
	blk     int // sizes[t]·inner
	nChunks int
}

func makeGeometry(sizes []int) geometry {
	t := len(sizes) - 1
	inner := 1
	for t > 0 && inner*sizes[t] <= chunkCells {
		inner *= sizes[t]
		t--
	}
	g := geometry{t: t, inner: inner}
	g.cc = min(max(1, chunkCells/inner), sizes[t])
	g.perBlk = (sizes[t] + g.cc - 1) / g.cc
	g.blk = sizes[t] * inner
	outer := 1
	for _, s := range sizes[:t] {
		outer *= s
	}
	g.nChunks = outer * g.perBlk
	return g
}

// chunk returns the block index o, the code range [c0, c1) of attribute t
// and the offset x and length of chunk j.
func (g *geometry) chunk(j int, sizeT int) (o, c0, c1, x, n int) {
	o, q := j/g.perBlk, j%g.perBlk
	c0 = q * g.cc
	c1 = min(c0+g.cc, sizeT)
	return o, c0, c1, o*g.blk + c0*g.inner, (c1 - c0) * g.inner
}

// item is one readout: block b reads node's table.
type item struct {
	block int
	node  int
	cost  int
}

// task is work one worker does alone: the stages below a small child of a
// big node, and the readouts of the tables it computes.
type task struct {
	nodes   []int // pre-order
	items   []int // readouts (forward)
	fwdCost int
	revCost int
}

type plan struct {
	nodes   []node
	items   []item
	workers int
	scratch int   // cells of scratch tables
	bigs    []int // big nodes in pre-order
	tasks   []task
	fwd     [][]int // tasks of each worker, forward
	rev     [][]int // tasks of each worker, reverse
	serial  bool    // run everything on the calling goroutine
}

// setKey renders a sorted attribute set as a map key.
func setKey(attrs []int) string { return fmt.Sprint(attrs) }

// newPlan plans the lattice for the blocks of w over an explicit universe.
func newPlan(w *Workload, workers int) *plan {
	d := w.dom.Len()
	p := &plan{workers: workers}
	sizes := w.dom.Sizes()
	all := make([]int, d)
	for i := range all {
		all[i] = i
	}
	p.nodes = []node{{attrs: all, sizes: sizes, size: prod(sizes), parent: -1, off: -1}}

	// Distinct target sets.
	var targets [][]int
	seen := map[string]bool{setKey(all): true}
	for _, b := range w.blocks {
		k := setKey(b.attrs)
		if !seen[k] {
			seen[k] = true
			targets = append(targets, b.attrs)
		}
	}
	p.grow(0, targets)

	// Readout items, attached to the node holding their set.
	byKey := map[string]int{}
	for ni := range p.nodes {
		k := setKey(p.nodes[ni].attrs)
		if _, ok := byKey[k]; !ok {
			byKey[k] = ni
		}
	}
	for bi := range w.blocks {
		b := &w.blocks[bi]
		ni, ok := byKey[setKey(b.attrs)]
		if !ok {
			panic("query: planner lost a target set")
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
		p.items = append(p.items, item{block: bi, node: ni, cost: cost})
		p.nodes[ni].items = append(p.nodes[ni].items, len(p.items)-1)
	}

	// Scratch offsets and geometry.
	for ni := 1; ni < len(p.nodes); ni++ {
		p.nodes[ni].off = p.scratch
		p.scratch += p.nodes[ni].size
	}
	for ni := range p.nodes {
		n := &p.nodes[ni]
		n.g = makeGeometry(n.sizes)
		n.strides = make([]int, len(n.sizes))
		acc := 1
		for i := len(n.sizes) - 1; i >= 0; i-- {
			n.strides[i] = acc
			acc *= n.sizes[i]
		}
	}
	p.schedule()
	return p
}

func prod(s []int) int {
	n := 1
	for _, x := range s {
		n *= x
	}
	return n
}

// grow adds below node ni the children that serve targets (strict subsets
// of ni's set), greedily: summing out the attribute that the most targets
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
			cost := p.dropCost(n, u)
			if cov > bestCov || cov == bestCov && (cost < bestCost || cost == bestCost && n.sizes[u] > bestSize) {
				best, bestCov, bestCost, bestSize = u, cov, cost, n.sizes[u]
			}
		}
		a := n.attrs[best]
		child := node{parent: ni, drop: best, dropN: n.sizes[best], dropS: prod(n.sizes[best+1:]), off: -1}
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

// dropCost estimates the cost per parent cell, in ns, of summing out
// position u of n (measured on the kernels): runs of 16 cells or more are
// vector adds with a per-run overhead, a reduction of the last attribute
// costs a scalar add per cell, short runs more; splitting a big table
// along a summed-out first attribute needs partial sums.
func (p *plan) dropCost(n *node, u int) float64 {
	s := prod(n.sizes[u+1:])
	var c float64
	switch {
	case s >= 16:
		c = 0.05 + 3/float64(s)
	case s == 1:
		c = 0.5
	default:
		c = 0.6
	}
	if u == 0 && n.size >= parallelMin {
		c += 0.1
	}
	return c
}

// schedule marks the big stages, splits them across workers, and groups
// the rest into tasks.
func (p *plan) schedule() {
	root := &p.nodes[0]
	if p.workers <= 1 || len(root.children) == 0 || root.size < parallelMin {
		p.serial = true
		p.workers = 1
		return
	}
	var mark func(ni int)
	mark = func(ni int) {
		n := &p.nodes[ni]
		if len(n.children) == 0 || n.size < parallelMin {
			return
		}
		n.big = true
		p.bigs = append(p.bigs, ni)
		p.split(ni)
		for _, c := range n.children {
			mark(c)
		}
	}
	mark(0)

	// Tasks: the subtree of each small child of a big node.
	for _, bi := range p.bigs {
		for _, c := range p.nodes[bi].children {
			if p.nodes[c].big {
				continue
			}
			var t task
			var walk func(ni int)
			walk = func(ni int) {
				n := &p.nodes[ni]
				t.nodes = append(t.nodes, ni)
				t.items = append(t.items, n.items...)
				for _, it := range n.items {
					t.fwdCost += p.items[it].cost
					t.revCost += p.items[it].cost
				}
				t.revCost += n.size
				if len(n.children) > 0 {
					t.fwdCost += n.size * len(n.children)
					t.revCost += n.size * len(n.children)
				}
				for _, ch := range n.children {
					walk(ch)
				}
			}
			walk(c)
			p.tasks = append(p.tasks, t)
		}
	}
	// Readouts of big tables are tasks of their own (forward only; in
	// reverse they are part of the big stage).
	for _, bi := range p.bigs {
		for _, it := range p.nodes[bi].items {
			p.tasks = append(p.tasks, task{items: []int{it}, fwdCost: p.items[it].cost})
		}
	}
	p.fwd = p.assign(func(t *task) int { return t.fwdCost })
	p.rev = p.assign(func(t *task) int { return t.revCost })
}

// assign spreads the tasks over the workers, largest first, each to the
// least loaded worker.
func (p *plan) assign(cost func(*task) int) [][]int {
	order := make([]int, len(p.tasks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return cost(&p.tasks[order[i]]) > cost(&p.tasks[order[j]]) })
	load := make([]int, p.workers)
	out := make([][]int, p.workers)
	for _, ti := range order {
		w := 0
		for i := range load {
			if load[i] < load[w] {
				w = i
			}
		}
		load[w] += cost(&p.tasks[ti])
		out[w] = append(out[w], ti)
	}
	return out
}

// split cuts big node ni's chunks into one contiguous range per worker,
// aligned when possible to blocks of its leading attributes so that each
// worker writes its own part of the children; children whose parts would
// overlap get partial sums per worker.
func (p *plan) split(ni int) {
	n := &p.nodes[ni]
	g := &n.g
	W := p.workers
	n.bounds = make([]int, W+1)
	chunksPer := g.nChunks // chunks per unit
	units := 1
	found := false
	for h := 1; h <= g.t; h++ {
		units *= n.sizes[h-1]
		chunksPer = g.nChunks / units
		if units%W == 0 || units >= 4*W {
			found = true
			break
		}
	}
	if !found {
		units, chunksPer = g.nChunks, 1
	}
	for w := 0; w <= W; w++ {
		n.bounds[w] = (w * units / W) * chunksPer
	}
	n.partial = make([]bool, len(n.children))
	n.poff = make([][]int, len(n.children))
	for ci, c := range n.children {
		u := p.nodes[c].drop
		super := n.sizes[u] * prod(n.sizes[u+1:])
		for w := 1; w < W; w++ {
			_, _, _, x, _ := g.chunk(n.bounds[w], n.sizes[g.t])
			if x%super != 0 {
				n.partial[ci] = true
			}
		}
		if n.partial[ci] {
			n.poff[ci] = make([]int, W)
			for w := 1; w < W; w++ {
				n.poff[ci][w] = p.scratch
				p.scratch += p.nodes[c].size
			}
		}
	}
}
