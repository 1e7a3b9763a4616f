package release

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/query"
)

// Answerer is the workload as Balance sees it: A (M × K) applied to dense
// vectors over the universe. *query.Operator implements it.
type Answerer interface {
	M() int
	K() int
	Answer(d, out []float64)
	Adjoint(y, out []float64)
}

// BalanceStats reports what Balance did.
type BalanceStats struct {
	Rounds, Moves int
	// Before and After are the workload's root-mean-square sampling error
	// (rows against D, as fractions of the rows) before and after.
	Before, After float64
}

// Toucher lists the queries whose support holds a universe cell, with
// their value there (MarginalTouch builds one for a workload's marginals).
type Toucher interface {
	Touch(z int, dst []Touch) []Touch
}

// Touch is query J's value W on a cell.
type Touch struct {
	J int
	W float64
}

// Balance improves a controlled rounding of N·D (the output of Sample with
// Systematic: every count ⌊N·D(z)⌋ or ⌈N·D(z)⌉) so that the workload's
// answers on the rows follow D's more closely. It moves single rows from a
// cell rounded up to a cell rounded down — so every count stays within one
// of N·D(z) and the total stays N — greedily, each move chosen among the
// cells with the largest gradient of Σ_j (answer_j(rows) − answer_j(D))²
// (one Answer and one Adjoint per round) and taken only if it lowers that
// sum, computed exactly on the queries the toucher lists.
//
// Systematic sampling keeps the marginals of the leading attributes (cells
// contiguous in the mixed-radix order) within one row, but spreads the
// rounding errors of every other marginal like independent coin flips;
// balancing evens them out across the whole workload. It is
// post-processing of D and the public workload: it costs no privacy. The
// rows are no longer an unbiased random rounding of N·D cell by cell; use
// Systematic or IID for that.
func Balance(cells []CellCount, d []float64, n int64, op Answerer, t Toucher, maxRounds int) ([]CellCount, BalanceStats, error) {
	k := op.K()
	if len(d) != k {
		return cells, BalanceStats{}, fmt.Errorf("balance: D has %d cells, the workload %d", len(d), k)
	}
	var st BalanceStats
	if n <= 0 || len(cells) == 0 || t == nil {
		return cells, st, nil
	}
	sum := 0.0
	for _, v := range d {
		sum += v
	}
	scale := float64(n) / sum
	b := newBalancer(op, t, n)
	// diff = rows − N·D over the universe; the moves change it by ±1.
	for z, v := range d {
		b.diff[z] = -v * scale
	}
	for _, c := range cells {
		b.diff[c.Cell] += float64(c.Count)
	}
	m := float64(op.M())
	obj := b.residual()
	st.Before = math.Sqrt(obj / m)
	sel := newCandidates(b.diff, b.s, balanceCand)
	defer sel.close()
	for st.Rounds < maxRounds {
		st.Rounds++
		op.Adjoint(b.r, b.s)
		up, down := sel.pick()
		if len(up) == 0 || len(down) == 0 {
			break
		}
		moves := b.round(up, down)
		st.Moves += moves
		obj = b.residual() // exact again (other families, rounding)
		if moves == 0 {
			break
		}
	}
	st.After = math.Sqrt(obj / m)
	out := cells[:0]
	for z, v := range b.diff {
		c := int64(math.Round(v + d[z]*scale))
		if c > 0 {
			out = append(out, CellCount{Cell: uint64(z), Count: c})
		}
	}
	return out, st, nil
}

// balancer is Balance's state: the rows' differences from N·D, the
// answers' errors and their gradient, and the scratch of the exact move
// test.
type balancer struct {
	op   Answerer
	t    Toucher
	inv  float64   // 1/N
	diff []float64 // rows − N·D over the universe
	r    []float64 // A·diff/N: the answers' errors
	s    []float64 // Aᵀr
	mark []float64 // per query, the move's change, to find overlaps
	tu   []Touch   // the up cell's queries (zuT's)
	td   []Touch   // the down cell's queries
	zuT  int
}

func newBalancer(op Answerer, t Toucher, n int64) *balancer {
	k, m := op.K(), op.M()
	return &balancer{op: op, t: t, inv: 1 / float64(n), diff: make([]float64, k), r: make([]float64, m),
		s: make([]float64, k), mark: make([]float64, m), zuT: -1}
}

// residual recomputes the answers' errors r from diff and returns Σ r².
func (b *balancer) residual() float64 {
	b.op.Answer(b.diff, b.r)
	o := 0.0
	for j := range b.r {
		b.r[j] *= b.inv
		o += b.r[j] * b.r[j]
	}
	return o
}

// round pairs the up cells (rounded up, most negative gradient first) with
// the down cells (most positive first) and moves one row for every pair
// whose move lowers Σ r², returning the number of moves.
func (b *balancer) round(up, down []int) int {
	moves := 0
	for i, j := 0, 0; i < len(up) && j < len(down); {
		zu, zd := up[i], down[j]
		if b.diff[zu] <= 1e-9 {
			i++
			continue
		}
		if b.diff[zd] >= -1e-9 {
			j++
			continue
		}
		if b.gain(zu, zd) >= 0 {
			// Neither cell helps the other: drop the weaker candidate.
			if b.s[zu]+b.s[zd] > 0 {
				j++
			} else {
				i++
			}
			if b.s[zu]-b.s[zd] <= 0 {
				break
			}
			continue
		}
		b.move(zu, zd)
		moves++
		i++
		j++
	}
	return moves
}

// gain is the exact change of Σ r² for moving one row from zu to zd: Σ
// over the touched queries of (r + δ)² − r², δ = ±W/N.
func (b *balancer) gain(zu, zd int) float64 {
	if zu != b.zuT { // the same up cell is often tried against several down cells
		b.tu, b.zuT = b.t.Touch(zu, b.tu[:0]), zu
	}
	b.td = b.t.Touch(zd, b.td[:0])
	for _, q := range b.tu {
		b.mark[q.J] -= q.W * b.inv
	}
	for _, q := range b.td {
		b.mark[q.J] += q.W * b.inv
	}
	g := 0.0
	for _, q := range b.tu {
		if dq := b.mark[q.J]; dq != 0 {
			g += 2*b.r[q.J]*dq + dq*dq
			b.mark[q.J] = 0
		}
	}
	for _, q := range b.td {
		if dq := b.mark[q.J]; dq != 0 {
			g += 2*b.r[q.J]*dq + dq*dq
			b.mark[q.J] = 0
		}
	}
	return g
}

// move moves one row from zu to zd (gain's touches are zu's and zd's).
func (b *balancer) move(zu, zd int) {
	for _, q := range b.tu {
		b.r[q.J] -= q.W * b.inv
	}
	for _, q := range b.td {
		b.r[q.J] += q.W * b.inv
	}
	b.diff[zu]--
	b.diff[zd]++
}

// balanceCand is the number of cells of each side a round of Balance
// pairs: the up cells with the most negative gradient and the down cells
// with the most positive one.
const balanceCand = 4096

// candidates picks each round's cells for Balance: among the up cells
// (diff in (1e-9, 1+1e-9): rounded up) the cand with the smallest key −s,
// and among the down cells (diff in (−1−1e-9, −1e-9)) the cand with the
// smallest key s, each list in increasing key order.
//
// The workers scan their parts of the universe, each keeping a bounded
// buffer of its smallest keys (pruned to cand whenever it fills, keys
// above the buffer's cand-th smallest skipped), and the buffers are merged.
// This is exact when the chosen keys are distinct and all smaller than
// every key left out; otherwise (a tie, or a NaN) pick falls back to the
// full lists, quickselect (topK) and an unstable sort — the method whose
// choice among tied keys the output has always followed — so that the rows
// are the same either way.
type candidates struct {
	team    *par.Team
	diff, s []float64
	cand    int
	parts   []candPart // per worker
	up, dn  candSide   // merged
	all     []int      // the fallback's list
	// fallbacks counts the rounds that fell back to the full lists.
	fallbacks int
	outU      []int
	outD      []int
}

type candPart struct{ up, dn candSide }

// candSide is a bounded buffer of the smallest keys of one side.
type candSide struct {
	c      []candKey
	n      int     // cells of the side seen
	thr    float64 // keys above it are not among the cand smallest
	pruned float64 // smallest key dropped by a pruning
	nan    bool
}

type candKey struct {
	key float64
	z   int
}

func newCandidates(diff, s []float64, cand int) *candidates {
	team := par.NewTeam(0)
	c := &candidates{team: team, diff: diff, s: s, cand: cand, parts: make([]candPart, team.Workers())}
	for w := range c.parts {
		c.parts[w].up.c = make([]candKey, 0, 4*cand)
		c.parts[w].dn.c = make([]candKey, 0, 4*cand)
	}
	c.up.c = make([]candKey, 0, 4*cand*len(c.parts))
	c.dn.c = make([]candKey, 0, 4*cand*len(c.parts))
	return c
}

func (c *candidates) close() { c.team.Close() }

func (cs *candSide) reset() {
	cs.c, cs.n, cs.thr, cs.pruned, cs.nan = cs.c[:0], 0, math.Inf(1), math.Inf(1), false
}

// skip counts a cell whose key is above the threshold (or NaN).
func (cs *candSide) skip(key float64) {
	cs.n++
	cs.nan = cs.nan || key != key
}

// add offers cell z with its key.
func (cs *candSide) add(key float64, z, cand int) {
	if !(key <= cs.thr) {
		cs.skip(key)
		return
	}
	cs.n++
	cs.c = append(cs.c, candKey{key, z})
	if len(cs.c) == cap(cs.c) {
		cs.prune(cand)
	}
}

// prune keeps the k smallest keys (in no particular order).
func (cs *candSide) prune(k int) {
	if len(cs.c) <= k {
		return
	}
	selectKeys(cs.c, k)
	thr := math.Inf(-1)
	for _, e := range cs.c[:k] {
		thr = max(thr, e.key)
	}
	for _, e := range cs.c[k:] {
		cs.pruned = min(cs.pruned, e.key)
	}
	cs.thr = min(cs.thr, thr)
	cs.c = cs.c[:k]
}

// Run implements par.Job: the scan of cells [lo, hi).
func (c *candidates) Run(w, lo, hi int) {
	p := &c.parts[w]
	diff, s := c.diff[lo:hi], c.s[lo:hi]
	for i, v := range diff {
		switch {
		case v < -1e-9 && v > -1-1e-9: // most cells: no row, or a row short
			if key := s[i]; key <= p.dn.thr {
				p.dn.add(key, lo+i, c.cand)
			} else {
				p.dn.skip(key)
			}
		case v > 1e-9 && v < 1+1e-9:
			p.up.add(-s[i], lo+i, c.cand)
		}
	}
}

// pick returns the round's up and down cells (valid until the next pick).
func (c *candidates) pick() (up, down []int) {
	for w := range c.parts {
		c.parts[w].up.reset()
		c.parts[w].dn.reset()
	}
	c.team.For(len(c.diff), 1024, c)
	c.up.reset()
	c.dn.reset()
	for w := range c.parts {
		c.up.merge(&c.parts[w].up)
		c.dn.merge(&c.parts[w].dn)
	}
	var ok1, ok2 bool
	c.outU, ok1 = c.up.sorted(c.cand, c.outU)
	c.outD, ok2 = c.dn.sorted(c.cand, c.outD)
	if !ok1 || !ok2 {
		c.fallbacks++
		return c.exact()
	}
	return c.outU, c.outD
}

func (cs *candSide) merge(p *candSide) {
	cs.c = append(cs.c, p.c...)
	cs.n += p.n
	cs.pruned = min(cs.pruned, p.pruned)
	cs.nan = cs.nan || p.nan
}

// sorted writes the cand smallest keys' cells into out in increasing key
// order and reports whether that choice and order are unique: no NaN, no
// two equal keys among them, none left out as small as the largest.
func (cs *candSide) sorted(cand int, out []int) ([]int, bool) {
	cs.prune(cand)
	slices.SortFunc(cs.c, func(a, b candKey) int { return cmpf(a.key, b.key) })
	out = out[:0]
	ok := !cs.nan && len(cs.c) == min(cand, cs.n)
	for i, e := range cs.c {
		if i > 0 && e.key == cs.c[i-1].key {
			ok = false
		}
		out = append(out, e.z)
	}
	if n := len(cs.c); n > 0 && !(cs.c[n-1].key < cs.pruned) {
		ok = false
	}
	return out, ok
}

// exact is pick by the full lists: quickselect and sort, as Balance has
// always chosen (the order among tied keys depends on the method).
func (c *candidates) exact() (up, down []int) {
	diff, s := c.diff, c.s
	all := c.all[:0]
	for z, v := range diff {
		if v > 1e-9 && v < 1+1e-9 {
			all = append(all, z)
		}
	}
	bu := min(c.cand, len(all))
	topK(all, bu, func(z int) float64 { return -s[z] })
	slices.SortFunc(all[:bu], func(a, b int) int { return cmpf(s[b], s[a]) })
	up = append(c.outU[:0], all[:bu]...)
	all = all[:0]
	for z, v := range diff {
		if v < -1e-9 && v > -1-1e-9 {
			all = append(all, z)
		}
	}
	bd := min(c.cand, len(all))
	topK(all, bd, func(z int) float64 { return s[z] })
	slices.SortFunc(all[:bd], func(a, b int) int { return cmpf(s[a], s[b]) })
	down = append(c.outD[:0], all[:bd]...)
	c.all, c.outU, c.outD = all, up, down
	return up, down
}

// selectKeys reorders c so that its first k elements have the k smallest
// keys (in no particular order). The keys hold no NaN.
func selectKeys(c []candKey, k int) {
	quickselect(c, k, func(c candKey) float64 { return c.key })
}

func cmpf(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// topK reorders idx so that its first k elements have the k smallest keys
// (in no particular order).
func topK(idx []int, k int, key func(int) float64) { quickselect(idx, k, key) }

// quickselect reorders s so that its first k elements have the k smallest
// keys (in no particular order): Hoare's partition around the middle
// element, O(len(s)) on average.
func quickselect[E any](s []E, k int, key func(E) float64) {
	lo, hi := 0, len(s)-1
	for lo < hi {
		p := key(s[(lo+hi)/2])
		i, j := lo, hi
		for i <= j {
			for key(s[i]) < p {
				i++
			}
			for key(s[j]) > p {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// MarginalTouch returns a Toucher for the marginal sets of a workload over
// an indexable universe: for each set, the query of the set's cell that
// holds universe cell z, with the set's weight. Other families are not
// listed (Balance's exact objective still counts them).
func MarginalTouch(w *query.Workload) Toucher {
	dom := w.Domain()
	sizes := dom.Sizes()
	mt := &marginalTouch{sizes: sizes, sets: w.Marginals(), codes: make([]int, dom.Len())}
	for _, s := range mt.sets {
		// The set's mixed radix: the stride of each of its attributes.
		st := make([]int, len(s.Attrs))
		p := 1
		for i := len(s.Attrs) - 1; i >= 0; i-- {
			st[i] = p
			p *= sizes[s.Attrs[i]]
		}
		mt.strides = append(mt.strides, st)
	}
	return mt
}

type marginalTouch struct {
	sizes   []int
	sets    []query.Marginal
	strides [][]int // per set, per attribute of the set
	codes   []int
}

func (mt *marginalTouch) Touch(z int, dst []Touch) []Touch {
	r := z
	for i := len(mt.sizes) - 1; i >= 0; i-- {
		mt.codes[i] = r % mt.sizes[i]
		r /= mt.sizes[i]
	}
	for si, s := range mt.sets {
		c := s.Offset
		st := mt.strides[si][:len(s.Attrs)]
		for i, a := range s.Attrs {
			c += mt.codes[a] * st[i]
		}
		dst = append(dst, Touch{J: c, W: s.Weight})
	}
	return dst
}
