package model

import (
	"math"
	"slices"
)

// maxStratCells caps the codes of one Stratified chunk (2^24 int32s, 64 MiB);
// a variable for tests.
var maxStratCells = 1 << 24

// minStratRows and maxStratRows bound the rows of a Stratified chunk.
const (
	minStratRows = 1 << 16
	maxStratRows = 1 << 20
)

// stratRows is the number of rows of a Stratified chunk of n rows of na
// attributes.
func stratRows(n int64, na int) int {
	return int(min(n, int64(max(minStratRows, min(maxStratRows, maxStratCells/na)))))
}

// StratifiedBytes is the most memory Stratified sampling of n rows of na
// attributes holds beside the model's tables: one chunk of rows (4 bytes
// per code), 40 bytes of order, keys and scratch per row, and the greedy
// balancing's deficit tables (at most 32 MiB); at most about 140 MiB.
func StratifiedBytes(na int, n int64) uint64 {
	return uint64(stratRows(n, na))*uint64(4*na+40) + 8*maxDeficits
}

// stratState is the scratch of Stratified sampling: one chunk of rows
// drawn level by level.
type stratState struct {
	buf   []int32 // chunk rows, row-major
	rows  int     // rows in buf
	order []int32 // the chunk's order
	tmp   []int32
	key   []int32
	count []int32 // counting-sort buckets
	outs  []outcome
	pos   []spread
	off   []int
	grp   []int32

	// greedy balancing (assignGreedy)
	earlier [][]int   // per level: attributes drawn before it, outside its separator
	defOff  []int     // per earlier attribute: its offset in def
	def     []float64 // deficits: target − assigned per (attribute value, outcome)
	quota   []int64
	perm    []int32
	pairs   [][2]int
	pairOff []int
	bases   []int // one row's offsets in the deficit tables
	maxWork int   // score terms per row
}

// greedyPairCells: pairs of earlier attributes with at most this many value
// pairs (and no more than the run's rows) are balanced too.
const greedyPairCells = 2000

// greedyWork is the total number of score terms Stratified spends on greedy
// balancing per call: a run whose rows × outcomes × (attributes + pairs)
// would exceed its share (greedyWork / (n · cliques) per row) is spread
// instead, so that sampling stays fast for any n.
const greedyWork = 5e8

// maxDeficits caps the deficit tables of one run (2^22 float64s, 32 MiB);
// a run that would need more is spread instead.
const maxDeficits = 1 << 22

type spread struct {
	p float64
	j int32
}

// strat samples n rows: the root clique's counts by systematic rounding
// over all n rows, then, chunk by chunk, every later clique's new
// attributes over all rows of the chunk that share a separator value
// together (see Stratified).
func (s *sampler) strat(n int64) error {
	na := s.na
	chunk := stratRows(n, na)
	st := &stratState{buf: make([]int32, chunk*na), order: make([]int32, chunk), tmp: make([]int32, chunk), key: make([]int32, chunk),
		pos: make([]spread, 0, chunk), grp: make([]int32, 0, chunk), perm: make([]int32, 0, chunk)}
	s.st = st
	st.maxWork = int(min(greedyWork/(float64(n)*float64(len(s.levels))), 1<<20))
	drawn := make([]bool, na)
	st.earlier = make([][]int, len(s.levels))
	for k := range s.levels {
		l := &s.levels[k]
		for a := range na {
			if drawn[a] && !slices.Contains(l.sepAttrs, a) {
				st.earlier[k] = append(st.earlier[k], a)
			}
		}
		for _, a := range l.newAttrs {
			drawn[a] = true
		}
	}
	root := &s.levels[0]
	for _, o := range s.split(root, 0, n, nil) {
		s.setNew(root, o.j)
		for c := o.c; c > 0; {
			k := min(c, int64(chunk-st.rows))
			for range k {
				copy(st.buf[st.rows*na:], s.cur)
				st.rows++
			}
			c -= k
			if st.rows == chunk {
				if err := s.stratChunk(); err != nil {
					return err
				}
			}
		}
	}
	if st.rows > 0 {
		return s.stratChunk()
	}
	return nil
}

// stratChunk draws the later cliques' attributes of the chunk's rows, then
// shuffles and emits them.
func (s *sampler) stratChunk() error {
	st := s.st
	na, R := s.na, st.rows
	for i := range R {
		st.order[i] = int32(i)
	}
	for k := 1; k < len(s.levels); k++ {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		l := &s.levels[k]
		// The separator value of every row, and the rows sorted by it,
		// stably: within a value they keep the previous level's order.
		sepCells := 1
		if len(l.sepAttrs) > 0 {
			sepCells = len(l.cum) / l.nNew
		}
		for _, i := range st.order[:R] {
			row := st.buf[int(i)*na : int(i+1)*na]
			v := 0
			for q, a := range l.sepAttrs {
				v += int(row[a]) * l.sepStrides[q]
			}
			st.key[i] = int32(v)
		}
		if sepCells <= max(4*R, 1<<16) {
			if cap(st.count) < sepCells+1 {
				st.count = make([]int32, sepCells+1)
			}
			cnt := st.count[:sepCells+1]
			clear(cnt)
			for _, i := range st.order[:R] {
				cnt[st.key[i]+1]++
			}
			for v := 1; v <= sepCells; v++ {
				cnt[v] += cnt[v-1]
			}
			for _, i := range st.order[:R] {
				v := st.key[i]
				st.tmp[cnt[v]] = i
				cnt[v]++
			}
			st.order, st.tmp = st.tmp, st.order
		} else {
			key := st.key
			slices.SortStableFunc(st.order[:R], func(a, b int32) int { return int(key[a]) - int(key[b]) })
		}
		// Each run of one separator value: systematic counts, spread
		// evenly over the run's order.
		for lo := 0; lo < R; {
			v := st.key[st.order[lo]]
			hi := lo + 1
			for hi < R && st.key[st.order[hi]] == v {
				hi++
			}
			s.assignGreedy(k, l, int(v), st.order[lo:hi])
			lo = hi
		}
	}
	// Shuffle the chunk (its rows are grouped by the root clique's cells)
	// and emit it.
	w := st.buf
	for i := R - 1; i > 0; i-- {
		j := int(boundedUint(s.r, uint64(i+1)))
		if i != j {
			a, b := w[i*na:(i+1)*na], w[j*na:(j+1)*na]
			for q := range a {
				a[q], b[q] = b[q], a[q]
			}
		}
	}
	for off := 0; off < R; off += s.batch {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		end := min(off+s.batch, R)
		if err := s.emit(w[off*na : end*na]); err != nil {
			return err
		}
	}
	st.rows = 0
	return nil
}

// assign gives the rows of run (in order) level l's new attributes for
// separator value si: the counts by systematic rounding over the whole run,
// and each outcome's rows spread evenly along the run (outcome j with a_j
// rows takes the positions (t + v_j)/a_j, t < a_j, v_j uniform, merged in
// order), so that every stretch of the run — rows alike in the attributes
// the order follows — gets the outcomes in proportion.
func (s *sampler) assign(l *level, si int, run []int32) {
	st := s.st
	na := s.na
	st.outs = s.split(l, si, int64(len(run)), st.outs[:0])
	if len(st.outs) == 1 {
		j := st.outs[0].j
		for _, i := range run {
			s.setRow(l, st.buf[int(i)*na:int(i+1)*na], j)
		}
		return
	}
	st.pos = st.pos[:0]
	for _, o := range st.outs {
		v := s.r.Float64()
		inv := 1 / float64(o.c)
		for t := range o.c {
			st.pos = append(st.pos, spread{(float64(t) + v) * inv, int32(o.j)})
		}
	}
	slices.SortFunc(st.pos, func(a, b spread) int {
		switch {
		case a.p < b.p:
			return -1
		case a.p > b.p:
			return 1
		}
		return int(a.j - b.j)
	})
	for x, i := range run {
		s.setRow(l, st.buf[int(i)*na:int(i+1)*na], int(st.pos[x].j))
	}
	// Regroup the run by outcome, stably, so that the next cliques see
	// rows alike in this clique's outcome next to each other (an order
	// that interleaves them could alias with the next spread).
	if cap(st.off) < len(st.outs)+1 {
		st.off = make([]int, len(st.outs)+1)
	}
	off := st.off[:len(st.outs)+1]
	off[0] = 0
	for x, o := range st.outs {
		off[x+1] = off[x] + int(o.c)
	}
	grp := st.grp[:0]
	grp = append(grp, run...)
	for x, i := range grp {
		k, _ := slices.BinarySearchFunc(st.outs, int(st.pos[x].j), func(o outcome, j int) int { return o.j - j })
		run[off[k]] = i
		off[k]++
	}
	st.grp = grp
}

// setRow writes new-attribute cell j of level l into row.
func (s *sampler) setRow(l *level, row []int32, j int) {
	for q := len(l.newAttrs) - 1; q >= 0; q-- {
		sz := l.newSizes[q]
		row[l.newAttrs[q]] = int32(j % sz)
		j /= sz
	}
}

// assignGreedy gives the rows of run level l's new attributes for separator
// value si: the counts by systematic rounding over the whole run, and each
// row, in a random order, the outcome with quota left whose deficit against
// the model's joint with the row's earlier attributes is largest. Given the
// separator, the new attributes are independent of every earlier attribute
// (the junction tree's running intersection), so the target of (earlier
// attribute e = v, outcome x) in the run is N(e = v)·quota_x/N.
func (s *sampler) assignGreedy(k int, l *level, si int, run []int32) {
	st := s.st
	na := s.na
	st.outs = s.split(l, si, int64(len(run)), st.outs[:0])
	K := len(st.outs)
	if K == 1 || len(st.earlier[k]) == 0 || K*len(st.earlier[k]) > st.maxWork {
		s.assign(l, si, run)
		return
	}
	ear := st.earlier[k]
	st.defOff = st.defOff[:0]
	n := 0
	for _, a := range ear {
		st.defOff = append(st.defOff, n)
		n += s.sizes[a] * K
	}
	if n > maxDeficits {
		s.assign(l, si, run)
		return
	}
	st.pairs, st.pairOff = st.pairs[:0], st.pairOff[:0]
	{
		for x, a := range ear {
			for _, b := range ear[x+1:] {
				if c := s.sizes[a] * s.sizes[b]; c <= greedyPairCells && c <= len(run) && K*(len(ear)+len(st.pairs)+1) <= st.maxWork && n+c*K <= maxDeficits {
					st.pairs = append(st.pairs, [2]int{a, b})
					st.pairOff = append(st.pairOff, n)
					n += s.sizes[a] * s.sizes[b] * K
				}
			}
		}
	}
	if cap(st.def) < n {
		st.def = make([]float64, n)
	}
	def := st.def[:n]
	clear(def)
	st.quota = st.quota[:0]
	c := float64(len(run))
	for _, o := range st.outs {
		st.quota = append(st.quota, o.c)
	}
	// rowBases writes row's offset in each deficit table (the attributes',
	// then the pairs') into st.bases.
	rowBases := func(row []int32) []int {
		bs := st.bases[:0]
		for q, a := range ear {
			bs = append(bs, st.defOff[q]+int(row[a])*K)
		}
		for q, pr := range st.pairs {
			bs = append(bs, st.pairOff[q]+(int(row[pr[0]])*s.sizes[pr[1]]+int(row[pr[1]]))*K)
		}
		st.bases = bs
		return bs
	}
	// targets: N(e = v)·q_x/N
	for _, i := range run {
		for _, base := range rowBases(st.buf[int(i)*na : int(i+1)*na]) {
			for x, o := range st.outs {
				def[base+x] += float64(o.c) / c
			}
		}
	}
	st.perm = append(st.perm[:0], run...)
	for x := len(st.perm) - 1; x > 0; x-- {
		y := int(boundedUint(s.r, uint64(x+1)))
		st.perm[x], st.perm[y] = st.perm[y], st.perm[x]
	}
	for _, i := range st.perm {
		row := st.buf[int(i)*na : int(i+1)*na]
		bs := rowBases(row)
		best, bestScore := -1, math.Inf(-1)
		for x := range K {
			if st.quota[x] == 0 {
				continue
			}
			sc := 0.0
			for _, base := range bs {
				sc += def[base+x]
			}
			if sc > bestScore {
				best, bestScore = x, sc
			}
		}
		st.quota[best]--
		for _, base := range bs {
			def[base+best]--
		}
		s.setRow(l, row, st.outs[best].j)
	}
}
