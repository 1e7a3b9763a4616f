package query

import (
	"sync/atomic"

	"gonum.org/v1/gonum/floats"
)

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
	loc     [][]float64 // per worker: local tables
	g       [][]float64 // per worker: target tables (worker 0's hold the result; in Adjoint, the weights)
	tbuf    [][]float64 // per worker: a tile of Adjoint's output, when it is streamed
	codes   [][]int     // per worker: prefix codes of the current tile

	// The current call: Answer reads d and writes out (m); Adjoint reads y
	// (m) and writes out (k); both, fused (AdjointMapAnswer), read y, map
	// each tile with fn, and write out (m). rw holds the weight tables of
	// the reverse pass: worker 0's target scratch in Adjoint, wts when
	// fused.
	d, y, out []float64
	rw        []float64
	fn        func(t, lo int, g []float64) []float64
	wts       []float64   // AdjointMapAnswer's weight tables (allocated at its first call)
	fbuf      [][]float64 // per worker: AdjointMapAnswer's tile of Aᵀy (idem; tbuf when streaming)

	ph     int
	claim  atomic.Int64 // next unclaimed target of the phase
	nw     int          // workers taking part in the call (1 when serial)
	joined []bool       // workers that took part in the tiles phase

	cons [][]run // AddQuery: constraints per domain attribute
	one  []run
}

const (
	phTiles = iota
	phTargets
	phRTargets
	phRTiles
	phFused
)

func newExec(p *plan, w *Workload, k int) *exec {
	d := w.dom.Len()
	ex := &exec{
		p:       p,
		blocks:  w.blocks,
		sizes:   w.dom.Sizes(),
		strides: make([]int, d),
		k:       k,
		m:       w.m,
		scratch: make([]float64, p.scratch),
		cons:    make([][]run, d),
		one:     make([]run, d),
	}
	for i, st := range w.dom.Strides() {
		ex.strides[i] = int(st)
	}
	s := ex.scratch
	ex.joined = make([]bool, p.workers)
	ex.joined[0] = true
	for range p.workers {
		ex.g = append(ex.g, s[:p.gsize:p.gsize])
		s = s[p.gsize:]
		ex.loc = append(ex.loc, s[:p.local:p.local])
		s = s[p.local:]
		if p.stream {
			ex.tbuf = append(ex.tbuf, s[:p.tile:p.tile])
			s = s[p.tile:]
		}
		ex.codes = append(ex.codes, make([]int, p.p))
	}
	return ex
}

// runPhase is worker w's share of the current phase: it claims tiles or
// targets until none is left.
func (ex *exec) runPhase(w int) {
	switch ex.ph {
	case phTiles:
		ex.fwdTiles(w)
	case phTargets:
		for i := ex.claim.Add(1) - 1; i < int64(len(ex.p.order)); i = ex.claim.Add(1) - 1 {
			ex.fwdTarget(ex.p.order[i])
		}
	case phRTargets:
		for i := ex.claim.Add(1) - 1; i < int64(len(ex.p.order)); i = ex.claim.Add(1) - 1 {
			ex.revTarget(ex.p.order[i])
		}
	case phRTiles:
		ex.revTiles(w)
	case phFused:
		ex.fusedTiles(w)
	}
}

// tilesOf returns worker w's tiles: a fixed contiguous share of them, so
// that every call partitions D, and so sums it, the same way.
func (ex *exec) tilesOf(w int) (t0, t1 int) {
	n, nw := ex.p.nTiles, ex.nw
	return n * w / nw, n * (w + 1) / nw
}

// setWorkers records how many workers share the call's tiles: worker w
// takes part iff w < nw.
func (ex *exec) setWorkers(nw int) {
	ex.nw = nw
	for w := range ex.joined {
		ex.joined[w] = w < nw
	}
}

// answerSerial is Answer on the calling goroutine.
func (ex *exec) answerSerial() {
	ex.setWorkers(1)
	ex.fwdTiles(0)
	for ti := range ex.p.targets {
		ex.fwdTarget(ti)
	}
}

// adjointSerial is Adjoint on the calling goroutine.
func (ex *exec) adjointSerial() {
	ex.rw = ex.g[0]
	for ti := range ex.p.targets {
		ex.revTarget(ti)
	}
	ex.setWorkers(1)
	ex.revTiles(0)
	ex.revFull()
}

// localTable is local node ni's table for worker w, or the tile for node 0.
func (ex *exec) localTable(w, ni int, tile []float64) []float64 {
	if ni == 0 {
		return tile
	}
	n := &ex.p.nodes[ni]
	return ex.loc[w][n.off : n.off+n.size]
}

// startCodes sets worker w's prefix codes to those of tile t.
func (ex *exec) startCodes(w, t int) []int {
	codes := ex.codes[w]
	for j := len(codes) - 1; j >= 0; j-- {
		s := ex.p.psizes[j]
		codes[j] = t % s
		t /= s
	}
	return codes
}

// nextCodes advances the prefix codes to the next tile.
func (ex *exec) nextCodes(codes []int) {
	for j := len(codes) - 1; j >= 0; j-- {
		codes[j]++
		if codes[j] < ex.p.psizes[j] {
			return
		}
		codes[j] = 0
	}
}

// row is the offset in worker scratch of target t's row for the prefix
// codes.
func (t *target) row(codes []int) int {
	r := t.off
	for j, c := range codes {
		r += c * t.pstr[j]
	}
	return r
}

// fwdTiles claims tiles and adds their contributions to worker w's target
// tables: per tile, the local lattice, then each target's row += the
// tile's marginal on the target's inner part.
func (ex *exec) fwdTiles(w int) {
	g := ex.g[w]
	clear(g)
	if t0, t1 := ex.tilesOf(w); t0 < t1 {
		ex.fwdRange(w, g, t0, t1)
	}
}

// fwdRange adds tiles [t0, t1) into g, worker w's target tables.
func (ex *exec) fwdRange(w int, g []float64, t0, t1 int) {
	p := ex.p
	codes := ex.startCodes(w, t0)
	for t := t0; t < t1; t++ {
		ex.fwdTile(w, codes, ex.d[t*p.tile:(t+1)*p.tile], g)
		ex.nextCodes(codes)
	}
}

// fwdTile adds one tile of D (prefix codes codes) into g, worker w's
// target tables: the local lattice, then each target's row += the tile's
// marginal on the target's inner part.
func (ex *exec) fwdTile(w int, codes []int, tile, g []float64) {
	p := ex.p
	for ni := range p.nodes {
		n := &p.nodes[ni]
		if len(n.children) == 0 {
			continue
		}
		src := ex.localTable(w, ni, tile)
		for _, c := range n.children {
			ch := &p.nodes[c]
			reduceSet(ex.localTable(w, c, nil), src, n.size/(ch.dropN*ch.dropS), ch.dropN, ch.dropS)
		}
	}
	tsum, summed := 0.0, false
	for ti := range p.targets {
		tg := &p.targets[ti]
		if tg.off < 0 {
			continue
		}
		r := tg.row(codes)
		if tg.node < 0 {
			if !summed {
				tsum, summed = sum(ex.localTable(w, p.sumNode, tile)), true
			}
			g[r] += tsum
			continue
		}
		addTo(g[r:r+tg.usize], ex.localTable(w, tg.node, tile))
	}
}

// fwdTarget sums the partial tables of target ti of the workers that took
// part, and writes the answers of its blocks.
func (ex *exec) fwdTarget(ti int) {
	t := &ex.p.targets[ti]
	var tab []float64
	if t.off < 0 {
		tab = ex.d
	} else {
		tab = ex.g[0][t.off : t.off+t.size]
		for w := 1; w < len(ex.joined); w++ {
			if ex.joined[w] {
				addTo(tab, ex.g[w][t.off:t.off+t.size])
			}
		}
	}
	for _, it := range t.items {
		ex.readout(it, tab)
	}
}

// readout writes the answers of item it from its target table.
func (ex *exec) readout(it int, tab []float64) {
	item := &ex.p.items[it]
	b := &ex.blocks[item.block]
	t := &ex.p.targets[item.target]
	q := ex.out[b.off : b.off+b.n]
	switch b.kind {
	case bMarginal:
		floats.ScaleTo(q, b.weight, tab)
	case bProduct:
		q[0] = b.weight * boxWalk(tab, 0, false, t.sizes, t.strides, b.runs, len(t.sizes)-1, 0, 0)
	case bPrefix:
		acc := 0.0
		for c := range q {
			acc += tab[c]
			q[c] = b.weight * acc
		}
	}
}

// revTarget writes target ti's weight table (in ex.rw): the weights of the
// queries of its blocks on its cells.
func (ex *exec) revTarget(ti int) {
	t := &ex.p.targets[ti]
	if t.off < 0 {
		return // the full set: added to the output by revFull
	}
	tab := ex.rw[t.off : t.off+t.size]
	clear(tab)
	for _, it := range t.items {
		ex.addWeights(it, tab)
	}
}

// addWeights adds the weights of item it's queries to the cells of tab,
// its target's table (or the output, for the full set).
func (ex *exec) addWeights(it int, tab []float64) {
	item := &ex.p.items[it]
	b := &ex.blocks[item.block]
	t := &ex.p.targets[item.target]
	switch b.kind {
	case bMarginal:
		addScaled(tab, b.weight, ex.y[b.off:b.off+b.n])
	case bProduct:
		boxWalk(tab, b.weight*ex.y[b.off], true, t.sizes, t.strides, b.runs, len(t.sizes)-1, 0, 0)
	case bPrefix:
		acc := 0.0
		for c := b.n - 1; c >= 0; c-- {
			acc += ex.y[b.off+c]
			tab[c] += b.weight * acc
		}
	}
}

// revTiles writes worker w's tiles of the output: per tile, the local
// lattice backwards, each local table being the sum of its targets' weight
// rows and its children broadcast over the attribute each sums out.
func (ex *exec) revTiles(w int) {
	if t0, t1 := ex.tilesOf(w); t0 < t1 {
		ex.revRange(w, t0, t1)
	}
}

// revRange writes tiles [t0, t1) of the output.
func (ex *exec) revRange(w, t0, t1 int) {
	p := ex.p
	codes := ex.startCodes(w, t0)
	for t := t0; t < t1; t++ {
		tile := ex.out[t*p.tile : (t+1)*p.tile]
		if p.stream {
			tile = ex.tbuf[w]
		}
		ex.revTile(w, codes, tile, ex.rw)
		if p.stream {
			streamCopy(ex.out[t*p.tile:(t+1)*p.tile], tile)
		}
		ex.nextCodes(codes)
	}
}

// revTile writes one tile of the output (prefix codes codes) into tile:
// the local lattice backwards, each local table being the sum of its
// targets' rows of the weight tables gw and its children broadcast over
// the attribute each sums out.
func (ex *exec) revTile(w int, codes []int, tile, gw []float64) {
	p := ex.p
	for ni := len(p.nodes) - 1; ni >= 0; ni-- { // children before parents
		n := &p.nodes[ni]
		dst := ex.localTable(w, ni, tile)
		first := true
		for _, c := range n.children {
			ch := &p.nodes[c]
			broadcast(dst, ex.localTable(w, c, nil), n.size/(ch.dropN*ch.dropS), ch.dropN, ch.dropS, !first)
			first = false
		}
		for _, ti := range n.targets {
			tg := &p.targets[ti]
			r := tg.row(codes)
			if first {
				copy(dst, gw[r:r+tg.usize])
				first = false
			} else {
				addTo(dst, gw[r:r+tg.usize])
			}
		}
		if ni == p.sumNode {
			v := 0.0
			for ti := range p.targets {
				if tg := &p.targets[ti]; tg.node < 0 {
					v += gw[tg.row(codes)]
				}
			}
			if first {
				fill(dst, v)
				first = false
			} else if v != 0 {
				addConst(dst, v)
			}
		}
		if first {
			clear(dst)
		}
	}
}

// revFull adds the weights of the blocks reading the full attribute set
// (D itself) to the output.
func (ex *exec) revFull() {
	for ti := range ex.p.targets {
		if t := &ex.p.targets[ti]; t.off < 0 {
			for _, it := range t.items {
				ex.addWeights(it, ex.out)
			}
		}
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
