package model

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/dpsynth/synth/internal/par"
)

// maxBatches is the number of compiled set lists a Model keeps for
// Marginals (least recently used out first).
const maxBatches = 4

// MarginalsError reports the sets of a Marginals call that it could not
// answer; the others were answered. Marginals reuses it: it is valid until
// the next Marginals call on the same model.
type MarginalsError struct {
	Index []int   // positions in the call's sets, increasing
	Errs  []error // Errs[k]: why set Index[k] failed (a *TooLargeError)
}

func (e *MarginalsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model: %d of the sets have no marginal", len(e.Index))
	for k, err := range e.Errs {
		if k == 3 {
			b.WriteString("; …")
			break
		}
		fmt.Fprintf(&b, "; set %d: %v", e.Index[k], err)
	}
	return b.String()
}

// Unwrap returns the per-set errors (for errors.As).
func (e *MarginalsError) Unwrap() []error { return e.Errs }

// batch is a compiled list of sets for Marginals.
type batch struct {
	sets   [][]int // copies of the sets, to recognise the list
	plans  []setPlan
	cells  []int // output cells per set
	condCl []int // cliques whose conditional some plan reads
	cond   [][]float64
	sep    []float64   // separator scratch for the conditionals
	arena  [][]float64 // per worker
	off    []int       // running cells of condCl (the conditionals' pass)
	failed []int       // plans with an error
	// The covered sets by covering clique, in order, for AddThetas.
	groupCl  []int
	groupSet [][]int
	groupOff []int // running cells of groupCl
	err      MarginalsError
	lastUse  uint64
	// The pairs (and triples with a covered pair) no clique covers, by the
	// attribute carried (pairs.go).
	pairs       []pairPlan
	pairArena   [][]float64
	condAt      uint64       // the model's beliefsAt when cond was computed (0: never)
	carryOf     []int32      // each set's carry (index into pairs), −1 for none: CarryGroups
	carryGroups []CarryGroup // each carry's sets and costs: CarryGroups
	costs       []float64    // each set's cells: MarginalCosts
	// The sets and the carry plans by decreasing cost (compiled once), and
	// a pass's units in that order: the workers take them one at a time,
	// the largest first (unitQueue).
	setsByCost  []int
	pairsByCost []int
	units       []int
}

// unitQueue hands a pass's units (b.units, indices) to the workers one at
// a time.
type unitQueue struct{ next atomic.Int64 }

// take returns the next unit for a worker, or false when all are taken or
// the model is interrupted.
func (q *unitQueue) take(m *Model, units []int) (int, bool) {
	if m.interrupted() {
		return 0, false
	}
	k := int(q.next.Add(1) - 1)
	if k >= len(units) {
		return 0, false
	}
	return units[k], true
}

// runUnits runs job, a pass over b.units through q, on the caller alone
// when the pass's cost is small, else on every worker.
func (m *Model) runUnits(job par.Job, q *unitQueue, cost int) {
	q.next.Store(0)
	if m.workers == 1 || cost < minBatchSplit {
		job.Run(0, 0, 0)
	} else {
		m.splitFor(m.workers, job)
	}
}

// batchJob runs a pass of a Marginals call: the conditionals whose
// running cells start in a worker's range, or the sets of b.units taken
// one at a time.
type batchJob struct {
	m    *Model
	b    *batch
	outs [][]float64
	cond bool // the conditionals' pass (off indexes b.condCl)
	q    unitQueue
}

func (j *batchJob) Run(w, lo, hi int) {
	m, b := j.m, j.b
	dig := m.dig[w]
	if j.cond {
		for i, c := range b.condCl {
			if o := b.off[i]; o >= lo && o < hi {
				m.condTo(c, b.cond[c], m.wsepFor(w, b, c), dig)
			}
		}
		return
	}
	for s, ok := j.q.take(m, b.units); ok; s, ok = j.q.take(m, b.units) {
		j.runSet(s, w, dig)
	}
}

// runSet answers set s of the batch on worker w.
func (j *batchJob) runSet(s, w int, dig []int) {
	m, b := j.m, j.b
	sp, out := &b.plans[s], j.outs[s]
	switch {
	case sp.covering < 0:
		m.runCross(sp, out, b.cond, b.arena[w], dig)
	case sp.whole:
		copy(out, m.belief[sp.covering])
	default:
		clear(out)
		sp.p.sumTo(out, m.belief[sp.covering], 0, sp.p.cells, dig)
	}
}

// wsepFor returns separator scratch for clique c on worker w: the batch's
// own for worker 0, else the worker's separator scratch when it is large
// enough (cliques below minParallel cells have separators that fit).
func (m *Model) wsepFor(w int, b *batch, c int) []float64 {
	n := m.t.sepCell[c]
	if w == 0 {
		return b.sep[:n]
	}
	return m.wsep[w][:n]
}

// Marginals writes the marginal of D on each sets[i] into outs[i], as
// Marginal does, sharing the work between the sets: the plan of every set
// (its covering clique, or the subtree and elimination order of a
// cross-clique set) is compiled once per list of sets and kept (for the
// last few lists), each clique's conditional is computed once per call
// for all sets that read it, and the sets are split over the model's
// workers by their cost. Each output is the same, bit for bit, as
// Marginal's. A nil outs[i] skips set i. After the first call with a list
// of sets (compared by value) it allocates nothing.
//
// The model keeps the last four lists' plans with their buffers, which
// Tree.Bytes does not count: the conditionals (at most the model's clique
// cells) and, per worker, a scratch arena as large as the largest set's
// product and intermediate tables (each at most Settings.MaxElimCells).
//
// Sets whose elimination would exceed Settings.MaxElimCells are not
// answered: it returns a *MarginalsError listing them (their outputs are
// left as they were) and answers the others. When Settings.Done is closed
// it stops taking sets and returns ErrInterrupted. It panics if the model is not
// calibrated, len(outs) != len(sets), a set is not increasing and in
// range, or an output has the wrong length.
func (m *Model) Marginals(sets [][]int, outs [][]float64) error {
	m.mustCalibrated()
	if len(outs) != len(sets) {
		panic(fmt.Sprintf("model: Marginals with %d outputs for %d sets", len(outs), len(sets)))
	}
	b := m.batchFor(sets)
	for i, out := range outs {
		if out != nil && len(out) != b.cells[i] {
			panic(fmt.Sprintf("model: Marginals on set %s with %d cells of output, want %d", fmtSet(sets[i]), len(out), b.cells[i]))
		}
	}
	// The conditionals, split over the workers by cells, once per
	// calibration: a caller that asks for a few sets at a time (the lazy
	// selection) does not pay for them again.
	if len(b.condCl) > 0 && b.condAt != m.beliefsAt {
		b.off = b.off[:0]
		tot := 0
		for _, c := range b.condCl {
			b.off = append(b.off, tot)
			tot += m.t.cells[c]
		}
		m.runConds(b, tot)
		if !m.interrupted() {
			b.condAt = m.beliefsAt
		}
	}
	// Large in-clique sums run one at a time, each split over the workers
	// as Marginal does; the other sets go to the workers one at a time,
	// the largest first.
	b.units = b.units[:0]
	tot := 0
	for _, i := range b.setsByCost {
		sp, out := &b.plans[i], outs[i]
		switch {
		case out == nil || sp.err != nil || sp.carried:
		case sp.covering >= 0 && !sp.whole && sp.p.cells >= minParallel:
			m.sum(&sp.p, out, m.belief[sp.covering])
		default:
			b.units = append(b.units, i)
			tot += sp.cost
		}
	}
	j := &m.bj
	j.m, j.b, j.outs, j.cond = m, b, outs, false
	m.runUnits(j, &j.q, tot)
	j.b, j.outs = nil, nil
	m.runPairBatch(b, outs)
	if m.interrupted() {
		return ErrInterrupted
	}
	if len(b.failed) == 0 {
		return nil
	}
	b.err.Index, b.err.Errs = b.err.Index[:0], b.err.Errs[:0]
	for _, i := range b.failed {
		if outs[i] != nil {
			b.err.Index = append(b.err.Index, i)
			b.err.Errs = append(b.err.Errs, b.plans[i].err)
		}
	}
	if len(b.err.Index) == 0 {
		return nil
	}
	return &b.err
}

// Unanswerable returns the positions of the sets whose marginals
// Marginals cannot compute on this tree (the sets of a MarginalsError),
// increasing. It compiles the batch as Marginals does (and keeps it for
// Marginals) but computes no marginal: which sets fail depends only on the
// tree and the sets.
func (m *Model) Unanswerable(sets [][]int) []int {
	b := m.batchFor(sets)
	out := slices.Clone(b.failed)
	slices.Sort(out)
	return out
}

// CarryGroup is a set of sets whose marginals one attribute's carry
// through the tree reads (pairs.go), with the carry's cost in table cells
// touched: Pass for the carry alone (what a Marginals call asking for any
// one of them pays), Whole with every set's read-out too.
type CarryGroup struct {
	Sets        []int // indices into the list of sets
	Pass, Whole float64
}

// CarryGroups returns, for a list of sets, each set's carry group (an
// index into groups; −1 for a set covered by a clique or eliminated on its
// own) and the groups. A Marginals call that asks for a set of a group pays
// for the group's pass; a caller that asks for a few marginals at a time
// can ask for a group whole once the passes it has paid for reach the
// whole group's cost, so that no carry costs much more than twice what
// was needed. The slices are the model's: do not modify them. It compiles
// the list if Marginals has not.
func (m *Model) CarryGroups(sets [][]int) (of []int32, groups []CarryGroup) {
	b := m.batchFor(sets)
	if b.carryOf == nil {
		b.carryOf = make([]int32, len(b.sets))
		for k := range b.carryOf {
			b.carryOf[k] = -1
		}
		b.carryGroups = make([]CarryGroup, len(b.pairs))
		for g := range b.pairs {
			pp := &b.pairs[g]
			reads := 0
			for i := range pp.steps {
				reads += pp.steps[i].cells * len(pp.steps[i].outputs)
			}
			b.carryGroups[g] = CarryGroup{Sets: pp.sets, Pass: float64(max(pp.cost-reads, 1)), Whole: float64(pp.cost)}
			for _, k := range pp.sets {
				b.carryOf[k] = int32(g)
			}
		}
	}
	return b.carryOf, b.carryGroups
}

// MarginalCosts returns, for a list of sets, the cells each set's
// marginal touches on this tree: 0 for a set a clique covers (a sum over
// the clique's belief, shared by the clique's sets), a carried set's share
// of its carry (the whole carry's cells over its sets: CarryGroups), an
// eliminated set its plan's cells, +Inf for a set Marginals cannot answer.
// The slice is the model's: do not modify it. It compiles the list if
// Marginals has not.
func (m *Model) MarginalCosts(sets [][]int) []float64 {
	of, groups := m.CarryGroups(sets)
	b := m.batchFor(sets)
	if b.costs == nil {
		b.costs = make([]float64, len(b.sets))
		for i := range b.costs {
			sp := &b.plans[i]
			switch {
			case sp.err != nil:
				b.costs[i] = math.Inf(1)
			case sp.covering >= 0:
			case of[i] >= 0:
				g := &groups[of[i]]
				b.costs[i] = g.Whole / float64(len(g.Sets))
			default:
				b.costs[i] = float64(sp.cost)
			}
		}
	}
	return b.costs
}

// runConds runs the conditionals' pass of b over the workers, or on the
// caller alone when the work is small or a clique is too large for the
// workers' scratch.
func (m *Model) runConds(b *batch, total int) {
	j := &m.bj
	j.m, j.b, j.cond = m, b, true
	serial := m.workers == 1 || total < minBatchSplit
	for _, c := range b.condCl {
		if m.t.sepCell[c] > len(m.wsep[min(1, m.workers-1)]) {
			serial = true
		}
	}
	if serial {
		j.Run(0, 0, total)
	} else {
		m.splitFor(total, j)
	}
	j.b = nil
}

// batchFor returns the compiled batch of sets, compiling it (and evicting
// the least recently used one) if it is new.
func (m *Model) batchFor(sets [][]int) *batch {
	m.batchUse++
	for _, b := range m.batches {
		if sameSets(b.sets, sets) {
			b.lastUse = m.batchUse
			return b
		}
	}
	for _, s := range sets {
		m.checkSet(s)
	}
	b := m.compile(sets)
	b.lastUse = m.batchUse
	if len(m.batches) < maxBatches {
		m.batches = append(m.batches, b)
	} else {
		lru := 0
		for i, o := range m.batches {
			if o.lastUse < m.batches[lru].lastUse {
				lru = i
			}
		}
		m.batches[lru] = b
	}
	return b
}

func sameSets(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// compile plans every set and allocates the batch's buffers.
func (m *Model) compile(sets [][]int) *batch {
	t := m.t
	k := len(t.cliques)
	b := &batch{
		sets:  make([][]int, len(sets)),
		plans: make([]setPlan, len(sets)),
		cells: make([]int, len(sets)),
		cond:  make([][]float64, k),
		arena: make([][]float64, m.workers),
		off:   make([]int, 0, k),
	}
	need := make([]bool, k)
	maxArena := 0
	group := make([]int, k)
	for c := range group {
		group[c] = -1
	}
	carried := make(map[int][]pairTarget)
	planned := func(i int, sp setPlan) {
		b.plans[i] = sp
		if sp.err != nil {
			b.failed = append(b.failed, i)
		}
		maxArena = max(maxArena, sp.arenaN)
		if c := sp.covering; c >= 0 {
			if group[c] < 0 {
				group[c] = len(b.groupCl)
				b.groupCl = append(b.groupCl, c)
				b.groupSet = append(b.groupSet, nil)
			}
			b.groupSet[group[c]] = append(b.groupSet[group[c]], i)
		}
	}
	pj := &planJob{m: m, sets: sets, out: make([]setChoice, len(sets)), need: make([][]bool, m.workers)}
	if len(sets) > 0 {
		m.splitFor(len(sets), pj)
	}
	for _, nw := range pj.need {
		for c, ok := range nw {
			need[c] = need[c] || ok
		}
	}
	for i, s := range sets {
		b.sets[i] = slices.Clone(s)
		b.cells[i] = int(cellsOf(t.sizes, s))
		ch := &pj.out[i]
		if ch.carry {
			ch.tg.set = i
			carried[ch.a] = append(carried[ch.a], ch.tg)
			b.plans[i] = setPlan{covering: -1, carried: true}
			continue
		}
		planned(i, ch.sp)
	}
	// The carries, and variable elimination for the targets they leave.
	for _, i := range m.compilePairs(b, carried) {
		planned(i, m.planSet(b.sets[i], need))
	}
	b.groupOff = make([]int, len(b.groupCl)+1)
	for g, c := range b.groupCl {
		b.groupOff[g+1] = b.groupOff[g] + t.cells[c]
	}
	maxSep := 0
	for c, ok := range need {
		if ok {
			b.condCl = append(b.condCl, c)
			b.cond[c] = make([]float64, t.cells[c])
			maxSep = max(maxSep, t.sepCell[c])
		}
	}
	b.sep = make([]float64, maxSep)
	for w := range b.arena {
		b.arena[w] = make([]float64, maxArena)
	}
	b.setsByCost = byCost(len(sets), func(i int) int { return b.plans[i].cost })
	b.pairsByCost = byCost(len(b.pairs), func(i int) int { return b.pairs[i].cost })
	b.units = make([]int, 0, max(len(sets), len(b.pairs)))
	b.err.Index = make([]int, 0, len(b.failed))
	b.err.Errs = make([]error, 0, len(b.failed))
	return b
}

// setChoice is how compile answers one set: by a carry of attribute a to
// target tg, or by the plan sp (covered or eliminated).
type setChoice struct {
	carry bool
	a     int
	tg    pairTarget
	sp    setPlan
}

// planJob plans compile's sets on the workers (crossPlan and planSet read
// only the tree), each marking the conditionals its plans read in its own
// need.
type planJob struct {
	m    *Model
	sets [][]int
	out  []setChoice
	need [][]bool
}

func (j *planJob) Run(w, lo, hi int) {
	m := j.m
	if j.need[w] == nil {
		j.need[w] = make([]bool, len(m.t.cliques))
	}
	need := j.need[w]
	for i := lo; i < hi; i++ {
		s := j.sets[i]
		if m.t.Covering(s) >= 0 {
			j.out[i].sp = m.planSet(s, need)
			continue
		}
		a, tg, ok, sp := m.crossPlan(s, need)
		j.out[i] = setChoice{carry: ok, a: a, tg: tg, sp: sp}
	}
}

// byCost returns 0 … n-1 by decreasing cost (the lower index on ties).
func byCost(n int, cost func(int) int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(cost(y), cost(x)) })
	return idx
}

// AddThetas adds s·gs[i] to the log-potentials for every sets[i], as
// AddTheta(sets[i], s, gs[i]) in turn would, with the same bits: the sets
// are grouped by their covering clique (the plans are compiled once per
// list of sets, as for Marginals), each clique takes its sets' tables in
// order, and the cliques are split over the workers. After the first call
// with a list of sets it allocates nothing. It panics if len(gs) !=
// len(sets), a set is not increasing and in range, no clique covers a set
// or a table has the wrong length. The model counts as uncalibrated until
// the next Calibrate.
func (m *Model) AddThetas(sets [][]int, s float64, gs [][]float64) {
	if len(gs) != len(sets) {
		panic(fmt.Sprintf("model: AddThetas with %d tables for %d sets", len(gs), len(sets)))
	}
	b := m.batchFor(sets)
	for i, g := range gs {
		if b.plans[i].covering < 0 {
			panic("model: AddThetas on set " + fmtSet(sets[i]) + ", which no clique covers")
		}
		if len(g) != b.cells[i] {
			panic(fmt.Sprintf("model: AddThetas on set %s with a table of %d cells, want %d", fmtSet(sets[i]), len(g), b.cells[i]))
		}
	}
	m.calibrated = false
	j := &m.tj
	j.m, j.b, j.s, j.gs = m, b, s, gs
	if total := b.groupOff[len(b.groupCl)]; m.workers == 1 || len(b.groupCl) < 2 || total < minBatchSplit {
		j.Run(-1, 0, total)
	} else {
		m.splitFor(total, j)
	}
	j.b, j.gs = nil, nil
}

// thetaJob adds the tables of a batch's covered sets, the cliques whose
// running cells start in a worker's range on that worker (w < 0: all on
// the caller, each clique's additions split over the team).
type thetaJob struct {
	m  *Model
	b  *batch
	s  float64
	gs [][]float64
}

func (j *thetaJob) Run(w, lo, hi int) {
	m, b := j.m, j.b
	for g, c := range b.groupCl {
		if o := b.groupOff[g]; o < lo || o >= hi {
			continue
		}
		for _, i := range b.groupSet[g] {
			p := &b.plans[i].p
			if w < 0 {
				m.broadcast(p, m.theta[c], j.s, j.gs[i])
			} else {
				p.addFrom(m.theta[c], j.s, j.gs[i], 0, p.cells, m.dig[w])
			}
		}
	}
}

// compilePairs plans the carry of every attribute with sets to answer, in
// increasing attribute order, allocates the workers' arenas, and returns
// the sets the carries leave to variable elimination (increasing).
func (m *Model) compilePairs(b *batch, carried map[int][]pairTarget) []int {
	if len(carried) == 0 {
		return nil
	}
	attrs := make([]int, 0, len(carried))
	for a := range carried {
		attrs = append(attrs, a)
	}
	slices.Sort(attrs)
	maxArena := 0
	var left []int
	for _, a := range attrs {
		pp, failed := m.planPairs(a, carried[a])
		b.pairs = append(b.pairs, pp)
		maxArena = max(maxArena, pp.arenaN)
		left = append(left, failed...)
	}
	b.pairArena = make([][]float64, m.workers)
	for w := range b.pairArena {
		b.pairArena[w] = make([]float64, maxArena)
	}
	slices.Sort(left)
	return left
}

// runPairBatch runs the batch's carry plans that have a target to answer,
// each to the next free worker, the largest first.
func (m *Model) runPairBatch(b *batch, outs [][]float64) {
	b.units = b.units[:0]
	tot := 0
	for _, i := range b.pairsByCost {
		if slices.ContainsFunc(b.pairs[i].sets, func(s int) bool { return outs[s] != nil }) {
			b.units = append(b.units, i)
			tot += b.pairs[i].cost
		}
	}
	if len(b.units) == 0 {
		return
	}
	j := &m.pj
	j.m, j.b, j.outs = m, b, outs
	m.runUnits(j, &j.q, tot)
	j.b, j.outs = nil, nil
}
