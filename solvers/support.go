package solvers

import (
	"fmt"

	"github.com/dpsynth/synth/query"
)

// supportIndex gives the support of single workload queries as runs of
// contiguous universe indices, so that one query's answer or a
// multiplicative update on it costs O(|support|), not a pass over the
// universe. MWEM's sequential multiplicative-weights fit needs this: the
// Operator answers all queries at once only.
//
// A marginal cell fixes the codes of its set's attributes: the attributes
// after the last fixed one vary inside a contiguous run (of length that
// attribute's stride), and the free attributes before it are enumerated by
// an odometer. Other queries (ranges, prefixes, predicates) have no
// exported structure; their runs are found once per query by scanning the
// indicator vector that Operator.AddQuery writes, and cached (this
// allocates, once per distinct non-marginal query).
//
// A supportIndex is not safe for concurrent use.
type supportIndex struct {
	wl      *query.Workload
	op      Operator
	strides []int
	sizes   []int
	shapes  []marginalShape // by marginal set
	other   map[int][]int   // cached runs (lo, hi pairs) of non-marginal queries
	scratch []float64       // zero vector of length k, for the scan

	// The odometer of the current enumeration.
	ctr       [64]int
	base, off int
}

// marginalShape is the run structure of the cells of one marginal set.
type marginalShape struct {
	run       int   // length of each contiguous run
	innerStr  int   // stride and size of the innermost free attribute before
	innerSize int   // the last fixed one (stride 0, size 1 if none)
	freeStr   []int // strides of the other free attributes before it, outermost first
	freeSize  []int
	fixedStr  []int // strides of the set's attributes, in set order
	fixedSize []int
}

func newSupportIndex(wl *query.Workload, op Operator) *supportIndex {
	dom := wl.Domain()
	s := &supportIndex{wl: wl, op: op, sizes: dom.Sizes(), other: map[int][]int{}}
	for _, st := range dom.Strides() {
		s.strides = append(s.strides, int(st))
	}
	if len(s.sizes) > len(s.ctr) {
		panic(fmt.Sprintf("solvers: %d attributes, more than the support index handles (%d)", len(s.sizes), len(s.ctr)))
	}
	for _, mg := range wl.Marginals() {
		var sh marginalShape
		fixed := map[int]bool{}
		last := -1
		for _, a := range mg.Attrs {
			fixed[a] = true
			last = max(last, a)
			sh.fixedStr = append(sh.fixedStr, s.strides[a])
			sh.fixedSize = append(sh.fixedSize, s.sizes[a])
		}
		sh.run = 1
		if last >= 0 {
			sh.run = s.strides[last]
		} else {
			sh.run = s.strides[0] * s.sizes[0] // the empty set: one run, the universe
		}
		for a := 0; a < last; a++ {
			if !fixed[a] {
				sh.freeStr = append(sh.freeStr, s.strides[a])
				sh.freeSize = append(sh.freeSize, s.sizes[a])
			}
		}
		sh.innerStr, sh.innerSize = 0, 1
		if f := len(sh.freeStr); f > 0 {
			sh.innerStr, sh.innerSize = sh.freeStr[f-1], sh.freeSize[f-1]
			sh.freeStr, sh.freeSize = sh.freeStr[:f-1], sh.freeSize[:f-1]
		}
		s.shapes = append(s.shapes, sh)
	}
	return s
}

// sum returns Σ_{i ∈ support(j)} x[i].
func (s *supportIndex) sum(j int, x []float64) float64 {
	total := 0.0
	if mi := s.wl.MarginalOf(j); mi >= 0 {
		sh := &s.shapes[mi]
		s.start(j, mi)
		for {
			lo := s.base + s.off
			if sh.run == 1 {
				for c := range sh.innerSize {
					total += x[lo+c*sh.innerStr]
				}
			} else {
				for c := range sh.innerSize {
					for _, v := range x[lo+c*sh.innerStr : lo+c*sh.innerStr+sh.run] {
						total += v
					}
				}
			}
			if !s.advance(sh) {
				return total
			}
		}
	}
	runs := s.runs(j)
	for r := 0; r < len(runs); r += 2 {
		for _, v := range x[runs[r]:runs[r+1]] {
			total += v
		}
	}
	return total
}

// scale multiplies x[i] by f on the support of query j.
func (s *supportIndex) scale(j int, f float64, x []float64) {
	if mi := s.wl.MarginalOf(j); mi >= 0 {
		sh := &s.shapes[mi]
		s.start(j, mi)
		for {
			lo := s.base + s.off
			if sh.run == 1 {
				for c := range sh.innerSize {
					x[lo+c*sh.innerStr] *= f
				}
			} else {
				for c := range sh.innerSize {
					seg := x[lo+c*sh.innerStr : lo+c*sh.innerStr+sh.run]
					for i := range seg {
						seg[i] *= f
					}
				}
			}
			if !s.advance(sh) {
				return
			}
		}
	}
	runs := s.runs(j)
	for r := 0; r < len(runs); r += 2 {
		seg := x[runs[r]:runs[r+1]]
		for i := range seg {
			seg[i] *= f
		}
	}
}

// start sets the odometer to the first run of cell j of marginal set mi.
func (s *supportIndex) start(j, mi int) {
	mg := s.wl.Marginals()[mi]
	sh := &s.shapes[mi]
	cell := j - mg.Offset
	s.base, s.off = 0, 0
	for p := len(sh.fixedStr) - 1; p >= 0; p-- {
		s.base += (cell % sh.fixedSize[p]) * sh.fixedStr[p]
		cell /= sh.fixedSize[p]
	}
	clear(s.ctr[:len(sh.freeStr)])
}

// advance moves the odometer over the outer free attributes (the last one
// fastest), keeping s.off = Σ ctr·stride; false at the end.
func (s *supportIndex) advance(sh *marginalShape) bool {
	for i := len(sh.freeStr) - 1; i >= 0; i-- {
		s.ctr[i]++
		s.off += sh.freeStr[i]
		if s.ctr[i] < sh.freeSize[i] {
			return true
		}
		s.off -= sh.freeSize[i] * sh.freeStr[i]
		s.ctr[i] = 0
	}
	return false
}

// runs returns the cached runs of a non-marginal query, scanning its
// indicator vector the first time.
func (s *supportIndex) runs(j int) []int {
	if r, ok := s.other[j]; ok {
		return r
	}
	if s.scratch == nil {
		s.scratch = make([]float64, s.op.K())
	}
	s.op.AddQuery(j, 1, s.scratch)
	var runs []int
	in := false
	for i, v := range s.scratch {
		if (v != 0) != in {
			runs = append(runs, i)
			in = !in
		}
	}
	if in {
		runs = append(runs, len(s.scratch))
	}
	for r := 0; r < len(runs); r += 2 {
		clear(s.scratch[runs[r]:runs[r+1]])
	}
	s.other[j] = runs
	return runs
}
