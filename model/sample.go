package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
)

// Rand is the randomness Sample draws from; privacy.Rand and
// *math/rand/v2.Rand satisfy it.
type Rand interface {
	Uint64() uint64
	Float64() float64
}

// SampleMethod chooses how Sample turns the model into rows.
type SampleMethod int

const (
	// Systematic (the default) is controlled rounding along the tree: the
	// root clique's cell counts are ⌊n·b⌋ or ⌈n·b⌉, and every group of
	// identical partial rows is split over the next clique's conditional
	// the same way; unbiased (every count's expectation is n times its
	// probability).
	Systematic SampleMethod = iota
	// IID draws n independent rows from D.
	IID
	// Stratified is controlled rounding that also controls marginals
	// across cliques. Every clique's new attributes are drawn one at a
	// time, each given the clique's separator and the clique's attributes
	// before it (the root clique: its first attribute over all n rows by
	// systematic rounding, then the others one by one). At each such
	// level, all rows of a chunk that share a separator value (a run, not
	// only identical partial rows) are split together, and the runs carry
	// deficits from one to the next: target minus rows for each (value of
	// an attribute drawn before, outcome), where every row adds the
	// model's conditional p(x|separator) for every outcome x — given the
	// separator the outcome is independent of the other attributes drawn
	// before, so these are the model's joint tables of the outcome with
	// each of them. A run's quotas keep every count within one row of its
	// expectation, rounding up the outcomes whose fractional parts plus the
	// mean deficit of the run's separator values (and small pairs of them)
	// are largest; then its rows, in a random order, each take the outcome
	// with quota left whose deficits against the row's other attributes
	// (within the run and carried) sum highest. So the rows follow
	// the model's pair marginals across cliques, where independent
	// roundings of many small runs would drift by about the square root of
	// their number. Where the deficit tables would cost too much (many
	// rows times attributes times outcomes, past a fixed budget per call)
	// the runs are rounded on their own and balanced within the run, or
	// their outcomes spread evenly along the rows' order. A clique's cell,
	// drawn over several such levels, may stray a little past the one row
	// of plain systematic rounding (TestStratifiedBounds). The levels are
	// cut into a fixed number of segments of runs, drawn in parallel
	// (GOMAXPROCS workers, at most 8), each run from its own stream keyed
	// from r, so the rows do not depend on the number of workers.
	Stratified
)

func (s SampleMethod) String() string {
	switch s {
	case Systematic:
		return "systematic"
	case IID:
		return "iid"
	case Stratified:
		return "stratified"
	}
	return fmt.Sprintf("SampleMethod(%d)", int(s))
}

// DefaultBatch is the batch size of Sample when batch ≤ 0.
const DefaultBatch = 4096

// shuffleWindow is the number of rows Systematic sampling shuffles
// together before emitting them (its rows come out grouped).
const shuffleWindow = 1 << 16

// maxSampleRows is the most rows Sample draws in one call: counts are
// split in float64 arithmetic, exact below 2^53.
const maxSampleRows = 1 << 53

// level is one clique of the sampling order: its new attributes' cumulative
// conditional distribution given its separator.
type level struct {
	sepAttrs, sepStrides []int // separator attributes and their strides in the separator index
	newAttrs, newSizes   []int // attributes the clique adds, increasing
	nNew                 int   // cells of the new attributes
	cum                  []float64

	// Alias tables (Walker, built by Vose's method) of each separator
	// value's conditional, for IID: outcome j of row s is kept with
	// probability aliasP[s·nNew+j], else replaced by aliasJ[…].
	aliasP []float64
	aliasJ []int32
}

// buildAlias builds the alias tables from the cumulative conditionals.
func (l *level) buildAlias() {
	n := l.nNew
	l.aliasP = make([]float64, len(l.cum))
	l.aliasJ = make([]int32, len(l.cum))
	small := make([]int32, 0, n)
	large := make([]int32, 0, n)
	for s0 := 0; s0 < len(l.cum); s0 += n {
		cum, q, al := l.cum[s0:s0+n], l.aliasP[s0:s0+n], l.aliasJ[s0:s0+n]
		small, large = small[:0], large[:0]
		prev := 0.0
		for j, c := range cum {
			q[j] = (c - prev) * float64(n)
			prev = c
			al[j] = int32(j)
			if q[j] < 1 {
				small = append(small, int32(j))
			} else {
				large = append(large, int32(j))
			}
		}
		for len(small) > 0 && len(large) > 0 {
			a := small[len(small)-1]
			small = small[:len(small)-1]
			g := large[len(large)-1]
			al[a] = g
			q[g] -= 1 - q[a]
			if q[g] < 1 {
				large = large[:len(large)-1]
				small = append(small, g)
			}
		}
		for _, j := range large {
			q[j] = 1
		}
		for _, j := range small { // left over by rounding
			q[j] = 1
		}
	}
}

// draw returns an outcome of separator value si's conditional (alias).
func (l *level) draw(si int, r Rand) int {
	hi, lo := bits.Mul64(r.Uint64(), uint64(l.nNew))
	j := si*l.nNew + int(hi)
	if float64(lo>>11)*(1.0/(1<<53)) < l.aliasP[j] {
		return int(hi)
	}
	return int(l.aliasJ[j])
}

// sampler holds the state of one Sample call.
type sampler struct {
	ctx    context.Context
	r      Rand
	levels []level
	na     int     // attributes
	sizes  []int   // attribute sizes
	cur    []int32 // the partial row
	batch  int
	emit   func([]int32) error

	st     *stratState
	outs   [][]outcome // Systematic: each level's split, reused
	win    []int32     // window of rows (Systematic) or the batch (IID)
	rows   int         // rows in win
	leaves int
}

// Sample draws n rows from D along the junction tree, root clique first,
// then each clique's new attributes given its separator, and hands them to
// emit in batches of at most batch rows (batch ≤ 0: DefaultBatch). rows is
// row-major, len(rows) = k·len(Sizes()) for k ≤ batch rows, one code per
// attribute; emit must not keep it after returning. Memory does not grow
// with n: beside tables as large as the model's cliques (20 bytes per
// clique cell: cumulative conditionals and alias tables; Stratified's
// conditionals of each clique's attributes one by one, at most 16),
// Systematic keeps a window of 65,536 rows, shuffled before they are
// emitted, and IID one batch. Systematic rows are drawn depth first along
// the tree, so beyond one window their order follows the tree (the root
// clique's cells in order): callers that need a uniformly random order of
// more rows must shuffle further.
//
// Systematic splits each group of c identical partial rows over the next
// clique's conditional p(·|separator) by systematic rounding with a fresh
// uniform offset u: the first j outcomes get ⌈c·F_j − u⌉ rows in all (F
// the cumulative conditional), so each outcome gets ⌊c·p_j⌋ or ⌈c·p_j⌉
// rows and its expectation is c·p_j. The root clique's counts are thus
// within 1 of n·belief; for a later clique with separator value s,
// reached by G(s) distinct partial rows (groups) holding N(s) rows in all,
// each cell's count is within G(s) of N(s)·p(x|s) (strictly).
//
// It returns emit's error, ctx.Err() when ctx is cancelled (checked at
// every batch), or an error for n < 0 or n > 2^53. It panics if the model
// is not calibrated.
func (m *Model) Sample(ctx context.Context, n int64, method SampleMethod, r Rand, batch int, emit func(rows []int32) error) error {
	m.mustCalibrated()
	if err := checkSampleRows(n); err != nil {
		return err
	}
	if method != Systematic && method != IID && method != Stratified {
		return fmt.Errorf("model: unknown sample method %v", method)
	}
	if batch <= 0 {
		batch = DefaultBatch
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	s := &sampler{ctx: ctx, r: r, na: len(m.t.sizes), sizes: m.t.sizes, batch: batch, emit: emit}
	s.cur = make([]int32, s.na)
	s.levels = m.levels()
	if method == Stratified {
		return s.strat(n)
	}
	for k := range s.levels {
		s.levels[k].buildAlias()
	}
	if method == IID {
		return s.iid(n)
	}
	s.win = make([]int32, min(int64(shuffleWindow), n)*int64(s.na))
	s.outs = make([][]outcome, len(s.levels))
	if err := s.sys(0, n); err != nil {
		return err
	}
	return s.flush()
}

// SampleIIDParts draws len(n) parts of independent rows from D, part k
// with n[k] rows from its own stream rs[k], the parts at once on their own
// goroutines over one set of conditionals; emit(k, rows) receives part k's
// rows in order (row-major, as Sample's) and is called concurrently for
// different parts. The rows do not depend on the number of cores. It
// returns the parts' errors joined (emit's, or ctx.Err()), or an error for
// an n[k] outside 0 to 2^53; it panics if len(rs) != len(n) or the model is
// not calibrated.
func (m *Model) SampleIIDParts(ctx context.Context, n []int64, rs []Rand, emit func(part int, rows []int32) error) error {
	m.mustCalibrated()
	if len(rs) != len(n) {
		panic("model: SampleIIDParts with a stream count unlike the parts'")
	}
	for _, k := range n {
		if err := checkSampleRows(k); err != nil {
			return err
		}
	}
	levels := m.levels()
	for k := range levels {
		levels[k].buildAlias()
	}
	errs := make([]error, len(n))
	var wg sync.WaitGroup
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &sampler{ctx: ctx, r: rs[k], levels: levels, na: len(m.t.sizes), sizes: m.t.sizes, batch: DefaultBatch}
			s.cur = make([]int32, s.na)
			s.emit = func(rows []int32) error { return emit(k, rows) }
			if n[k] > 0 {
				errs[k] = s.iid(n[k])
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// checkSampleRows refuses a row count outside 0 to 2^53.
func checkSampleRows(n int64) error {
	if n < 0 || n > maxSampleRows {
		return fmt.Errorf("model: cannot sample %d rows (want 0 to 2^53)", n)
	}
	return nil
}

// levels builds the cumulative conditionals of every clique from the
// beliefs.
func (m *Model) levels() []level {
	t := m.t
	ls := make([]level, len(t.cliques))
	dig := make([]int, len(t.sizes))
	for c, cl := range t.cliques {
		l := &ls[c]
		// strides of sep and new attributes in their own indices
		var sepStride, newStride []int // per clique position; -1 if not in it
		sepStride = make([]int, len(cl))
		newStride = make([]int, len(cl))
		sp, np := 1, 1
		for q := len(cl) - 1; q >= 0; q-- {
			a := cl[q]
			if containsSorted(t.sep[c], a) {
				sepStride[q], newStride[q] = sp, 0
				sp *= t.sizes[a]
			} else {
				sepStride[q], newStride[q] = 0, np
				np *= t.sizes[a]
			}
		}
		for q, a := range cl {
			if sepStride[q] > 0 {
				l.sepAttrs = append(l.sepAttrs, a)
				l.sepStrides = append(l.sepStrides, sepStride[q])
			} else {
				l.newAttrs = append(l.newAttrs, a)
				l.newSizes = append(l.newSizes, t.sizes[a])
			}
		}
		l.nNew = np
		l.cum = make([]float64, t.cells[c])
		clear(dig[:len(cl)])
		for _, v := range m.belief[c] {
			si, ni := 0, 0
			for q := range cl {
				si += dig[q] * sepStride[q]
				ni += dig[q] * newStride[q]
			}
			l.cum[si*np+ni] = max(v, 0)
			for q := len(cl) - 1; q >= 0; q-- {
				dig[q]++
				if dig[q] < t.sizes[cl[q]] {
					break
				}
				dig[q] = 0
			}
		}
		cumulate(l.cum, np)
	}
	return ls
}

func containsSorted(s []int, a int) bool {
	for _, x := range s {
		if x == a {
			return true
		}
	}
	return false
}

// sepIndex is the separator cell of the partial row at level l.
func (s *sampler) sepIndex(l *level) int {
	i := 0
	for q, a := range l.sepAttrs {
		i += int(s.cur[a]) * l.sepStrides[q]
	}
	return i
}

// setNew writes new-attribute cell j of level l into the partial row.
func (s *sampler) setNew(l *level, j int) {
	for q := len(l.newAttrs) - 1; q >= 0; q-- {
		sz := l.newSizes[q]
		s.cur[l.newAttrs[q]] = int32(j % sz)
		j /= sz
	}
}

// firstAbove returns the first index j ≥ lo with row[j] > x (len(row)-1
// if none).
func firstAbove(row []float64, lo int, x float64) int {
	hi := len(row) - 1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if row[mid] > x {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

type outcome struct {
	j int
	c int64
}

// split runs systematic rounding of c rows over separator value si's
// conditional at level l, drawing from r, and appends the outcomes with a
// positive count (at most c of them); a single row is drawn from the alias
// tables where the level has them (one row's systematic rounding is the
// inverse of the cumulative conditional).
func (s *sampler) split(l *level, si int, c int64, outs []outcome, r Rand) []outcome {
	if c == 1 && l.aliasP != nil {
		return append(outs, outcome{l.draw(si, r), 1})
	}
	row := l.cum[si*l.nNew : (si+1)*l.nNew]
	u := r.Float64()
	cf := float64(c)
	var m int64
	j := 0
	for m < c {
		j2 := firstAbove(row, j, (float64(m)+u)/cf)
		for j2 < len(row)-1 && sysCount(row[j2], cf, u, c) <= m {
			j2++
		}
		for j2 > j && sysCount(row[j2-1], cf, u, c) > m {
			j2--
		}
		a := sysCount(row[j2], cf, u, c)
		if row[j2] == 1 {
			a = c
		}
		outs = append(outs, outcome{j2, a - m})
		m, j = a, j2+1
	}
	return outs
}

// sysCount is the number of the c rows whose outcome is at most j under
// systematic rounding with offset u, F the cumulative conditional at j.
func sysCount(F, cf, u float64, c int64) int64 {
	a := int64(math.Ceil(F*cf - u))
	return min(max(a, 0), c)
}

// sys splits c identical partial rows over level k and below (depth first).
func (s *sampler) sys(k int, c int64) error {
	if k == len(s.levels) {
		return s.leaf(c)
	}
	l := &s.levels[k]
	s.outs[k] = s.split(l, s.sepIndex(l), c, s.outs[k][:0], s.r)
	for _, o := range s.outs[k] {
		s.setNew(l, o.j)
		if err := s.sys(k+1, o.c); err != nil {
			return err
		}
	}
	return nil
}

// leaf appends c copies of the complete row to the window.
func (s *sampler) leaf(c int64) error {
	s.leaves++
	if s.leaves&4095 == 0 {
		if err := s.ctx.Err(); err != nil {
			return err
		}
	}
	capRows := len(s.win) / s.na
	for c > 0 {
		k := min(c, int64(capRows-s.rows))
		for range k {
			copy(s.win[s.rows*s.na:], s.cur)
			s.rows++
		}
		c -= k
		if s.rows == capRows {
			if err := s.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush shuffles the window and emits it in batches.
func (s *sampler) flush() error {
	na := s.na
	w := s.win
	for i := s.rows - 1; i > 0; i-- {
		j := int(boundedUint(s.r, uint64(i+1)))
		if i != j {
			a, b := w[i*na:(i+1)*na], w[j*na:(j+1)*na]
			for q := range a {
				a[q], b[q] = b[q], a[q]
			}
		}
	}
	for off := 0; off < s.rows; off += s.batch {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		end := min(off+s.batch, s.rows)
		if err := s.emit(w[off*na : end*na]); err != nil {
			return err
		}
	}
	s.rows = 0
	return nil
}

// iid draws n independent rows.
func (s *sampler) iid(n int64) error {
	na := s.na
	buf := make([]int32, min(int64(s.batch), n)*int64(na))
	capRows := len(buf) / na
	rows := 0
	for range n {
		for k := range s.levels {
			l := &s.levels[k]
			si := s.sepIndex(l)
			s.setNew(l, l.draw(si, s.r))
		}
		copy(buf[rows*na:], s.cur)
		rows++
		if rows == capRows {
			if err := s.ctx.Err(); err != nil {
				return err
			}
			if err := s.emit(buf); err != nil {
				return err
			}
			rows = 0
		}
	}
	if rows > 0 {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		return s.emit(buf[:rows*na])
	}
	return nil
}

// boundedUint returns a uniform integer in [0, n) (Lemire's method).
func boundedUint(r Rand, n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}
