package privacy

import (
	"fmt"
	"math"
	"slices"
)

// LazySelection is the reusable state of ExponentialMechanismLazy; its
// zero value is ready to use.
type LazySelection struct {
	g, u, v []float64 // Gumbel draws, upper noisy values, exact noisy values
	pending evalHeap  // not yet evaluated, largest upper noisy value first
	best    evalHeap  // evaluated, not yet rejected, largest exact first
	batch   []int
	scores  []float64
}

// ExponentialMechanismLazy is ExponentialMechanismWhere over scores that
// are costly to compute, computing only the ones that can decide the
// outcome. upper[i] must bound the exact score of index i from above;
// exact(idx, out) writes the exact scores of the indices idx into out (out
// has len(idx) values), -Inf for an index that turns out not to be
// selectable (it then leaves the selection, as if ok rejected it).
//
// It draws one Gumbel variate per index, in index order, as
// ExponentialMechanism does, and walks the indices by their upper noisy
// values c·(upper[i] − shift) + G_i, c = ε0/(2Δ), computing exact noisy
// values in batches (exact is called on every index whose upper noisy
// value is at least the best exact noisy value found so far) until the
// best exact noisy value is at least every upper noisy value not yet
// computed. That index holds the largest exact noisy value of all: ok is
// tested on it, and on rejection the walk goes on to the next. The result
// is the index ExponentialMechanismWhere returns from the same draws on the
// exact scores (up to the rounding of the shift, which only ties within
// 1e-16 of each other can notice): the exponential mechanism over the
// selectable indices that ok accepts, exactly; exact is simply not asked
// about indices that cannot win.
//
// It panics as ExponentialMechanismWhere does on bad upper bounds, ε0 or
// Δ, and when an exact score exceeds its bound (a programming error: the
// result would no longer be exact).
//
// Privacy: as ExponentialMechanismWhere over the selectable indices that ok
// accepts: ε0-DP, ε0²/8-zCDP, for exact scores of sensitivity Δ. Which
// scores were computed depends on the data (through the bounds and the
// exact scores), so it stays inside, as the noisy scores do; the bounds
// and the exact function are the caller's, and only the index may be
// released. Selectability and ok must depend on public quantities only.
func ExponentialMechanismLazy(r *Rand, upper []float64, eps0, sensitivity float64, exact func(idx []int, out []float64), ok func(i int) bool, st *LazySelection) int {
	checkSelection("ExponentialMechanismLazy", upper, eps0, sensitivity)
	shift := scoresMax(upper)
	c := eps0 / (2 * sensitivity)
	if math.IsInf(c, 0) {
		panic(fmt.Sprintf("privacy: ExponentialMechanismLazy scale ε0/(2Δ) = %v/(2·%v) overflows", eps0, sensitivity))
	}
	n := len(upper)
	st.reset(n)
	for i, s := range upper {
		st.g[i] = gumbel(r)
		st.u[i] = c*(s-shift) + st.g[i]
		st.pending.idx = append(st.pending.idx, i)
	}
	st.pending.init()
	for {
		if st.pending.Len() > 0 && (st.best.Len() == 0 || st.u[st.pending.top()] >= st.v[st.best.top()]) {
			st.evaluate(upper, shift, c, exact)
			continue
		}
		if st.best.Len() == 0 {
			return -1
		}
		i := st.best.pop()
		if ok(i) {
			return i
		}
	}
}

// evaluate computes the exact noisy values of the pending indices whose
// upper noisy value is at least the best exact one (the first few when
// there is none yet).
func (st *LazySelection) evaluate(upper []float64, shift, c float64, exact func([]int, []float64)) {
	const first = 16
	st.batch = st.batch[:0]
	for st.pending.Len() > 0 {
		i := st.pending.top()
		if st.best.Len() > 0 && st.u[i] < st.v[st.best.top()] {
			break
		}
		if st.best.Len() == 0 && len(st.batch) == first {
			break
		}
		st.batch = append(st.batch, st.pending.pop())
	}
	st.scores = slices.Grow(st.scores[:0], len(st.batch))[:len(st.batch)]
	exact(st.batch, st.scores)
	for k, i := range st.batch {
		s := st.scores[k]
		if math.IsInf(s, -1) {
			st.v[i] = s
			continue
		}
		if math.IsNaN(s) || math.IsInf(s, 1) {
			panic(fmt.Sprintf("privacy: ExponentialMechanismLazy: score %d is %v", i, s))
		}
		if s > upper[i] {
			panic(fmt.Sprintf("privacy: ExponentialMechanismLazy: score %d is %v, over its bound %v", i, s, upper[i]))
		}
		st.v[i] = c*(s-shift) + st.g[i]
		st.best.push(i)
	}
}

func (st *LazySelection) reset(n int) {
	grow := func(s []float64) []float64 { return slices.Grow(s[:0], n)[:n] }
	st.g, st.u, st.v = grow(st.g), grow(st.u), grow(st.v)
	st.pending = evalHeap{v: st.u, idx: slices.Grow(st.pending.idx[:0], n)}
	st.best = evalHeap{v: st.v, idx: st.best.idx[:0]}
}

// evalHeap is a max-heap of indices by their values v, ties by the smaller
// index (ExponentialMechanismWhere's order). The order is strict, so the
// pops come in one order whatever the heap's layout. It allocates only to
// grow idx.
type evalHeap struct {
	v   []float64
	idx []int
}

func (h *evalHeap) Len() int { return len(h.idx) }

// above reports whether index a comes before index b.
func (h *evalHeap) above(a, b int) bool {
	if va, vb := h.v[a], h.v[b]; va != vb {
		return va > vb
	}
	return a < b
}

func (h *evalHeap) top() int { return h.idx[0] }

func (h *evalHeap) init() {
	for k := len(h.idx)/2 - 1; k >= 0; k-- {
		h.down(k)
	}
}

func (h *evalHeap) push(i int) {
	h.idx = append(h.idx, i)
	for k := len(h.idx) - 1; k > 0; {
		parent := (k - 1) / 2
		if !h.above(h.idx[k], h.idx[parent]) {
			break
		}
		h.idx[k], h.idx[parent] = h.idx[parent], h.idx[k]
		k = parent
	}
}

func (h *evalHeap) pop() int {
	i := h.idx[0]
	last := len(h.idx) - 1
	h.idx[0] = h.idx[last]
	h.idx = h.idx[:last]
	h.down(0)
	return i
}

func (h *evalHeap) down(k int) {
	for {
		c := 2*k + 1
		if c >= len(h.idx) {
			return
		}
		if r := c + 1; r < len(h.idx) && h.above(h.idx[r], h.idx[c]) {
			c = r
		}
		if !h.above(h.idx[c], h.idx[k]) {
			return
		}
		h.idx[k], h.idx[c] = h.idx[c], h.idx[k]
		k = c
	}
}
