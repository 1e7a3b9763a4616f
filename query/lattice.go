package query

import (
	"math"
	"math/bits"
)

// Planning of the local lattice. Each local table is its parent with a run
// of consecutive attributes summed out (one reduceSet over the middle axis
// of an O × n × s view of the parent), and the planner picks, for a table
// and the targets it must serve, the runs to sum out by dynamic programming
// over (attribute set, set of targets) under a cost model of the kernels;
// it also picks the tile size (the prefix length) by the same model.

// Cost model, in ns on the project machine (AVX2 kernels, tables in the L1
// cache): a kernel call costs callNs, plus per parent cell of a reduction
// a cost that depends on the row length s and the number of rows n summed
// (measured with the kernels of kernels_amd64.s).
const (
	callNs    = 10.0
	tileNs    = 40.0 // per tile: prefix codes, loop, target rows
	scatterNs = 0.05 // per cell of a target row added from a local table
	l2Ns      = 0.05 // per cell read from the L2 cache rather than L1
	l1Cells   = 4096 // float64 cells that a kernel's source keeps in L1
)

func reduceNs(size, n, s int) float64 {
	var perCell float64
	switch {
	case n == 1:
		perCell = 0.03
	case s >= 16:
		perCell = 0.05
	case s >= 4:
		perCell = 0.12
	case s == 1 && n >= 4:
		perCell = 0.11
	case s == 1:
		perCell = 0.3
	default: // rows of 2 or 3: scalar Go
		perCell = 1.0
	}
	if size > l1Cells {
		perCell += l2Ns // the parent is read from the L2 cache
	}
	return callNs + perCell*float64(size)
}

// maxStates bounds the dynamic programme; beyond it the planner falls back
// to a greedy choice (sum out the attribute that the most targets exclude).
const maxStates = 1 << 11

// latticePlanner plans the local lattice over q inner attributes (bit i
// of a set is inner attribute i) for targets given as attribute sets.
type latticePlanner struct {
	sizes   []int
	targets []uint64
	memo    map[[2]uint64]lchoice
	over    bool
}

type lchoice struct {
	cost float64
	run  uint64 // the attributes the next child of the table sums out
}

func (lp *latticePlanner) size(S uint64) int {
	n := 1
	for ; S != 0; S &= S - 1 {
		n *= lp.sizes[bits.TrailingZeros64(S)]
	}
	return n
}

// covered returns the targets of T (a set of target indices) that are
// subsets of child, and those of them equal to child.
func (lp *latticePlanner) covered(T, child uint64) (cov, held uint64) {
	for r := T; r != 0; r &= r - 1 {
		ti := bits.TrailingZeros64(r)
		if lp.targets[ti]&^child == 0 {
			cov |= 1 << ti
			if lp.targets[ti] == child {
				held |= 1 << ti
			}
		}
	}
	return cov, held
}

// runs calls f for every run of consecutive attributes of S (in attribute
// order) other than S itself, with its number of codes n and the cells s
// after it.
func (lp *latticePlanner) runs(S uint64, f func(run uint64, n, s int)) {
	var attrs [64]int
	q := 0
	for r := S; r != 0; r &= r - 1 {
		attrs[q] = bits.TrailingZeros64(r)
		q++
	}
	for a := range q {
		run, n := uint64(0), 1
		for b := a; b < q; b++ {
			run |= 1 << attrs[b]
			n *= lp.sizes[attrs[b]]
			if run == S {
				break
			}
			s := 1
			for _, x := range attrs[b+1 : q] {
				s *= lp.sizes[x]
			}
			f(run, n, s)
		}
	}
}

// best returns the least cost of computing, from a table over S, the
// tables of targets T (indices; each a strict subset of S).
func (lp *latticePlanner) best(S, T uint64) float64 {
	if T == 0 {
		return 0
	}
	key := [2]uint64{S, T}
	if c, ok := lp.memo[key]; ok {
		return c.cost
	}
	if len(lp.memo) >= maxStates {
		lp.over = true
		return math.Inf(1)
	}
	lp.memo[key] = lchoice{cost: math.Inf(1)} // guards against cycles (none expected)
	best := lchoice{cost: math.Inf(1)}
	size := lp.size(S)
	lp.runs(S, func(run uint64, n, s int) {
		child := S &^ run
		cov, held := lp.covered(T, child)
		if cov == 0 {
			return
		}
		c := reduceNs(size, n, s) + lp.best(child, cov&^held) + lp.best(S, T&^cov)
		if c < best.cost {
			best = lchoice{cost: c, run: run}
		}
	})
	lp.memo[key] = best
	return best.cost
}

// greedy chooses like the planner of one attribute at a time: the
// attribute that the most targets exclude, then the cheaper kernel.
func (lp *latticePlanner) greedy(S, T uint64) (run uint64, cost float64) {
	bestCov, size := -1, lp.size(S)
	lp.runs(S, func(r uint64, n, s int) {
		if bits.OnesCount64(r) != 1 {
			return
		}
		cov, _ := lp.covered(T, S&^r)
		c := reduceNs(size, n, s)
		if k := bits.OnesCount64(cov); k > 0 && (k > bestCov || k == bestCov && c < cost) {
			run, cost, bestCov = r, c, k
		}
	})
	return run, cost
}

// plan returns the cost of the lattice serving targets T from a table
// over S and, with pl not nil, adds its nodes below node ni of pl (inner
// attribute i is domain position base+i).
func (lp *latticePlanner) plan(pl *plan, ni int, S, T uint64, base int) float64 {
	total := 0.0
	for T != 0 {
		var run uint64
		if !lp.over {
			lp.best(S, T)
		}
		if lp.over {
			run, _ = lp.greedy(S, T)
		} else {
			run = lp.memo[[2]uint64{S, T}].run
		}
		child := S &^ run
		cov, held := lp.covered(T, child)
		h := 63 - bits.LeadingZeros64(run)
		n, s := lp.size(run), lp.size(S&(^uint64(0)<<(h+1)))
		total += reduceNs(lp.size(S), n, s)
		ci := -1
		if pl != nil {
			ci = pl.addNode(ni, child, base, lp.sizes, n, s)
		}
		total += lp.plan(pl, ci, child, cov&^held, base)
		T &^= cov
	}
	return total
}
