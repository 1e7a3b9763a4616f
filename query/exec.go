package query

import "gonum.org/v1/gonum/floats"

// exec runs a plan. It holds everything the workers touch, and nothing that
// points back to the Operator, so that an unreachable Operator can stop its
// helper goroutines.
type exec struct {
	p       *plan
	blocks  []block
	sizes   []int // domain sizes
	strides []int // domain strides
	k, m    int
	scratch []float64

	// The current call: Answer reads d and writes out (m); Adjoint reads y
	// (m) and writes out (k).
	d, y, out []float64

	ph     int
	phNode int

	cons [][]run // AddQuery: constraints per domain attribute
	one  []run
}

const (
	phStage = iota
	phReduce
	phTasks
	phRTasks
	phRStage
)

// runPhase is worker w's share of the current phase.
func (ex *exec) runPhase(w int) {
	switch ex.ph {
	case phStage:
		n := &ex.p.nodes[ex.phNode]
		ex.stageFwd(ex.phNode, w, n.bounds[w], n.bounds[w+1], true)
	case phReduce:
		ex.reducePartials(ex.phNode, w)
	case phTasks:
		for _, ti := range ex.p.fwd[w] {
			ex.taskFwd(&ex.p.tasks[ti])
		}
	case phRTasks:
		for _, ti := range ex.p.rev[w] {
			ex.taskRev(&ex.p.tasks[ti])
		}
	case phRStage:
		n := &ex.p.nodes[ex.phNode]
		ex.stageRev(ex.phNode, n.bounds[w], n.bounds[w+1])
	}
}

// fwdTable is node ni's marginal table during Answer.
func (ex *exec) fwdTable(ni int) []float64 {
	n := &ex.p.nodes[ni]
	if n.off < 0 {
		return ex.d
	}
	return ex.scratch[n.off : n.off+n.size]
}

// revTable is node ni's weight table during Adjoint.
func (ex *exec) revTable(ni int) []float64 {
	n := &ex.p.nodes[ni]
	if n.off < 0 {
		return ex.out
	}
	return ex.scratch[n.off : n.off+n.size]
}

// childBuf is where worker w accumulates child ci of node n.
func (ex *exec) childBuf(n *node, ci, w int) []float64 {
	c := &ex.p.nodes[n.children[ci]]
	if w > 0 && n.partial != nil && n.partial[ci] {
		off := n.poff[ci][w]
		return ex.scratch[off : off+c.size]
	}
	return ex.scratch[c.off : c.off+c.size]
}

// stageFwd computes the children of node ni from chunks [j0, j1) of its
// table: each chunk is read once and summed into every child while it is in
// cache. In a parallel stage a child whose part is this worker's own is
// zeroed on that part only; otherwise the whole (partial) child is zeroed.
func (ex *exec) stageFwd(ni, w, j0, j1 int, parallel bool) {
	n := &ex.p.nodes[ni]
	g := &n.g
	sizeT := n.sizes[g.t]
	src := ex.fwdTable(ni)
	_, _, _, X, _ := g.chunk(j0, sizeT)
	_, _, _, Y, _ := g.chunk(j1, sizeT)
	for ci, c := range n.children {
		dst := ex.childBuf(n, ci, w)
		if parallel && !n.partial[ci] {
			dn := ex.p.nodes[c].dropN
			clear(dst[X/dn : Y/dn])
		} else {
			clear(dst)
		}
	}
	for j := j0; j < j1; j++ {
		o, c0, c1, x, ln := g.chunk(j, sizeT)
		chunk := src[x : x+ln]
		for ci, c := range n.children {
			ch := &ex.p.nodes[c]
			dst := ex.childBuf(n, ci, w)
			u, dn, ds := ch.drop, ch.dropN, ch.dropS
			switch {
			case u < g.t:
				off := (x/(dn*ds))*ds + x%ds
				addTo(dst[off:off+ln], chunk)
			case u == g.t:
				reduceBlocks(dst[o*g.inner:(o+1)*g.inner], chunk, 1, c1-c0, g.inner)
			default:
				reduceBlocks(dst[x/dn:(x+ln)/dn], chunk, ln/(dn*ds), dn, ds)
			}
		}
	}
}

// reducePartials adds the workers' partial children of node ni into the
// children; worker w sums its share of the cells.
func (ex *exec) reducePartials(ni, w int) {
	n := &ex.p.nodes[ni]
	W := ex.p.workers
	for ci, c := range n.children {
		if !n.partial[ci] {
			continue
		}
		size := ex.p.nodes[c].size
		lo, hi := w*size/W, (w+1)*size/W
		dst := ex.childBuf(n, ci, 0)[lo:hi]
		for v := 1; v < W; v++ {
			addTo(dst, ex.childBuf(n, ci, v)[lo:hi])
		}
	}
}

// stageRev writes chunks [j0, j1) of node ni's weight table: the weights of
// the marginal blocks reading it, plus its children's weight tables
// broadcast over the attribute each one sums out.
func (ex *exec) stageRev(ni, j0, j1 int) {
	n := &ex.p.nodes[ni]
	g := &n.g
	sizeT := n.sizes[g.t]
	dst := ex.revTable(ni)
	for j := j0; j < j1; j++ {
		o, c0, c1, x, ln := g.chunk(j, sizeT)
		pc := dst[x : x+ln]
		clear(pc)
		for _, it := range n.items {
			b := &ex.blocks[ex.p.items[it].block]
			if b.kind == bMarginal {
				addScaled(pc, b.weight, ex.y[b.off+x:b.off+x+ln])
			}
		}
		for _, c := range n.children {
			ch := &ex.p.nodes[c]
			cb := ex.revTable(c)
			u, dn, ds := ch.drop, ch.dropN, ch.dropS
			switch {
			case u < g.t:
				off := (x/(dn*ds))*ds + x%ds
				addTo(pc, cb[off:off+ln])
			case u == g.t:
				row := cb[o*g.inner : (o+1)*g.inner]
				if g.inner == 1 {
					addConst(pc, row[0])
					break
				}
				for cc := range c1 - c0 {
					addTo(pc[cc*g.inner:(cc+1)*g.inner], row)
				}
			default:
				broadcastBlocks(pc, cb[x/dn:(x+ln)/dn], ln/(dn*ds), dn, ds)
			}
		}
	}
}

// sparseRev adds the weights of the range, predicate and prefix queries
// reading node ni into its weight table.
func (ex *exec) sparseRev(ni int) {
	n := &ex.p.nodes[ni]
	t := ex.revTable(ni)
	for _, it := range n.items {
		b := &ex.blocks[ex.p.items[it].block]
		switch b.kind {
		case bProduct:
			boxWalk(t, b.weight*ex.y[b.off], true, n.sizes, n.strides, b.runs, len(n.sizes)-1, 0, 0)
		case bPrefix:
			acc := 0.0
			for c := b.n - 1; c >= 0; c-- {
				acc += ex.y[b.off+c]
				t[c] += b.weight * acc
			}
		}
	}
}

// readout writes the answers of item it from its table.
func (ex *exec) readout(it int) {
	item := &ex.p.items[it]
	b := &ex.blocks[item.block]
	n := &ex.p.nodes[item.node]
	t := ex.fwdTable(item.node)
	q := ex.out[b.off : b.off+b.n]
	switch b.kind {
	case bMarginal:
		floats.ScaleTo(q, b.weight, t)
	case bProduct:
		q[0] = b.weight * boxWalk(t, 0, false, n.sizes, n.strides, b.runs, len(n.sizes)-1, 0, 0)
	case bPrefix:
		acc := 0.0
		for c := range q {
			acc += t[c]
			q[c] = b.weight * acc
		}
	}
}

func (ex *exec) taskFwd(t *task) {
	for _, ni := range t.nodes {
		n := &ex.p.nodes[ni]
		if len(n.children) > 0 {
			ex.stageFwd(ni, 0, 0, n.g.nChunks, false)
		}
	}
	for _, it := range t.items {
		ex.readout(it)
	}
}

func (ex *exec) taskRev(t *task) {
	for i := len(t.nodes) - 1; i >= 0; i-- {
		ni := t.nodes[i]
		ex.stageRev(ni, 0, ex.p.nodes[ni].g.nChunks)
		ex.sparseRev(ni)
	}
}

// boxWalk sums (add false) or adds v to (add true) the cells of table t
// (shape sizes, strides) whose codes lie in the runs of cons; a nil entry
// of cons leaves that attribute free. last is the last constrained
// attribute (-1: none) and the walk starts at level with base offset base.
func boxWalk(t []float64, v float64, add bool, sizes, strides []int, cons [][]run, last, level, base int) float64 {
	if last < 0 {
		if add {
			addConst(t, v)
			return 0
		}
		return sum(t)
	}
	st := strides[level]
	acc := 0.0
	if level == last {
		for _, r := range cons[level] {
			seg := t[base+int(r.lo)*st : base+(int(r.hi)+1)*st]
			if add {
				addConst(seg, v)
			} else {
				acc += sum(seg)
			}
		}
		return acc
	}
	if rs := cons[level]; rs != nil {
		for _, r := range rs {
			for c := int(r.lo); c <= int(r.hi); c++ {
				acc += boxWalk(t, v, add, sizes, strides, cons, last, level+1, base+c*st)
			}
		}
		return acc
	}
	for c := range sizes[level] {
		acc += boxWalk(t, v, add, sizes, strides, cons, last, level+1, base+c*st)
	}
	return acc
}
