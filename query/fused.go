package query

import "fmt"

// AdjointMapAnswer computes out = A·x for x = f(Aᵀy), where fn applies the
// map f, in one pass over the universe: per tile of cells, the tile of Aᵀy
// is assembled in scratch, fn computes x's tile from it, and the tile of x
// is added to the answers while it is still in the cache. Adjoint, a map and
// Answer in turn read and write a K-vector three times more; a fit whose
// step is x = f(Aᵀy) spends most of its time there on universes past the
// cache (docs/BENCHMARKS.md, "The explicit fit's step in one pass over the
// universe").
//
// fn(t, lo, g) is called once per tile t = 0, …, n−1 (MapTiles), with
// g = (Aᵀy)[lo : lo+len(g)], and returns x's tile, of len(g) cells: a
// tile of a caller's vector, or g itself overwritten (when x need not be
// kept). Calls for different tiles run concurrently on the operator's
// workers; g is scratch, valid during the call only. The answers equal
// Answer(x) bit for bit: the tiles are split between the workers and summed
// as Answer splits and sums them.
//
// It is unavailable (MapTiles reports no tiles, and AdjointMapAnswer
// panics) when a block of the workload reads every attribute: Adjoint adds
// those weights to the whole vector outside the tiles. There call Adjoint,
// the map and Answer in turn. AdjointMapAnswer allocates only at its first
// call (a tile per worker and the weight tables).
func (op *Operator) AdjointMapAnswer(y []float64, fn func(t, lo int, g []float64) []float64, out []float64) {
	ex := op.ex
	if len(y) != ex.m || len(out) != ex.m {
		panic(fmt.Sprintf("query: AdjointMapAnswer with len(y) = %d, len(out) = %d; want %d", len(y), len(out), ex.m))
	}
	if n, _ := op.MapTiles(); n == 0 {
		panic("query: AdjointMapAnswer on a workload with a block over every attribute")
	}
	ex.fusedScratch()
	ex.y, ex.out, ex.fn, ex.rw = y, out, fn, ex.wts
	defer func() { ex.y, ex.out, ex.fn, ex.rw = nil, nil, nil, nil }()
	if ex.p.serial || op.team == nil {
		ex.fusedSerial()
		return
	}
	ex.setWorkers(op.team.n)
	ex.ph = phRTargets
	ex.claim.Store(0)
	op.team.run()
	ex.ph = phFused
	op.team.run()
	ex.ph = phTargets
	ex.claim.Store(0)
	op.team.run()
}

// MapTiles returns the number of tiles of AdjointMapAnswer's calls and the
// cells of each (tile t holds cells [t·size, (t+1)·size)), or 0 tiles when
// AdjointMapAnswer is unavailable.
func (op *Operator) MapTiles() (n, size int) {
	if op.ex.p.full {
		return 0, 0
	}
	return op.ex.p.nTiles, op.ex.p.tile
}

// fusedScratch allocates AdjointMapAnswer's weight tables and a tile per
// worker, once; the tiles are Adjoint's streaming tiles where it has them
// (the two never run at once).
func (ex *exec) fusedScratch() {
	if ex.wts != nil {
		return
	}
	ex.wts = make([]float64, ex.p.gsize)
	if ex.p.stream {
		ex.fbuf = ex.tbuf
		return
	}
	for range ex.p.workers {
		ex.fbuf = append(ex.fbuf, make([]float64, ex.p.tile))
	}
}

// fusedSerial is AdjointMapAnswer on the calling goroutine.
func (ex *exec) fusedSerial() {
	for ti := range ex.p.targets {
		ex.revTarget(ti)
	}
	ex.setWorkers(1)
	ex.fusedTiles(0)
	for ti := range ex.p.targets {
		ex.fwdTarget(ti)
	}
}

// fusedTiles runs worker w's tiles of AdjointMapAnswer: per tile, Aᵀy's
// tile from the weight tables, fn, and x's tile into the worker's target
// tables.
func (ex *exec) fusedTiles(w int) {
	g := ex.g[w]
	clear(g)
	t0, t1 := ex.tilesOf(w)
	if t0 >= t1 {
		return
	}
	p, buf := ex.p, ex.fbuf[w]
	codes := ex.startCodes(w, t0)
	for t := t0; t < t1; t++ {
		lo := t * p.tile
		ex.revTile(w, codes, buf, ex.wts)
		x := ex.fn(t, lo, buf)
		if len(x) != p.tile {
			panic(fmt.Sprintf("query: AdjointMapAnswer's map returned %d cells for a tile of %d", len(x), p.tile))
		}
		ex.fwdTile(w, codes, x, g)
		ex.nextCodes(codes)
	}
}
