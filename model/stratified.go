package model

import (
	"cmp"
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

// stratLevelHook, when set, is told before each level is drawn whether its
// segments are drawn in parallel (for tests).
var stratLevelHook func(parallel bool)

// StratifiedBytes is the most memory Stratified sampling of n rows of na
// attributes holds beside the model's tables: one chunk of rows (4 bytes
// per code) with 44 bytes per row of order, keys and the runs' scratch
// (spread positions and outcomes), the counting sort's buckets (at most 4
// per row, 16 bytes), the attributes drawn before each clique (8·na²
// bytes), and, for each of its workers (GOMAXPROCS, at most 8), the greedy
// balancing's deficit tables, a run's and a segment's carried ones (at
// most 32 MiB each), the rows counted per slot of them and the slots
// counted (at most 8 MiB each), and its tables of attributes and pairs of
// attributes (32·na² bytes). For 14 attributes: about 116 MiB and 80 MiB
// per worker.
func StratifiedBytes(na int, n int64) uint64 {
	rows := uint64(stratRows(n, na))
	a := uint64(na)
	shared := rows*(4*a+44) + 4*(max(4*rows, 1<<16)+1) + 8*a*a + 24*a
	worker := uint64(2*8*maxDeficits+2*4*maxDeficits/2) + 32*a*a
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
	k        int
	persist  bool     // the level's runs carry their deficits
	sepTabs  []sepTab // the tables they carry against the separator's attributes and pairs of them
	carAttrs []int    // and the earlier attributes they carry deficits against
	carOff   []int    // each one's offset in the deficit tables
	carCells int      // the carried tables' cells
	carWork  int      // and their score terms per row
	runKey   [4]uint64
	parts    []stratPart
	workers  []stratWorker
	team     *par.Team // nil: one worker
	job      stratJob
}

// stratPart is a segment of a level: the runs at positions lo to hi of the
// order, the first of them the level's run number run.
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
	cbases  []int     // and in the carried ones
	share   []float64 // each outcome's share of the run (greedy balancing)
	hits    []int32   // rows of the run per deficit-table slot (targets)
	touched []int32   // the slots with hits

	// The segment's carried deficits (target minus rows over its runs so
	// far) per (value of an attribute of carAttrs, outcome), at the
	// offsets carOff.
	carried []float64
	adj     []float64 // the run's quota adjustments, per possible outcome
	key     []float64 // and their keys for the rows left over
	cnt     []int64   // and their quotas
	order   []int32   // the outcomes in order of their keys
	supp    []int32   // the run's possible outcomes
	prob    []float64 // and their probabilities
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

// stratJob draws worker w's segments of a level (the team splits
// [0, stratSegments·par.MinParallel) into contiguous blocks of
// par.MinParallel, one per segment).
type stratJob struct {
	s *sampler
}

func (j *stratJob) Run(w, lo, hi int) {
	st := j.s.st
	for p := lo / par.MinParallel; p < hi/par.MinParallel; p++ {
		j.s.runPart(&st.workers[w], st.parts[p])
	}
}

// greedyPairCells: pairs of earlier attributes with at most this many value
// pairs (and no more than the run's rows) are balanced too.
const greedyPairCells = 2000

// greedyWork is the total number of score terms Stratified spends on greedy
// balancing per call (about a second on one core): a level whose carried
// deficits would cost more than its share per row (greedyWork / (n ·
// levels): outcomes × attributes drawn before) balances each run on its own,
// and a run whose rows × outcomes × (attributes + pairs) would exceed it is
// spread instead, so that sampling stays fast for any n.
const greedyWork = 2e9

// maxDeficits caps the deficit tables of one run, and a segment's carried
// ones (2^22 float64s, 32 MiB each); a run that would need more is spread
// instead, a level that would carry more balances its runs on their own.
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
	var chained []level
	for k := range s.levels {
		chained = append(chained, levelChain(&s.levels[k])...)
	}
	s.levels = chained
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
	st.parts = make([]stratPart, stratSegments)
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
		runs := s.splitRuns(k, l, R)
		s.levelMode(k, l, R, runs)
		parallel := len(st.workers) > 1 && R >= minStratParallel && runs > 1
		if stratLevelHook != nil {
			stratLevelHook(parallel)
		}
		if parallel {
			st.team.For(len(st.parts)*par.MinParallel, par.MinParallel, &st.job)
		} else {
			for _, p := range st.parts {
				s.runPart(&st.workers[0], p)
			}
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

// stratSegments is the number of segments of a level: contiguous parts of
// its runs of about equal work, each drawn in order with its own carried
// state, so that the rows depend on neither the number of workers nor the
// order in which the workers take the segments. One per possible worker.
const stratSegments = maxStratWorkers

// splitRuns cuts the runs of level k into stratSegments contiguous parts
// of about equal work (st.parts; some may be empty) and returns the number
// of runs.
func (s *sampler) splitRuns(k int, l *level, R int) int {
	st := s.st
	S := len(st.parts)
	var total int64
	runs := 0
	for lo := 0; lo < R; runs++ {
		hi := st.runEnd(lo, R)
		total += s.runWork(k, l, hi-lo)
		lo = hi
	}
	st.parts[0] = stratPart{lo: 0, hi: R, run: 0}
	for p := 1; p < S; p++ {
		st.parts[p] = stratPart{lo: R, hi: R, run: runs}
	}
	// Part p takes the runs whose work starts in [total·p/S, total·(p+1)/S).
	p := 0
	var acc int64
	for lo, i := 0, 0; lo < R; i++ {
		for p+1 < S && acc*int64(S) >= total*int64(p+1) {
			st.parts[p].hi = lo
			p++
			st.parts[p] = stratPart{lo: lo, hi: R, run: i}
		}
		hi := st.runEnd(lo, R)
		acc += s.runWork(k, l, hi-lo)
		lo = hi
	}
	for p+1 < S {
		st.parts[p].hi = R
		p++
		st.parts[p] = stratPart{lo: R, hi: R, run: runs}
	}
	return runs
}

// levelMode decides whether level k's runs carry their deficits from one
// run to the next within a segment: when adding each row's targets for
// every outcome against every earlier attribute fits the work budget
// (earlier attributes × outcomes ≤ maxWork per row), and so does booking
// each run's against its separator's attributes and small pairs of them
// (tables × outcomes × runs ≤ maxWork × rows), and the tables fit
// maxDeficits.
func (s *sampler) levelMode(k int, l *level, R, runs int) {
	st := s.st
	st.sepTabs = st.sepTabs[:0]
	cells := 0
	add := func(a, b int) {
		st.sepTabs = append(st.sepTabs, sepTab{a, b, cells})
		c := s.sizes[a]
		if b >= 0 {
			c *= s.sizes[b]
		}
		cells += c * l.nNew
	}
	for _, a := range l.sepAttrs {
		add(a, -1)
	}
	for x, a := range l.sepAttrs {
		for _, b := range l.sepAttrs[x+1:] {
			if c := s.sizes[a] * s.sizes[b]; c <= greedyPairCells && cells+c*l.nNew <= maxDeficits && int64(len(st.sepTabs)+1)*int64(l.nNew)*int64(runs) <= int64(R)*int64(st.maxWork) {
				add(a, b)
			}
		}
	}
	st.carAttrs = append(st.carAttrs[:0], st.earlier[k]...)
	st.carOff = st.carOff[:0]
	for _, a := range st.carAttrs {
		st.carOff = append(st.carOff, cells)
		cells += s.sizes[a] * l.nNew
	}
	st.carCells = cells
	st.carWork = 0
	st.persist = runs > 1 && l.nNew > 1 && len(st.carAttrs)*l.nNew <= st.maxWork &&
		int64(len(st.sepTabs))*int64(l.nNew)*int64(runs) <= int64(R)*int64(st.maxWork) && cells <= maxDeficits
	if st.persist {
		st.carWork = len(st.carAttrs) * l.nNew
	}
}

// sepTab is a carried deficit table against a separator attribute a, or
// the pair a, b (b ≥ 0), at offset off.
type sepTab struct {
	a, b, off int
}

// base is the offset of row's cells in table t, for nNew outcomes.
func (t sepTab) base(row []int32, sizes []int, nNew int) int {
	v := int(row[t.a])
	if t.b >= 0 {
		v = v*sizes[t.b] + int(row[t.b])
	}
	return t.off + v*nNew
}

// runPart draws the runs of part p of the current level on worker w.
func (s *sampler) runPart(w *stratWorker, p stratPart) {
	st := s.st
	k := st.k
	l := &s.levels[k]
	if p.lo == p.hi {
		return
	}
	s.resetCarry(w, k, l)
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
// worker w's stream: the quotas by systematic rounding over the whole run
// (or, where the level carries deficits, by carriedQuotas), and each row, in
// a random order, the outcome with quota left whose deficit against the
// model's joint with the row's earlier attributes (and small pairs of them)
// is largest, within the run and, where the level carries them, over the
// segment's runs so far. Given the separator, the new attributes are
// independent of every earlier attribute (the junction tree's running
// intersection), so the target of (earlier attribute e = v, outcome x) in
// the run is N(e = v)·quota_x/N. Where that would cost too much it spreads
// the outcomes instead, or draws them against the carried deficits alone.
func (s *sampler) assignGreedy(w *stratWorker, k int, l *level, si, lo, hi int) {
	st := s.st
	na := s.na
	run := st.order[lo:hi]
	var outs []outcome
	if st.persist {
		outs = s.carriedQuotas(w, l, si, lo, hi)
		s.addCarriedTargets(w, l, run)
	} else {
		outs = s.split(l, si, int64(len(run)), st.outs[lo:lo:hi], &w.rng)
	}
	K := len(outs)
	ear := st.earlier[k]
	n, ok := 0, false
	if K > 1 {
		n, ok = s.runTables(w, ear, K, len(run), st.maxWork-st.carWork)
	}
	if !ok {
		if st.persist {
			s.drawCarried(w, l, lo, hi, outs)
		} else {
			s.spread(l, lo, hi, outs, &w.rng)
		}
		return
	}
	if cap(w.def) < n {
		w.def = make([]float64, n)
	}
	def := w.def[:n]
	clear(def)
	c := float64(len(run))
	// targets: N(e = v)·q_x/N, each row adding the outcomes' shares
	// q_x/N (w.share) to its cells
	w.share = resize(w.share, K)
	for x, o := range outs {
		w.share[x] = float64(o.c) / c
	}
	w.touched = w.touched[:0]
	w.hitSlots(n / K)
	for _, i := range run {
		w.hit(s.rowBases(w, ear, K, st.buf[int(i)*na:int(i+1)*na]), K)
	}
	for _, t := range w.touched {
		scaleShares(def[int(t)*K:int(t+1)*K], w.share, float64(w.hits[t]))
		w.hits[t] = 0
	}
	w.touched = w.touched[:0]
	perm := s.permute(w, lo, hi)
	// The outcomes' counts are their quotas from here on.
	for _, i := range perm {
		row := st.buf[int(i)*na : int(i+1)*na]
		s.takeBest(w, l, row, def, s.rowBases(w, ear, K, row), outs)
	}
}

// takeBest gives row the outcome of outs with quota left whose run
// deficits (def at the offsets bs, outcome x at base+x) plus, where the
// level carries them, carried deficits sum highest, and books it: one
// quota and one row off each deficit.
func (s *sampler) takeBest(w *stratWorker, l *level, row []int32, def []float64, bs []int, outs []outcome) {
	var cbs []int
	if s.st.persist {
		cbs = s.carriedBases(w, l, row)
	}
	best := bestOutcome(def, bs, w.carried, cbs, outs)
	j := outs[best].j
	outs[best].c--
	for _, b := range bs {
		def[b+best]--
	}
	for _, b := range cbs {
		w.carried[b+j]--
	}
	s.setRow(l, row, j)
}

// runTables lays out a run's deficit tables for K outcomes against the
// earlier attributes ear (w.defOff) and the small pairs of them (w.pairs,
// w.pairOff) and returns their size, or false where they would cost too
// much: K·attributes past work (the score terms per row the carried tables
// leave of maxWork), or past maxDeficits cells.
func (s *sampler) runTables(w *stratWorker, ear []int, K, rows, work int) (int, bool) {
	if len(ear) == 0 || K*len(ear) > work {
		return 0, false
	}
	w.defOff = w.defOff[:0]
	n := 0
	for _, a := range ear {
		w.defOff = append(w.defOff, n)
		n += s.sizes[a] * K
	}
	if n > maxDeficits {
		return 0, false
	}
	w.pairs, w.pairOff = w.pairs[:0], w.pairOff[:0]
	for x, a := range ear {
		for _, b := range ear[x+1:] {
			if c := s.sizes[a] * s.sizes[b]; c <= greedyPairCells && c <= rows && K*(len(ear)+len(w.pairs)+1) <= work && n+c*K <= maxDeficits {
				w.pairs = append(w.pairs, [2]int{a, b})
				w.pairOff = append(w.pairOff, n)
				n += s.sizes[a] * s.sizes[b] * K
			}
		}
	}
	return n, true
}

// rowBases writes row's offset in each of the run's deficit tables (the
// attributes', then the pairs') into w.bases.
func (s *sampler) rowBases(w *stratWorker, ear []int, K int, row []int32) []int {
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

// permute returns the run at positions lo to hi of the order in a random
// order (in st.tmp).
func (s *sampler) permute(w *stratWorker, lo, hi int) []int32 {
	st := s.st
	perm := st.tmp[lo:hi]
	copy(perm, st.order[lo:hi])
	for x := len(perm) - 1; x > 0; x-- {
		y := int(boundedUint(&w.rng, uint64(x+1)))
		perm[x], perm[y] = perm[y], perm[x]
	}
	return perm
}

// hit counts a row at the deficit-table offsets bs (multiples of the
// slot width K): the targets are added per slot once the run's rows are
// counted, c·share in place of c additions of share.
// The caller sizes hits (hitSlots) to the tables' slots first.
func (w *stratWorker) hit(bs []int, K int) {
	for _, b := range bs {
		t := b / K
		if w.hits[t] == 0 {
			w.touched = append(w.touched, int32(t))
		}
		w.hits[t]++
	}
}

// hitSlots makes hits hold m slots, all zero (hit leaves them so), and
// touched room for m, so that hit never grows it. A run's tables have at
// most maxDeficits/2 slots (K ≥ 2 outcomes), and so do the carried ones (a
// level carries only with 2 or more outcomes).
func (w *stratWorker) hitSlots(m int) {
	if len(w.hits) < m {
		m = max(m, min(2*len(w.hits), maxDeficits/2))
		w.hits = make([]int32, m)
		w.touched = make([]int32, 0, m)
	}
}

// scaleShares adds c·share[x] to d[x] for every outcome x, once per slot a
// run's rows fall in. It and bestOutcome are not inlined: in assignGreedy
// their loops would spill registers (measured when the shares were added
// once per row: the greedy balancing ran 10% slower).
//
//go:noinline
func scaleShares(d []float64, share []float64, c float64) {
	share = share[:len(d)]
	for x := range d {
		d[x] += c * share[x]
	}
}

// resetCarry clears worker w's carried deficits for a segment of level k.
func (s *sampler) resetCarry(w *stratWorker, k int, l *level) {
	if !s.st.persist {
		return
	}
	w.carried = resize(w.carried, s.st.carCells)
	clear(w.carried)
}

// runSupport writes separator value si's possible outcomes at level l and
// their probabilities into w.supp and w.prob.
func (w *stratWorker) runSupport(l *level, si int) {
	row := l.cum[si*l.nNew : (si+1)*l.nNew]
	w.supp, w.prob = w.supp[:0], w.prob[:0]
	prev := 0.0
	for j, F := range row {
		if p := F - prev; p > 0 {
			w.supp = append(w.supp, int32(j))
			w.prob = append(w.prob, p)
		}
		prev = F
	}
}

// splitCarried splits c rows over the possible outcomes w.supp by
// controlled rounding steered by the carried deficits: every outcome gets
// ⌊c·p_j⌋ rows, and the rows left over go one each to the outcomes with a
// fractional part whose fractional part plus adj_j (the mean deficit of the
// run's separator values) is largest: of the roundings that keep every
// count within one of c·p_j, the one that leaves the least squared
// deficit. (Without the deficits, always rounding up the largest
// fractions would send every one-row run to its modal outcome; with them,
// an outcome rounded up owes the next runs.)
func (s *sampler) splitCarried(w *stratWorker, c int64, outs []outcome) []outcome {
	cf := float64(c)
	w.order = w.order[:0]
	left := c
	for x, p := range w.prob {
		e := cf * p
		f := math.Floor(e)
		left -= int64(f)
		w.cnt = append(w.cnt[:x], int64(f))
		w.key = append(w.key[:x], math.Inf(-1))
		if e > f {
			w.key[x] = e - f + w.adj[x]
			w.order = append(w.order, int32(x))
		}
	}
	if left > int64(len(w.order)) { // rounding: every possible outcome may take one
		w.order = w.order[:0]
		for x := range w.supp {
			w.key[x] = w.adj[x]
			w.order = append(w.order, int32(x))
		}
	}
	key := w.key
	slices.SortFunc(w.order, func(a, b int32) int {
		if d := cmp.Compare(key[b], key[a]); d != 0 {
			return d
		}
		return int(a - b)
	})
	for _, x := range w.order[:min(left, int64(len(w.order)))] {
		w.cnt[x]++
	}
	// Floors that floating-point rounding pushed past c rows give the
	// excess back, one row each from the last outcomes that have any.
	for x := len(w.supp) - 1; left < 0 && x >= 0; x-- {
		if w.cnt[x] > 0 {
			w.cnt[x]--
			left++
		}
	}
	for x, j := range w.supp {
		if w.cnt[x] > 0 {
			outs = append(outs, outcome{int(j), w.cnt[x]})
		}
	}
	return outs
}

// addCarriedTargets adds, for every row of run, its run's conditional p_j
// of every possible outcome j (w.supp, w.prob) to the carried deficits of
// its earlier attributes' values.
func (s *sampler) addCarriedTargets(w *stratWorker, l *level, run []int32) {
	st := s.st
	w.touched = w.touched[:0]
	w.hitSlots(st.carCells / l.nNew)
	for _, i := range run {
		w.hit(s.carriedBases(w, l, st.buf[int(i)*s.na:int(i+1)*s.na]), l.nNew)
	}
	for _, t := range w.touched {
		w.addSupport(w.carried[int(t)*l.nNew:], float64(w.hits[t]))
		w.hits[t] = 0
	}
	w.touched = w.touched[:0]
}

// addSupport adds c times the run's conditional to d: c·p_j at every
// possible outcome j (w.supp, w.prob).
func (w *stratWorker) addSupport(d []float64, c float64) {
	for x, j := range w.supp {
		d[j] += c * w.prob[x]
	}
}

// carriedBases writes row's offsets in the carried deficit tables of its
// earlier attributes into w.cbases.
func (s *sampler) carriedBases(w *stratWorker, l *level, row []int32) []int {
	st := s.st
	bs := w.cbases[:0]
	for q, a := range st.carAttrs {
		bs = append(bs, st.carOff[q]+int(row[a])*l.nNew)
	}
	w.cbases = bs
	return bs
}

// drawCarried gives the rows of the run at positions lo to hi of the order,
// in a random order, the outcomes of outs (their counts the quotas), each
// row the outcome with quota left whose carried deficits against its
// earlier attributes sum highest.
func (s *sampler) drawCarried(w *stratWorker, l *level, lo, hi int, outs []outcome) {
	st := s.st
	for _, i := range s.permute(w, lo, hi) {
		s.takeBest(w, l, st.buf[int(i)*s.na:int(i+1)*s.na], nil, nil, outs)
	}
}

// carriedQuotas returns the quotas of the run at positions lo to hi
// (separator value si) at level l: c·p_j plus the mean of the carried
// deficits of its separator's attributes and pairs (the least-squares
// correction of them all, as every row of the run adds to each of them),
// rounded; and it books the run's targets and quotas in those deficits. It
// leaves the run's possible outcomes in w.supp and w.prob.
func (s *sampler) carriedQuotas(w *stratWorker, l *level, si, lo, hi int) []outcome {
	st := s.st
	def := w.carried
	nNew := l.nNew
	w.runSupport(l, si)
	first := st.buf[int(st.order[lo])*s.na:]
	w.adj = resize(w.adj, len(w.supp))
	clear(w.adj)
	inv := 1 / float64(len(st.sepTabs))
	for _, t := range st.sepTabs {
		d := def[t.base(first, s.sizes, nNew):]
		for x, j := range w.supp {
			w.adj[x] += d[j] * inv
		}
	}
	outs := s.splitCarried(w, int64(hi-lo), st.outs[lo:lo:hi])
	cf := float64(hi - lo)
	for _, t := range st.sepTabs {
		d := def[t.base(first, s.sizes, nNew):]
		w.addSupport(d, cf)
		for _, o := range outs {
			d[o.j] -= float64(o.c)
		}
	}
	return outs
}

// bestOutcome returns the first of the outcomes with quota (count) left
// whose run deficits at the offsets bs (outcome x at base+x) and carried
// deficits at the offsets cbs (outcome j at base+j) sum highest.
//
//go:noinline
func bestOutcome(def []float64, bs []int, carried []float64, cbs []int, outs []outcome) int {
	best, bestScore := -1, math.Inf(-1)
	for x := range outs {
		if outs[x].c == 0 {
			continue
		}
		sc := 0.0
		for _, b := range bs {
			sc += def[b+x]
		}
		j := outs[x].j
		for _, b := range cbs {
			sc += carried[b+j]
		}
		if sc > bestScore {
			best, bestScore = x, sc
		}
	}
	return best
}

// levelChain splits a level of several new attributes into one level per
// attribute: each new attribute given the separator and the new attributes
// before it (the level's conditional, summed over the later ones), so that
// each attribute is drawn against the deficits of every attribute drawn
// before it; the root clique (no separator) becomes the first attribute
// alone, then the others one by one.
func levelChain(l *level) []level {
	attrs, sizes := l.newAttrs, l.newSizes
	if len(attrs) < 2 {
		return []level{*l}
	}
	// The level's conditional probabilities, then their sums over the
	// last new attributes, one more at each step.
	p := make([]float64, len(l.cum))
	for s0 := 0; s0 < len(p); s0 += l.nNew {
		prev := 0.0
		for j, F := range l.cum[s0 : s0+l.nNew] {
			p[s0+j] = max(F-prev, 0)
			prev = F
		}
	}
	chain := make([]level, len(attrs))
	for i := len(attrs) - 1; i >= 0; i-- {
		c := &chain[i]
		c.newAttrs, c.newSizes, c.nNew = []int{attrs[i]}, []int{sizes[i]}, sizes[i]
		inner := 1 // cells of the new attributes before i
		for t := range i {
			inner *= sizes[t]
		}
		for q, a := range l.sepAttrs {
			c.sepAttrs = append(c.sepAttrs, a)
			c.sepStrides = append(c.sepStrides, l.sepStrides[q]*inner)
		}
		stride := inner
		for t := range i {
			stride /= sizes[t]
			c.sepAttrs = append(c.sepAttrs, attrs[t])
			c.sepStrides = append(c.sepStrides, stride)
		}
		c.cum = make([]float64, len(p))
		copy(c.cum, p)
		cumulate(c.cum, c.nNew)
		if i > 0 { // sum out attribute i
			q := make([]float64, len(p)/sizes[i])
			for s0 := range q {
				for _, v := range p[s0*sizes[i] : (s0+1)*sizes[i]] {
					q[s0] += v
				}
			}
			p = q
		}
	}
	return chain
}

// cumulate turns each row of np probabilities of tab into its cumulative
// conditional: normalised, uniform where the row is empty (an unreachable
// separator value), and exactly 1 from the last possible outcome on, so
// that rounding never sends a row to an impossible one.
func cumulate(tab []float64, np int) {
	for s0 := 0; s0 < len(tab); s0 += np {
		row := tab[s0 : s0+np]
		acc, last := 0.0, np-1
		for j, v := range row {
			if v > 0 {
				last = j
			}
			acc += v
			row[j] = acc
		}
		if !(acc > 0) || math.IsInf(acc, 0) {
			for j := range row {
				row[j] = float64(j+1) / float64(np)
			}
			last = np - 1
		} else {
			for j := range row {
				row[j] /= acc
			}
		}
		for j := last; j < np; j++ {
			row[j] = 1
		}
	}
}
