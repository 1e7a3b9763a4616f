package model

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/internal/vec"
)

// Settings tune a Model. The zero value means the defaults.
type Settings struct {
	// Workers is the number of goroutines of the per-clique loops
	// (0: GOMAXPROCS). Cliques below 65,536 cells run serially.
	Workers int
	// MaxElimCells caps every intermediate table of a cross-clique
	// Marginal's variable elimination, and the tables (built block by
	// block) that a triple's carry passes over (0: 1<<24 cells, 128 MiB).
	// A pair's carry is not capped: its tables are a clique's times one
	// attribute's values.
	MaxElimCells int
	// Done, when closed, makes Marginals stop taking sets and return
	// ErrInterrupted (a caller passes its context's Done; nil: never).
	Done <-chan struct{}
}

// ErrInterrupted is returned by Marginals when Settings.Done was closed
// before it answered every set; the outputs are then partly written.
var ErrInterrupted = errors.New("model: marginals interrupted")

// DefaultMaxElimCells is the default of Settings.MaxElimCells.
const DefaultMaxElimCells = 1 << 24

// tiny is the smallest linear separator sum Calibrate trusts: below it,
// exponentials flushed to zero (below e^−708 of the clique's maximum, at
// most 2^53 of them) could matter, so the separator is recomputed by an
// log-sum-exp with a shift per separator cell.
const tiny = 1e-250

// minParallel is the least number of clique cells a loop runs in parallel
// for: below it, waking the team costs more than it saves.
const minParallel = 1 << 16

// grain is the alignment of the parallel chunks of clique cells.
const grain = 1024

// Model is a log-linear distribution D(x) ∝ exp(Σ_c θ_c(x_c)) on the
// cliques of a junction tree. After Calibrate it gives log Z, the cliques'
// beliefs, marginals of D and samples. A Model is not safe for concurrent
// use; its methods allocate nothing after their first call, except a
// cross-clique Marginal and Sample.
type Model struct {
	t       *Tree
	team    *par.Team
	workers int
	maxElim int
	done    <-chan struct{} // Settings.Done

	thetaAll, beliefAll, upAll []float64
	theta                      [][]float64 // θ_c
	wlb                        [][]float64 // per worker: θ_c plus the children's messages (cliques with children)
	belief                     [][]float64 // calibrated beliefs (probabilities)
	up                         [][]float64 // up[c]: log-message from c to its parent, over sep[c] (scratch after the downward pass)

	shiftAll     []float64
	shift        [][]float64 // shift[c][s]: the shift of clique c's upward exponentials on separator cell s
	wsep         [][]float64 // per worker: separator scratch
	part         [][]float64 // partial sums of workers 1..
	dig          [][]int     // odometer digits per worker
	childP, parP []proj      // clique c → sep[c], parent[c] → sep[c]

	sc         proj // scratch projection of AddTheta and Marginal
	scDims     []int
	scStride   []int
	logZ       float64
	calibrated bool
	beliefsAt  uint64 // incremented whenever the beliefs change (Calibrate, CopyFrom)

	upLevels, downLevels []cliqueLevel // cliques by height (root excluded) and by depth (root excluded)
	bad                  []bool        // per worker: a non-finite θ was met

	wj walkJob
	vj vecJob
	lj levelJob
	bj batchJob
	pj pairJob
	tj thetaJob
	sj scaledJob

	batches  []*batch // compiled set lists of Marginals
	batchUse uint64
}

// New returns a model on tree t with θ = 0 everywhere (the uniform
// distribution), calibrated. s may be nil for the defaults. It allocates
// t.BytesFor(workers) bytes at most (16 per clique cell and scratch):
// check Tree.Bytes against a memory cap before calling it. Call Close to
// stop the model's worker goroutines.
func New(t *Tree, s *Settings) *Model {
	var st Settings
	if s != nil {
		st = *s
	}
	workers := st.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if st.MaxElimCells <= 0 {
		st.MaxElimCells = DefaultMaxElimCells
	}
	l := t.layout(workers)
	k := len(t.cliques)
	n := len(t.sizes)
	m := &Model{
		t:         t,
		team:      par.NewTeam(workers),
		workers:   workers,
		maxElim:   st.MaxElimCells,
		done:      st.Done,
		thetaAll:  make([]float64, int(l.cliqueCells)),
		beliefAll: make([]float64, int(l.cliqueCells)),
		upAll:     make([]float64, int(l.sepCells)),
		theta:     make([][]float64, k),
		belief:    make([][]float64, k),
		up:        make([][]float64, k),
		shiftAll:  make([]float64, int(l.sepCells)),
		shift:     make([][]float64, k),
		part:      make([][]float64, workers-1),
		dig:       make([][]int, workers),
		childP:    make([]proj, k),
		parP:      make([]proj, k),
	}
	for w := range m.part {
		m.part[w] = make([]float64, l.part)
	}
	m.wlb = make([][]float64, workers)
	m.wsep = make([][]float64, workers)
	m.bad = make([]bool, workers)
	for w := range workers {
		if w == 0 {
			m.wlb[w] = make([]float64, l.maxInner)
			m.wsep[w] = make([]float64, l.maxSep)
		} else {
			m.wlb[w] = make([]float64, min(l.maxInner, minParallel))
			m.wsep[w] = make([]float64, min(l.maxSep, minParallel))
		}
	}
	m.upLevels, m.downLevels = t.cliqueLevels()
	for w := range m.dig {
		m.dig[w] = make([]int, n+1)
	}
	ints := make([]int, int(l.projInts))
	take := func(c int) []int {
		s := ints[:0:c]
		ints = ints[c:]
		return s
	}
	off, soff := 0, 0
	for c, cl := range t.cliques {
		sz := t.cells[c]
		m.theta[c] = m.thetaAll[off : off+sz : off+sz]
		m.belief[c] = m.beliefAll[off : off+sz : off+sz]
		off += sz
		if p := t.parent[c]; p >= 0 {
			ss := t.sepCell[c]
			m.up[c] = m.upAll[soff : soff+ss : soff+ss]
			m.shift[c] = m.shiftAll[soff : soff+ss : soff+ss]
			soff += ss
			m.childP[c].build(t.sizes, cl, t.sep[c], take(len(cl)+1), take(len(cl)+1))
			pc := t.cliques[p]
			m.parP[c].build(t.sizes, pc, t.sep[c], take(len(pc)+1), take(len(pc)+1))
		}
	}
	m.scDims, m.scStride = take(n+1), take(n+1)
	m.wj.used = make([]bool, workers)
	m.vj.wmax = make([]float64, workers)
	m.vj.wsum = make([]float64, workers)
	m.Calibrate()
	return m
}

// Close stops the model's worker goroutines; the model must not be used
// afterwards. Models that are dropped without Close keep idle goroutines.
func (m *Model) Close() { m.team.Close() }

// Tree returns the model's junction tree.
func (m *Model) Tree() *Tree { return m.t }

// Theta returns the log-potential table of clique c, in the clique's mixed
// radix. The caller may modify it; the model counts as uncalibrated until
// the next Calibrate.
func (m *Model) Theta(c int) []float64 {
	m.calibrated = false
	return m.theta[c]
}

// AddTheta adds s·g, broadcast from a table g over set onto the smallest
// clique covering set, to that clique's log-potential: θ_c(x) += s·g(x_set).
// It panics if no clique covers set or len(g) is not set's number of
// cells. The model counts as uncalibrated until the next Calibrate.
func (m *Model) AddTheta(set []int, s float64, g []float64) {
	c := m.t.Covering(set)
	if c < 0 {
		panic("model: AddTheta on set " + fmtSet(set) + ", which no clique covers")
	}
	m.checkSet(set)
	m.sc.build(m.t.sizes, m.t.cliques[c], set, m.scDims, m.scStride)
	if len(g) != m.sc.tcells {
		panic(fmt.Sprintf("model: AddTheta on set %s with a table of %d cells, want %d", fmtSet(set), len(g), m.sc.tcells))
	}
	m.calibrated = false
	m.broadcast(&m.sc, m.theta[c], s, g)
}

// CopyFrom copies o's potentials and calibration into m without
// allocating. It panics if o is on a different tree.
func (m *Model) CopyFrom(o *Model) {
	if o.t != m.t {
		panic("model: CopyFrom a model on a different tree")
	}
	copy(m.thetaAll, o.thetaAll)
	copy(m.beliefAll, o.beliefAll)
	copy(m.upAll, o.upAll)
	copy(m.shiftAll, o.shiftAll)
	m.logZ, m.calibrated = o.logZ, o.calibrated
	m.beliefsAt++
}

// CopyThetasFrom copies o's potentials into m (on the team when they are
// large) and leaves m uncalibrated: for a caller that changes θ and then
// calibrates, since Calibrate rewrites every belief, message and shift that
// CopyFrom would also copy.
func (m *Model) CopyThetasFrom(o *Model) {
	if o.t != m.t {
		panic("model: CopyThetasFrom a model on a different tree")
	}
	m.copyVec(m.thetaAll, o.thetaAll)
	m.calibrated = false
	m.beliefsAt++
}

// Calibrate runs sum-product belief propagation on the clique tree in log
// space.
//
// Upward pass, from the leaves: each clique's log-potential plus its
// children's messages, lb_c, is shifted by its maximum M_c, exponentiated
// (E_c = e^(lb_c − M_c), the vector exponential) and summed onto the
// separator with its parent: the message is up_c(s) = M_c + log Σ_{x→s} E_c(x).
// Where a separator sum falls below 1e−250 (exponentials flushed to zero
// below e^−708 could then matter), the clique is redone with a shift per
// separator cell, the maximum of lb_c over the cells that map to it, so the
// message is exact for any finite θ.
//
// Downward pass, from the root (whose belief is E_0 normalised, log Z =
// M_0 + log Σ E_0): each clique's belief is E_c(x) · P(s) · e^(shift(s) −
// up_c(s)), P the parent belief's marginal on the separator (Hugin's
// update, one multiplication per cell). Beliefs are probabilities, so
// values below about 1e−300 may be flushed to zero.
//
// Cliques of one height (upward) or depth (downward) are independent: when
// each of them is below 65,536 cells and together they hold enough cells,
// the workers take whole cliques; otherwise each clique's loops are split
// over the workers.
//
// It panics if θ holds NaN or ±Inf.
func (m *Model) Calibrate() {
	clear(m.bad)
	for _, lv := range m.upLevels {
		m.runLevel(lv, false)
	}
	if slices.Contains(m.bad, true) {
		panic("model: Calibrate with θ holding NaN or ±Inf")
	}
	s0 := m.upClique(0, -1)
	if m.bad[0] || math.IsInf(m.logZ, 0) || math.IsNaN(m.logZ) {
		panic("model: Calibrate with θ holding NaN or ±Inf")
	}
	m.scaleVec(m.belief[0], 1/s0)
	for _, lv := range m.downLevels {
		m.runLevel(lv, true)
	}
	m.calibrated = true
	m.beliefsAt++
}

// cliqueLevel is a set of independent cliques with the running sums of their
// cells (off[i] is where clique cl[i] starts, off[len(cl)] the total).
type cliqueLevel struct {
	cl      []int
	off     []int
	maxCell int
}

// runLevel runs the upward or downward step of every clique of lv.
func (m *Model) runLevel(lv cliqueLevel, down bool) {
	total := lv.off[len(lv.cl)]
	if m.workers == 1 || len(lv.cl) == 1 || lv.maxCell >= minParallel || total < minSplit {
		for _, c := range lv.cl {
			if down {
				m.downClique(c, -1)
			} else {
				m.upClique(c, -1)
			}
		}
		return
	}
	j := &m.lj
	j.m, j.lv, j.down = m, lv, down
	m.splitFor(total, j)
	j.m = nil
}

// minSplit is the least number of cells of a Calibrate level of small
// cliques that the workers share (whole cliques each), as before batches
// existed: par.MinParallel.
var minSplit = par.MinParallel

// minBatchSplit is the least cost (cells touched) of a Marginals or
// AddThetas call whose sets or cliques the workers share. The fit's calls
// on a full-ADULT model (13,000 clique cells, 60–80 µs a step) ran 40%
// slower split over two workers than on one, on a 2-core machine also
// running two other processes (BenchmarkFitStep/evidence: Batch-split4k
// 79 µs, Batch-serial 56 µs, medians of 8), so only calls of at least
// 2^18 cells, such as the candidate marginals of an adaptive round, are
// split.
var minBatchSplit = 1 << 18

// interrupted reports whether Settings.Done is closed.
func (m *Model) interrupted() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// splitFor runs job over [0, total) on the team, each worker taking the
// items whose running cells start in its range, even when total is below
// par.MinParallel: the range is then scaled up so that the team splits it.
func (m *Model) splitFor(total int, job par.Job) {
	scale := 1
	if total < par.MinParallel {
		scale = (par.MinParallel + total - 1) / total
	}
	j := &m.sj
	j.job, j.scale = job, scale
	m.team.For(total*scale, scale, j)
	j.job = nil
}

// scaledJob runs job on a range scaled down by scale (the team's chunk
// boundaries are multiples of scale).
type scaledJob struct {
	job   par.Job
	scale int
}

func (j *scaledJob) Run(w, lo, hi int) { j.job.Run(w, lo/j.scale, hi/j.scale) }

// levelJob hands whole cliques of a level to the workers: worker w takes
// the cliques that start in its range of the level's cells.
type levelJob struct {
	m    *Model
	lv   cliqueLevel
	down bool
}

func (j *levelJob) Run(w, lo, hi int) {
	for i, c := range j.lv.cl {
		if o := j.lv.off[i]; o >= lo && o < hi {
			if j.down {
				j.m.downClique(c, w)
			} else {
				j.m.upClique(c, w)
			}
		}
	}
}

// upClique computes clique c's upward exponentials and, but for the root,
// its message to its parent; for the root it sets log Z and returns the sum
// of the exponentials. w ≥ 0 runs it on worker w alone, w < 0 splits its
// loops over the team. It never panics (it may run on another worker's goroutine):
// a non-finite θ marks m.bad.
func (m *Model) upClique(c, w int) float64 {
	t := m.t
	ws := max(w, 0)
	lb := m.theta[c]
	if len(t.child[c]) > 0 {
		lb = m.wlb[ws][:t.cells[c]]
		m.hCopy(w, lb, m.theta[c])
		for _, ch := range t.child[c] {
			m.hBroadcast(w, &m.parP[ch], lb, 1, m.up[ch])
		}
	}
	mx := m.hMax(w, lb)
	if math.IsInf(mx, 0) || math.IsNaN(mx) {
		m.bad[ws] = true
		return math.NaN()
	}
	s := m.hExp(w, m.belief[c], lb, mx)
	if c == 0 {
		m.logZ = mx + math.Log(s)
		return s
	}
	sep, up, sh := m.wsep[ws][:t.sepCell[c]], m.up[c], m.shift[c]
	p := &m.childP[c]
	m.hSum(w, p, sep, m.belief[c])
	if minOf(sep) >= tiny {
		for j, v := range sep {
			up[j] = mx + math.Log(v)
			sh[j] = mx
		}
		return s
	}
	// Exact: shift each separator cell's group by its own maximum.
	for j := range sh {
		sh[j] = math.Inf(-1)
	}
	p.maxTo(sh, lb, 0, p.cells, m.dig[ws])
	e := m.belief[c]
	m.hCopy(w, e, lb)
	m.hBroadcast(w, p, e, -1, sh)
	m.hExp(w, e, e, 0)
	m.hSum(w, p, sep, e)
	for j, v := range sep {
		up[j] = sh[j] + math.Log(v)
	}
	return s
}

// downClique turns clique c's upward exponentials into its belief.
func (m *Model) downClique(c, w int) {
	t := m.t
	ws := max(w, 0)
	f, up, sh := m.wsep[ws][:t.sepCell[c]], m.up[c], m.shift[c]
	m.hSum(w, &m.parP[c], f, m.belief[t.parent[c]])
	// f = P(s)·e^(shift(s) − up(s)); up is not needed any more this pass,
	// so it holds the exponentials.
	for j := range up {
		up[j] = sh[j] - up[j]
	}
	vec.ExpShiftSum(up, up, 0)
	for j, v := range up {
		f[j] *= v
	}
	m.hMultiply(w, &m.childP[c], m.belief[c], f)
}

// The h* kernels run on worker w alone (w ≥ 0) or over the team (w < 0).

func (m *Model) hCopy(w int, dst, src []float64) {
	if w >= 0 {
		copy(dst, src)
		return
	}
	m.copyVec(dst, src)
}

func (m *Model) hMax(w int, x []float64) float64 {
	if w >= 0 {
		return maxOf(x)
	}
	return m.maxVec(x)
}

func (m *Model) hExp(w int, dst, src []float64, shift float64) float64 {
	if w >= 0 {
		return vec.ExpShiftSum(dst, src, shift)
	}
	return m.expVec(dst, src, shift)
}

func (m *Model) hSum(w int, p *proj, dst, src []float64) {
	if w >= 0 {
		clear(dst)
		p.sumTo(dst, src, 0, p.cells, m.dig[w])
		return
	}
	m.sum(p, dst, src)
}

func (m *Model) hBroadcast(w int, p *proj, dst []float64, a float64, src []float64) {
	if w >= 0 {
		p.addFrom(dst, a, src, 0, p.cells, m.dig[w])
		return
	}
	m.broadcast(p, dst, a, src)
}

func (m *Model) hMultiply(w int, p *proj, dst, src []float64) {
	if w >= 0 {
		p.mulFrom(dst, src, 0, p.cells, m.dig[w])
		return
	}
	m.multiply(p, dst, src)
}

func minOf(x []float64) float64 {
	mn := math.Inf(1)
	for _, v := range x {
		if !(v >= mn) {
			mn = v
		}
	}
	return mn
}

func (m *Model) mustCalibrated() {
	if !m.calibrated {
		panic("model: not calibrated (call Calibrate after changing θ)")
	}
}

// LogZ returns the log partition function log Σ_x exp(Σ_c θ_c(x_c)). It
// panics if the model is not calibrated.
func (m *Model) LogZ() float64 {
	m.mustCalibrated()
	return m.logZ
}

// Belief returns the calibrated marginal of D on clique c (probabilities
// summing to 1, in the clique's mixed radix; do not modify). It panics if
// the model is not calibrated.
func (m *Model) Belief(c int) []float64 {
	m.mustCalibrated()
	return m.belief[c]
}

// checkSet panics unless set is strictly increasing and in range.
func (m *Model) checkSet(set []int) {
	for k, a := range set {
		if a < 0 || a >= len(m.t.sizes) || (k > 0 && a <= set[k-1]) {
			panic(fmt.Sprintf("model: set %s is not an increasing list of attributes in [0, %d)", fmtSet(set), len(m.t.sizes)))
		}
	}
}

// Marginal writes the marginal of D on set (probabilities summing to 1, in
// set's mixed radix) into out, whose length must be set's number of cells.
// If a clique covers set, it sums the clique's belief and allocates
// nothing; otherwise it runs exact variable elimination on the smallest
// subtree of the clique tree touching set, and returns a *TooLargeError if
// an intermediate table would exceed Settings.MaxElimCells. Elimination
// plans and allocates its tables on every call and costs time in
// proportion to their cells: for many sets, or the same sets again, use
// Marginals, which keeps the plans and tables and shares the work. It panics if
// the model is not calibrated, set is not increasing and in range, or out
// has the wrong length.
func (m *Model) Marginal(set []int, out []float64) error {
	m.mustCalibrated()
	m.checkSet(set)
	cells := 1
	for _, a := range set {
		cells *= m.t.sizes[a]
	}
	if len(out) != cells {
		panic(fmt.Sprintf("model: Marginal on set %s with %d cells of output, want %d", fmtSet(set), len(out), cells))
	}
	c := m.t.Covering(set)
	if c < 0 {
		return m.crossMarginal(set, out)
	}
	if len(set) == len(m.t.cliques[c]) {
		copy(out, m.belief[c])
		return nil
	}
	m.sc.build(m.t.sizes, m.t.cliques[c], set, m.scDims, m.scStride)
	m.sum(&m.sc, out, m.belief[c])
	return nil
}

// sum writes dst[j] = Σ_{i→j} src[i] for projection p, in parallel when
// the source is large and the target fits the workers' partial buffers.
func (m *Model) sum(p *proj, dst, src []float64) {
	clear(dst)
	if m.workers == 1 || p.cells < minParallel || len(m.part) == 0 || len(dst) > len(m.part[0]) {
		p.sumTo(dst, src, 0, p.cells, m.dig[0])
		return
	}
	j := &m.wj
	j.m, j.op, j.p, j.dst, j.src = m, opSum, p, dst, src
	clear(j.used)
	m.team.For(p.cells, grain, j)
	for w := 1; w < m.workers; w++ {
		if j.used[w] {
			for q, v := range m.part[w-1][:len(dst)] {
				dst[q] += v
			}
		}
	}
	j.p, j.dst, j.src = nil, nil, nil
}

// broadcast adds a·src[j(i)] to dst[i] for projection p.
func (m *Model) broadcast(p *proj, dst []float64, a float64, src []float64) {
	if m.workers == 1 || p.cells < minParallel {
		p.addFrom(dst, a, src, 0, p.cells, m.dig[0])
		return
	}
	j := &m.wj
	j.m, j.op, j.p, j.dst, j.src, j.a = m, opAdd, p, dst, src, a
	m.team.For(p.cells, grain, j)
	j.p, j.dst, j.src = nil, nil, nil
}

// multiply multiplies dst[i] by src[j(i)] for projection p.
func (m *Model) multiply(p *proj, dst, src []float64) {
	if m.workers == 1 || p.cells < minParallel {
		p.mulFrom(dst, src, 0, p.cells, m.dig[0])
		return
	}
	j := &m.wj
	j.m, j.op, j.p, j.dst, j.src = m, opMul, p, dst, src
	m.team.For(p.cells, grain, j)
	j.p, j.dst, j.src = nil, nil, nil
}

const (
	opSum = iota
	opAdd
	opMul
)

// walkJob runs a projection kernel over chunks of source cells.
type walkJob struct {
	m        *Model
	op       int
	p        *proj
	dst, src []float64
	a        float64
	used     []bool
}

func (j *walkJob) Run(w, lo, hi int) {
	dig := j.m.dig[w]
	switch j.op {
	case opSum:
		out := j.dst
		if w > 0 {
			out = j.m.part[w-1][:len(j.dst)]
			clear(out)
			j.used[w] = true
		}
		j.p.sumTo(out, j.src[lo:hi], lo, hi, dig)
	case opAdd:
		j.p.addFrom(j.dst, j.a, j.src, lo, hi, dig)
	case opMul:
		j.p.mulFrom(j.dst[lo:hi], j.src, lo, hi, dig)
	}
}

const (
	vecCopy = iota
	vecMax
	vecExp
	vecScale
)

// vecJob runs elementwise kernels over chunks of a clique table.
type vecJob struct {
	op         int
	dst, src   []float64
	a          float64
	wmax, wsum []float64
}

func (j *vecJob) Run(w, lo, hi int) {
	switch j.op {
	case vecCopy:
		copy(j.dst[lo:hi], j.src[lo:hi])
	case vecMax:
		j.wmax[w] = maxOf(j.src[lo:hi])
	case vecExp:
		j.wsum[w] = vec.ExpShiftSum(j.dst[lo:hi], j.src[lo:hi], j.a)
	case vecScale:
		vec.Scale(j.dst[lo:hi], j.a)
	}
}

func (m *Model) runVec(op int, dst, src []float64, a float64) {
	j := &m.vj
	j.op, j.dst, j.src, j.a = op, dst, src, a
	n := len(dst)
	if src != nil {
		n = len(src)
	}
	for w := range j.wmax {
		j.wmax[w], j.wsum[w] = math.Inf(-1), 0
	}
	if n < minParallel {
		j.Run(0, 0, n)
	} else {
		m.team.For(n, grain, j)
	}
	j.dst, j.src = nil, nil
}

func (m *Model) copyVec(dst, src []float64) { m.runVec(vecCopy, dst, src, 0) }

func (m *Model) scaleVec(x []float64, a float64) { m.runVec(vecScale, x, nil, a) }

// maxOf returns the maximum of x (−Inf if empty), ignoring NaN: a NaN
// reaches log Z through the sums and Calibrate panics there.
func maxOf(x []float64) float64 {
	m0, m1, m2, m3 := math.Inf(-1), math.Inf(-1), math.Inf(-1), math.Inf(-1)
	i := 0
	for ; i+3 < len(x); i += 4 {
		if x[i] > m0 {
			m0 = x[i]
		}
		if x[i+1] > m1 {
			m1 = x[i+1]
		}
		if x[i+2] > m2 {
			m2 = x[i+2]
		}
		if x[i+3] > m3 {
			m3 = x[i+3]
		}
	}
	for ; i < len(x); i++ {
		if x[i] > m0 {
			m0 = x[i]
		}
	}
	return max(m0, m1, m2, m3)
}

// maxVec returns the maximum of x.
func (m *Model) maxVec(x []float64) float64 {
	m.runVec(vecMax, nil, x, 0)
	return maxOf(m.vj.wmax)
}

// expVec writes dst = e^(src − shift) and returns its sum.
func (m *Model) expVec(dst, src []float64, shift float64) float64 {
	m.runVec(vecExp, dst, src, shift)
	s := 0.0
	for _, v := range m.vj.wsum {
		s += v
	}
	return s
}

// fmtSet formats set like %v without letting it escape (so that callers'
// set literals stay on the stack).
func fmtSet(set []int) string {
	b := []byte{'['}
	for k, a := range set {
		if k > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(a), 10)
	}
	return string(append(b, ']'))
}
