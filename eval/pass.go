package eval

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dpsynth/synth/query"
)

// scanChunk is the number of queries a pass over the answers reads at a
// time: a generated answer vector (the baseline's) is written a chunk at a
// time into a buffer of this size, which stays in a core's cache.
const scanChunk = 1 << 13

// gatherCap is the most errors kth copies out to select among; a larger
// bucket is split by the next 16 bits of the errors first. (A variable
// for the tests.)
var gatherCap = 1 << 21

// answers is one side of a comparison: a vector of answers, or (v nil) a
// generator that writes the answers of queries lo, lo+1, … into out.
type answers struct {
	v   []float64
	gen func(lo int, out []float64)
	buf []float64
}

// get returns the answers of queries [lo, hi), hi−lo ≤ scanChunk.
func (s *answers) get(lo, hi int) []float64 {
	if s.gen == nil {
		return s.v[lo:hi]
	}
	if s.buf == nil {
		s.buf = make([]float64, scanChunk)
	}
	out := s.buf[:hi-lo]
	s.gen(lo, out)
	return out
}

// errStats summarises the absolute errors e_j = |a_j − b_j| of two answer
// vectors without a vector of m errors: scan reads the answers once, in
// query order, and adds up what the report needs (the metrics' sums with
// the additions in query order, so the bits of Summarize's; each marginal
// set's L1 and max; a histogram of the errors' top 16 bits); kth and
// listed recompute the errors chunk by chunk in further passes.
type errStats struct {
	a, b answers
	m    int
	ms   []query.Marginal

	sum, sq, max float64
	// zeros counts the errors that are exactly 0, shown those at least
	// exactBelow (the ones the HTML histogram plots).
	zeros, shown int
	// hist counts the nonzero errors by the top 16 bits of their float64
	// bits (the order of non-negative floats is that of their bits).
	hist *[1 << 16]uint32
	// l1 and mmax are each marginal set's sum and largest error.
	l1, mmax []float64
	// bad: some answer is NaN or infinite.
	bad bool
	// summary is the errors' metrics, once computed.
	summary Metrics
	ebuf    []float64
}

// newErrStats returns the comparison of answers a and b over the
// workload's queries.
func newErrStats(w *query.Workload, a, b answers) *errStats {
	ms := w.Marginals()
	return &errStats{a: a, b: b, m: w.M(), ms: ms, hist: new([1 << 16]uint32),
		l1: make([]float64, len(ms)), mmax: make([]float64, len(ms)), ebuf: make([]float64, scanChunk)}
}

// forChunks calls fn on consecutive chunks [lo, hi) that cover [0, m) in
// order, each at most scanChunk queries and inside one marginal set of ms
// (set its index) or between sets (set −1). ms must be in query order.
func forChunks(ms []query.Marginal, m int, fn func(lo, hi, set int)) {
	span := func(lo, hi, set int) {
		for ; lo < hi; lo += scanChunk {
			fn(lo, min(lo+scanChunk, hi), set)
		}
	}
	j := 0
	for i, s := range ms {
		span(j, s.Offset, -1)
		span(s.Offset, s.Offset+s.Cells, i)
		j = s.Offset + s.Cells
	}
	span(j, m, -1)
}

// scan reads the answers once and fills the sums, counts, histogram and
// per-set figures; bad is set when an answer is not finite.
func (c *errStats) scan() {
	forChunks(c.ms, c.m, func(lo, hi, set int) {
		var l1, mx float64
		if set >= 0 {
			l1, mx = c.l1[set], c.mmax[set]
		}
		l1, mx = c.scanChunk(c.a.get(lo, hi), c.b.get(lo, hi), l1, mx)
		c.max = max(c.max, mx)
		if set >= 0 {
			c.l1[set], c.mmax[set] = l1, mx
		}
	})
	if math.IsNaN(c.sum) || math.IsInf(c.sum, 0) {
		// A NaN or infinite answer makes its error, so the sum, NaN or
		// infinite; finite answers only through overflow.
		c.bad = !c.inputsFinite()
	}
}

// scanChunk adds the errors of one chunk (answers a and b) to the sums,
// counts and histogram, and returns l1 plus their sum (added in order) and
// the larger of mx and their largest. It allocates nothing and branches
// only on a new largest error: an error e ≥ 0 is 0 when its bits minus 1
// wrap around, at least exactBelow when exactBelow's bits minus 1 minus
// its bits do; zeros land in hist[0] and are taken out after the chunk.
func (c *errStats) scanChunk(a, b []float64, l1, mx float64) (float64, float64) {
	b = b[:len(a)]
	h := c.hist
	sum, sq := c.sum, c.sq
	var zeros, shown uint64
	below := math.Float64bits(exactBelow) - 1
	for j, x := range a {
		e := math.Abs(x - b[j])
		sum += e
		sq += e * e
		l1 += e
		if e > mx {
			mx = e
		}
		bits := math.Float64bits(e)
		zeros += (bits - 1) >> 63
		shown += (below - bits) >> 63
		h[bits>>48]++
	}
	c.sum, c.sq = sum, sq
	c.zeros += int(zeros)
	c.shown += int(shown)
	h[0] -= uint32(zeros)
	return l1, mx
}

// inputsFinite reports whether every answer of both sides is finite.
func (c *errStats) inputsFinite() bool {
	ok := true
	forChunks(nil, c.m, func(lo, hi, _ int) {
		for _, v := range [2][]float64{c.a.get(lo, hi), c.b.get(lo, hi)} {
			for _, x := range v {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					ok = false
				}
			}
		}
	})
	return ok
}

// errs returns the errors of queries [lo, hi) in a scratch buffer.
func (c *errStats) errs(lo, hi int) []float64 {
	return AbsErrors(c.a.get(lo, hi), c.b.get(lo, hi), c.ebuf[:hi-lo])
}

// metrics returns the max, mean, RMSE and p95 of the errors: Summarize's
// values, bit for bit.
func (c *errStats) metrics() Metrics {
	if c.m == 0 {
		return Metrics{}
	}
	n := float64(c.m)
	return Metrics{Max: c.max, Mean: c.sum / n, RMSE: math.Sqrt(c.sq / n), P95: c.kth(nearestRank(c.m, 0.95))}
}

// kth returns the k-th smallest error (0-based), exactly: a radix select
// on the errors' bits. The histogram of the top 16 bits names the bucket
// of the k-th; a bucket of at most gatherCap errors is copied out and
// searched with selectKth, a larger one split by the next 16 bits in
// another pass (at most three).
func (c *errStats) kth(k int) float64 {
	if k < c.zeros {
		return 0
	}
	k -= c.zeros
	h := c.hist
	var prefix uint64
	for shift := 48; ; shift -= 16 {
		d := 0
		for k >= int(h[d]) {
			k -= int(h[d])
			d++
		}
		prefix = prefix<<16 | uint64(d)
		if shift == 0 {
			return math.Float64frombits(prefix)
		}
		if n := int(h[d]); n <= gatherCap {
			return c.gather(prefix, shift, n, k)
		}
		h = c.digits(prefix, shift)
	}
}

// digits counts the nonzero errors whose bits shifted right by shift are
// prefix by their next 16 bits.
func (c *errStats) digits(prefix uint64, shift int) *[1 << 16]uint32 {
	h := new([1 << 16]uint32)
	forChunks(nil, c.m, func(lo, hi, _ int) {
		for _, e := range c.errs(lo, hi) {
			if bits := math.Float64bits(e); e != 0 && bits>>shift == prefix {
				h[(bits>>(shift-16))&0xffff]++
			}
		}
	})
	return h
}

// gather returns the k-th smallest of the n nonzero errors whose bits
// shifted right by shift are prefix.
func (c *errStats) gather(prefix uint64, shift, n, k int) float64 {
	buf := make([]float64, 0, n)
	forChunks(nil, c.m, func(lo, hi, _ int) {
		for _, e := range c.errs(lo, hi) {
			if e != 0 && math.Float64bits(e)>>shift == prefix {
				buf = append(buf, e)
			}
		}
	})
	return selectKth(buf, k)
}

// listed returns the queries the report lists, in workload order — every
// query when m ≤ MaxReportQueries, else the MaxReportQueries worst: every
// query above the threshold error (the (m−MaxReportQueries)-th smallest),
// then ties at it in order — and, from the same pass, the errors of at
// least exactBelow in query order (the HTML histogram's). When the errors
// from the threshold's top-16-bit bucket up are at most gatherCap, that
// pass also collects them and the threshold is selected among them;
// otherwise kth finds it first.
func (c *errStats) listed() (kept []int, shown []float64) {
	shown = make([]float64, 0, c.shown)
	if c.m <= MaxReportQueries {
		kept = make([]int, c.m)
		for j := range kept {
			kept[j] = j
		}
		forChunks(nil, c.m, func(lo, hi, _ int) {
			for _, e := range c.errs(lo, hi) {
				if e >= exactBelow {
					shown = append(shown, e)
				}
			}
		})
		return kept, shown
	}
	k := c.m - MaxReportQueries
	if k >= c.zeros {
		// The threshold is in bucket d, rank r there; n errors from d up.
		d, r, n := 0, k-c.zeros, 0
		for r >= int(c.hist[d]) {
			r -= int(c.hist[d])
			d++
		}
		for _, v := range c.hist[d:] {
			n += int(v)
		}
		if n <= gatherCap {
			return c.listedFrom(uint64(d), r, n, shown)
		}
	}
	thr := c.kth(k)
	return c.keep(thr, func(fn func(j int, e float64)) {
		forChunks(nil, c.m, func(lo, hi, _ int) {
			for i, e := range c.errs(lo, hi) {
				fn(lo+i, e)
			}
		})
	}, &shown), shown
}

// listedFrom is listed's one pass when the n errors whose top 16 bits are
// at least d are few: it collects them (with their queries) and the
// histogram's errors, selects the threshold as the r-th smallest of those
// in bucket d and keeps the queries from the collected ones.
func (c *errStats) listedFrom(d uint64, r, n int, shown []float64) ([]int, []float64) {
	idx, val := make([]int, 0, n), make([]float64, 0, n)
	var inD []float64
	forChunks(nil, c.m, func(lo, hi, _ int) {
		for i, e := range c.errs(lo, hi) {
			if e != 0 && math.Float64bits(e)>>48 >= d {
				idx, val = append(idx, lo+i), append(val, e)
			}
			if e >= exactBelow {
				shown = append(shown, e)
			}
		}
	})
	for _, e := range val {
		if math.Float64bits(e)>>48 == d {
			inD = append(inD, e)
		}
	}
	thr := selectKth(inD, r)
	kept := c.keep(thr, func(fn func(j int, e float64)) {
		for i, j := range idx {
			fn(j, val[i])
		}
	}, nil)
	return kept, shown
}

// keep returns, in workload order, the queries of errors above thr and
// then the first ties at thr, MaxReportQueries in all, from each(fn),
// which calls fn on queries and their errors in workload order (every
// query above thr among them). With shown non-nil, it also appends the
// errors of at least exactBelow to *shown.
func (c *errStats) keep(thr float64, each func(fn func(j int, e float64)), shown *[]float64) []int {
	kept := make([]int, 0, MaxReportQueries)
	ties := make([]int, 0, MaxReportQueries)
	each(func(j int, e float64) {
		switch {
		case e > thr:
			kept = append(kept, j)
		case e == thr && len(ties) < MaxReportQueries:
			ties = append(ties, j)
		}
		if shown != nil && e >= exactBelow {
			*shown = append(*shown, e)
		}
	})
	kept = append(kept, ties[:min(len(ties), MaxReportQueries-len(kept))]...)
	slices.Sort(kept)
	return kept
}

// runTasks runs the tasks on up to GOMAXPROCS goroutines (the caller's
// among them), each taking the next task not yet started, and returns when
// all are done.
func runTasks(tasks []func()) {
	var next atomic.Int64
	work := func() {
		for i := next.Add(1) - 1; int(i) < len(tasks); i = next.Add(1) - 1 {
			tasks[i]()
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(tasks)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}
