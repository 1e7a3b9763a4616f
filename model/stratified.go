package model

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"

	"github.com/dpsynth/synth/internal/par"
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

// maxStratWorkers caps the workers of Stratified sampling: each may hold
// deficit tables of up to 32 MiB.
const maxStratWorkers = 8

// stratWorkersOverride, when positive, is the number of workers of
// Stratified sampling instead of stratWorkers' default (for tests).
var stratWorkersOverride = 0

// stratWorkers is the number of workers of Stratified sampling:
// GOMAXPROCS, at most maxStratWorkers. The rows do not depend on it.
func stratWorkers() int {
	if stratWorkersOverride > 0 {
		return stratWorkersOverride
	}
	return min(runtime.GOMAXPROCS(0), maxStratWorkers)
}

// minStratParallel is the least rows of a chunk whose runs the workers
// share; smaller chunks are drawn on the calling goroutine (a variable for
// tests).
var minStratParallel = 4096

// stratLevelHook, when set, sees each level's parts before they are drawn
// (for tests).
var stratLevelHook func(parts []stratPart)

// StratifiedBytes is the most memory Stratified sampling of n rows of na
// attributes holds beside the model's tables: one chunk of rows (4 bytes
// per code) with 44 bytes per row of order, keys and the runs' scratch
// (spread positions and outcomes), the counting sort's buckets (at most 4
// per row, 16 bytes), the attributes drawn before each clique (8·na²
// bytes), and, for each of its workers (GOMAXPROCS, at most 8), the greedy
// balancing's deficit tables (at most 32 MiB) and its tables of attributes
// and pairs of attributes (32·na² bytes). For 14 attributes: about 116 MiB
// and 32 MiB per worker.
func StratifiedBytes(na int, n int64) uint64 {
	rows := uint64(stratRows(n, na))
	a := uint64(na)
	shared := rows*(4*a+44) + 4*(max(4*rows, 1<<16)+1) + 8*a*a + 24*a
	worker := uint64(8*maxDeficits) + 32*a*a
	return shared + uint64(stratWorkers())*worker
}

// stratState is the scratch of Stratified sampling: one chunk of rows
// drawn level by level. During a level's runs, the rows of a run (the
// positions lo to hi of order that share a separator value) are drawn
// into buf by one worker, which writes only those rows, order[lo:hi] and
// the per-row scratch at lo:hi (pos, outs, tmp); the rest is read-only.
type stratState struct {
	buf   []int32 // chunk rows, row-major
	rows  int     // rows in buf
	order []int32 // the chunk's order
	tmp   []int32 // the counting sort's other buffer; during the runs, their regrouping and permutation scratch
	key   []int32
	count []int32   // counting-sort buckets
	pos   []spread  // per position of order: its run's spread positions
	outs  []outcome // per position of order: its run's outcomes (at most one per row)

	earlier [][]int // per level: attributes drawn before it, outside its separator
	maxWork int     // score terms per row

	// The level being drawn, the key of its runs' streams, and each
	// worker's part of its runs.
	k       int
	runKey  [4]uint64
	parts   []stratPart
	workers []stratWorker
	team    *par.Team // nil: one worker
	job     stratJob
}

// stratPart is one worker's part of a level: the runs at positions lo to
// hi of the order, the first of them the level's run number run.
type stratPart struct {
	lo, hi, run int
}

// stratWorker is one worker's scratch: the stream of the run it draws and
// the greedy balancing's tables.
type stratWorker struct {
	rng     runRand
	defOff  []int     // per earlier attribute: its offset in def
	def     []float64 // deficits: target − assigned per (attribute value, outcome)
	pairs   [][2]int
	pairOff []int
	bases   []int     // one row's offsets in the deficit tables
	share   []float64 // each outcome's share of the run (greedy balancing)
	_       [64]byte  // keeps the workers' streams on separate cache lines
}

// runRand is the random stream of one run: ChaCha8 keyed by the level's
// key with the run's number xored into its first word.
type runRand struct {
	c rand.ChaCha8
}

func (r *runRand) seed(key *[4]uint64, run int) {
	var b [32]byte
	binary.LittleEndian.PutUint64(b[0:], key[0]^uint64(run))
	binary.LittleEndian.PutUint64(b[8:], key[1])
	binary.LittleEndian.PutUint64(b[16:], key[2])
	binary.LittleEndian.PutUint64(b[24:], key[3])
	r.c.Seed(b)
}

// Uint64 returns 64 uniform bits.
func (r *runRand) Uint64() uint64 { return r.c.Uint64() }

// Float64 returns a uniform float64 in [0, 1) with 53 random bits (as
// privacy.Rand's).
func (r *runRand) Float64() float64 { return float64(r.c.Uint64()>>11) * 0x1p-53 }

// stratJob draws worker w's part of a level (the team splits
// [0, workers·par.MinParallel) into one block of par.MinParallel each).
type stratJob struct {
	s *sampler
}

func (j *stratJob) Run(w, lo, hi int) {
	st := j.s.st
	j.s.runPart(&st.workers[w], st.parts[lo/par.MinParallel])
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
		pos: make([]spread, chunk), outs: make([]outcome, chunk)}
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
	workers := 1
	if chunk >= minStratParallel && len(s.levels) > 1 {
		workers = stratWorkers()
	}
	st.workers = make([]stratWorker, workers)
	st.parts = make([]stratPart, workers)
	st.job.s = s
	if workers > 1 {
		st.team = par.NewTeam(workers)
		defer st.team.Close()
	}
	root := &s.levels[0]
	for _, o := range s.split(root, 0, n, nil, s.r) {
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
		// evenly over the run's order or balanced greedily. Run number i
		// (in the sorted order) draws from its own stream, keyed by the
		// level's key and i, so that the rows do not depend on how the
		// runs are shared among the workers.
		for q := range st.runKey {
			st.runKey[q] = s.r.Uint64()
		}
		st.k = k
		s.splitRuns(k, l, R)
		if stratLevelHook != nil {
			stratLevelHook(st.parts)
		}
		if len(st.parts) == 1 || st.parts[0].hi == R {
			s.runPart(&st.workers[0], st.parts[0])
		} else {
			st.team.For(len(st.parts)*par.MinParallel, par.MinParallel, &st.job)
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

// runEnd returns the end of the run of the sorted order that starts at
// position lo (before hi).
func (st *stratState) runEnd(lo, hi int) int {
	v := st.key[st.order[lo]]
	e := lo + 1
	for e < hi && st.key[st.order[e]] == v {
		e++
	}
	return e
}

// runWork estimates the cost of drawing a run of c rows at level k: c ×
// outcomes × earlier attributes for greedy balancing, c·log c for the
// spread.
func (s *sampler) runWork(k int, l *level, c int) int64 {
	r := int64(c)
	ear := int64(len(s.st.earlier[k]))
	if K := min(r, int64(l.nNew)); K > 1 && ear > 0 && K*ear <= int64(s.st.maxWork) {
		return r * (2 + 2*K*ear)
	}
	return r * int64(2+bits.Len64(uint64(r)))
}

// splitRuns shares the runs of level k among the workers in contiguous
// parts of about equal work (st.parts); a level of few rows or a single
// run is one part.
func (s *sampler) splitRuns(k int, l *level, R int) {
	st := s.st
	W := len(st.parts)
	st.parts[0] = stratPart{lo: 0, hi: R, run: 0}
	for p := 1; p < W; p++ {
		st.parts[p] = stratPart{lo: R, hi: R}
	}
	if W == 1 || R < minStratParallel {
		return
	}
	var total int64
	runs := 0
	for lo := 0; lo < R; runs++ {
		hi := st.runEnd(lo, R)
		total += s.runWork(k, l, hi-lo)
		lo = hi
	}
	if runs == 1 {
		return
	}
	// Part p takes the runs whose work starts in [total·p/W, total·(p+1)/W).
	p := 0
	var acc int64
	for lo, i := 0, 0; lo < R; i++ {
		for p+1 < W && acc*int64(W) >= total*int64(p+1) {
			st.parts[p].hi = lo
			p++
			st.parts[p] = stratPart{lo: lo, hi: R, run: i}
		}
		hi := st.runEnd(lo, R)
		acc += s.runWork(k, l, hi-lo)
		lo = hi
	}
}

// runPart draws the runs of part p of the current level on worker w.
func (s *sampler) runPart(w *stratWorker, p stratPart) {
	st := s.st
	k := st.k
	l := &s.levels[k]
	i := p.run
	for lo := p.lo; lo < p.hi; i++ {
		hi := st.runEnd(lo, p.hi)
		w.rng.seed(&st.runKey, i)
		s.assignGreedy(w, k, l, int(st.key[st.order[lo]]), lo, hi)
		lo = hi
	}
}

// spread gives the rows of the run at positions lo to hi of the order
// (in order) level l's new attributes: outs, the counts by systematic
// rounding over the whole run, with each outcome's rows spread evenly
// along the run (outcome j with a_j rows takes the positions
// (t + v_j)/a_j, t < a_j, v_j uniform, merged in order), so that every
// stretch of the run — rows alike in the attributes the order follows —
// gets the outcomes in proportion. It overwrites the counts of outs.
func (s *sampler) spread(l *level, lo, hi int, outs []outcome, r Rand) {
	st := s.st
	na := s.na
	run := st.order[lo:hi]
	if len(outs) == 1 {
		j := outs[0].j
		for _, i := range run {
			s.setRow(l, st.buf[int(i)*na:int(i+1)*na], j)
		}
		return
	}
	pos := st.pos[lo:lo:hi]
	for _, o := range outs {
		v := r.Float64()
		inv := 1 / float64(o.c)
		for t := range o.c {
			pos = append(pos, spread{(float64(t) + v) * inv, int32(o.j)})
		}
	}
	slices.SortFunc(pos, func(a, b spread) int {
		switch {
		case a.p < b.p:
			return -1
		case a.p > b.p:
			return 1
		}
		return int(a.j - b.j)
	})
	for x, i := range run {
		s.setRow(l, st.buf[int(i)*na:int(i+1)*na], int(pos[x].j))
	}
	// Regroup the run by outcome, stably, so that the next cliques see
	// rows alike in this clique's outcome next to each other (an order
	// that interleaves them could alias with the next spread). Each
	// outcome's count becomes the position its next row goes to, within
	// the run.
	off := int64(0)
	for x := range outs {
		c := outs[x].c
		outs[x].c = off
		off += c
	}
	grp := st.tmp[lo:hi]
	copy(grp, run)
	for x, i := range grp {
		k, _ := slices.BinarySearchFunc(outs, int(pos[x].j), func(o outcome, j int) int { return o.j - j })
		run[outs[k].c] = i
		outs[k].c++
	}
}

// setRow writes new-attribute cell j of level l into row.
func (s *sampler) setRow(l *level, row []int32, j int) {
	for q := len(l.newAttrs) - 1; q >= 0; q-- {
		sz := l.newSizes[q]
		row[l.newAttrs[q]] = int32(j % sz)
		j /= sz
	}
}

// assignGreedy gives the rows of the run at positions lo to hi of the
// order level l's new attributes for separator value si, drawing from
// worker w's stream: the counts by systematic rounding over the whole run,
// and each row, in a random order, the outcome with quota left whose
// deficit against the model's joint with the row's earlier attributes is
// largest. Given the separator, the new attributes are independent of
// every earlier attribute (the junction tree's running intersection), so
// the target of (earlier attribute e = v, outcome x) in the run is
// N(e = v)·quota_x/N. Where that would cost too much it spreads the
// outcomes instead.
func (s *sampler) assignGreedy(w *stratWorker, k int, l *level, si, lo, hi int) {
	st := s.st
	na := s.na
	run := st.order[lo:hi]
	outs := s.split(l, si, int64(len(run)), st.outs[lo:lo:hi], &w.rng)
	K := len(outs)
	ear := st.earlier[k]
	if K == 1 || len(ear) == 0 || K*len(ear) > st.maxWork {
		s.spread(l, lo, hi, outs, &w.rng)
		return
	}
	w.defOff = w.defOff[:0]
	n := 0
	for _, a := range ear {
		w.defOff = append(w.defOff, n)
		n += s.sizes[a] * K
	}
	if n > maxDeficits {
		s.spread(l, lo, hi, outs, &w.rng)
		return
	}
	w.pairs, w.pairOff = w.pairs[:0], w.pairOff[:0]
	for x, a := range ear {
		for _, b := range ear[x+1:] {
			if c := s.sizes[a] * s.sizes[b]; c <= greedyPairCells && c <= len(run) && K*(len(ear)+len(w.pairs)+1) <= st.maxWork && n+c*K <= maxDeficits {
				w.pairs = append(w.pairs, [2]int{a, b})
				w.pairOff = append(w.pairOff, n)
				n += s.sizes[a] * s.sizes[b] * K
			}
		}
	}
	if cap(w.def) < n {
		w.def = make([]float64, n)
	}
	def := w.def[:n]
	clear(def)
	c := float64(len(run))
	// rowBases writes row's offset in each deficit table (the attributes',
	// then the pairs') into w.bases.
	rowBases := func(row []int32) []int {
		bs := w.bases[:0]
		for q, a := range ear {
			bs = append(bs, w.defOff[q]+int(row[a])*K)
		}
		for q, pr := range w.pairs {
			bs = append(bs, w.pairOff[q]+(int(row[pr[0]])*s.sizes[pr[1]]+int(row[pr[1]]))*K)
		}
		w.bases = bs
		return bs
	}
	// targets: N(e = v)·q_x/N, each row adding the outcomes' shares
	// q_x/N (w.share) to its cells
	w.share = resize(w.share, K)
	for x, o := range outs {
		w.share[x] = float64(o.c) / c
	}
	for _, i := range run {
		for _, base := range rowBases(st.buf[int(i)*na : int(i+1)*na]) {
			addShares(def[base:base+K], w.share)
		}
	}
	perm := st.tmp[lo:hi]
	copy(perm, run)
	for x := len(perm) - 1; x > 0; x-- {
		y := int(boundedUint(&w.rng, uint64(x+1)))
		perm[x], perm[y] = perm[y], perm[x]
	}
	// The outcomes' counts are their quotas from here on.
	for _, i := range perm {
		row := st.buf[int(i)*na : int(i+1)*na]
		bs := rowBases(row)
		best := bestOutcome(def, bs, outs)
		outs[best].c--
		for _, base := range bs {
			def[base+best]--
		}
		s.setRow(l, row, outs[best].j)
	}
}

// addShares adds share[x] to d[x] for every outcome x. It and
// bestOutcome are not inlined: in assignGreedy their loops would spill
// registers (the greedy balancing ran 10% slower).
//
//go:noinline
func addShares(d []float64, share []float64) {
	share = share[:len(d)]
	for x := range d {
		d[x] += share[x]
	}
}

// bestOutcome returns the first of the outcomes with quota (count) left
// whose deficits at the offsets bs sum highest.
//
//go:noinline
func bestOutcome(def []float64, bs []int, outs []outcome) int {
	best, bestScore := -1, math.Inf(-1)
	for x := range outs {
		if outs[x].c == 0 {
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
	return best
}
