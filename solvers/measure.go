package solvers

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// group is one measurement of a release: a vector of counts measured at
// once with discrete Gaussian noise. Either a marginal set of attributes
// (every cell of the marginal table), or the rows of one family of the
// workload itself.
type group struct {
	attrs  []int // marginal set (attribute positions, increasing); nil for a workload family
	family int   // workload family index when attrs is nil
	// sens2 is the squared ℓ2 sensitivity of the count vector under the
	// neighbouring relation.
	sens2 float64
	sigma float64 // noise standard deviation, in counts
}

func (g *group) label(w *query.Workload) string {
	if g.attrs != nil {
		names := make([]string, len(g.attrs))
		for i, a := range g.attrs {
			names[i] = w.Domain().Attr(a).Name
		}
		return "marginal {" + strings.Join(names, ", ") + "}"
	}
	return "workload family " + w.Families()[g.family].Description
}

// familySens2 is the squared ℓ2 sensitivity of the (unweighted) count
// vector of one workload family under the shape's neighbouring relation: a
// record leaving one cell and entering another changes two cells of a
// marginal table by one (one cell under add/remove); a single counting query
// by one; the prefix counts of an attribute with v values in at most v−1
// places. Under add/remove of a unit of up to K records the count vector
// changes by the sum of K records' changes, so every ℓ2 sensitivity is K
// times a record's (K² squared; the K records may share a cell, so this is
// tight).
func familySens2(w *query.Workload, f int, sh *Shape) float64 {
	fam := w.Families()[f]
	k2 := unitSq(sh)
	switch fam.Kind {
	case query.Marginals:
		sets := 0
		for _, s := range w.Marginals() {
			if s.Family == f {
				sets++
			}
		}
		if sh.Neighbours == AddRemove {
			return k2 * float64(sets)
		}
		return 2 * float64(sets)
	case query.Prefixes:
		return k2 * float64(fam.Len)
	default:
		return k2
	}
}

// marginalSens2 is the squared ℓ2 sensitivity of one marginal table: 2
// under replace-one (a record leaves one cell and enters another), K² under
// add/remove of a unit of up to K records.
func marginalSens2(sh *Shape) float64 {
	if sh.Neighbours == AddRemove {
		return unitSq(sh)
	}
	return 2
}

// unitSq is K², the square of the most records a unit contributes.
func unitSq(sh *Shape) float64 {
	k := float64(sh.Unit())
	return k * k
}

// calibrate sets each group's σ so that the groups together cost at most
// rho, with ρ split in proportion to share (which need not sum to 1), and
// returns the charges.
func calibrate(groups []group, share []float64, rho float64, w *query.Workload, solver string) []privacy.Charge {
	tot := 0.0
	for _, s := range share {
		tot += s
	}
	charges := make([]privacy.Charge, len(groups))
	for i := range groups {
		g := &groups[i]
		r := rho * share[i] / tot
		g.sigma = privacy.CalibrateGaussian(r, 1, math.Sqrt(g.sens2))
		charges[i] = privacy.Charge{
			Label: fmt.Sprintf("%s: discrete Gaussian on %s (ℓ2 sensitivity %.4g counts, σ = %.4g counts)", solver, g.label(w), math.Sqrt(g.sens2), g.sigma),
			Cost:  privacy.GaussianCost(math.Sqrt(g.sens2), g.sigma),
		}
	}
	return charges
}

// measured is the outcome of measuring groups: the noisy answers as
// fractions, the loss weights 1/σ² (in fractions), and the operator of the
// measured queries over the universe.
type measured struct {
	op   Operator
	y, w []float64
	// nHat is the record count the fractions are relative to: n under
	// replace-one, a private estimate under add/remove.
	nHat float64
	// groupSigma is each group's noise in fractions of nHat.
	groupSigma []float64
	// marginals are the measured marginal tables, whose rows come first
	// (nil: none).
	marginals *query.Workload
}

// marginalWorkload builds the workload of the groups' marginal sets.
func marginalWorkload(w *query.Workload, groups []group) (*query.Workload, error) {
	spec := &query.Spec{MaxCells: w.MaxCells(), Families: []query.FamilySpec{{Type: "marginals"}}}
	for _, g := range groups {
		if g.attrs == nil {
			continue
		}
		names := make([]string, len(g.attrs))
		for i, a := range g.attrs {
			names[i] = w.Domain().Attr(a).Name
		}
		spec.Families[0].Sets = append(spec.Families[0].Sets, names)
	}
	if len(spec.Families[0].Sets) == 0 {
		return nil, nil
	}
	return query.Build(w.Domain(), spec)
}

// measure adds discrete Gaussian noise to the count vector of every group
// and returns the measurements over the universe. Marginal groups come first
// (in order), then the workload's own rows, stacked.
//
// Privacy: each group is the discrete Gaussian mechanism (Canonne, Kamath
// and Steinke 2020) on an integer count vector of squared ℓ2 sensitivity
// g.sens2, ρ = sens2/(2σ²); the charges were computed by calibrate.
// Everything after the noise is post-processing.
//
// Under add/remove n̂ comes from count (a noisy record count) when the plan
// has one, else from the marginal groups' noisy totals.
func measure(p *Problem, groups []group, nb Neighbours, count *countPlan) (*measured, error) {
	return measureN(p, groups, nb, count, nil)
}

// nPrior is an unbiased noisy record count drawn before the tables (the
// staged plan's, secondStage) and its variance, which n̂ under add/remove
// averages with the tables' totals.
type nPrior struct{ value, variance float64 }

// measureN is measure with prior, when not nil, among n̂'s inputs.
func measureN(p *Problem, groups []group, nb Neighbours, count *countPlan, prior *nPrior) (*measured, error) {
	w := p.Workload
	mw, err := marginalWorkload(w, groups)
	if err != nil {
		return nil, err
	}
	nz := &noiser{p: p, groups: groups, sums: make([]float64, len(groups)), sumVar: make([]float64, len(groups)), prior: prior}
	var margNoisy, margSig []float64 // the marginal groups' noisy counts and σ per query (counts), in order
	if mw != nil {
		if margNoisy, margSig, err = nz.marginals(mw); err != nil {
			return nil, err
		}
	}
	hasRows := false
	for _, g := range groups {
		if g.attrs == nil {
			hasRows = true
		}
	}
	var rowNoisy, rowSig []float64 // the workload rows' noisy counts (NaN: not measured) and σ
	if hasRows {
		if rowNoisy, rowSig, err = nz.rows(); err != nil {
			return nil, err
		}
	}
	nHat, err := nz.nHat(nb, count)
	if err != nil {
		return nil, err
	}
	out := &measured{nHat: nHat, marginals: mw}
	var ops []Operator
	for i, v := range margNoisy {
		out.y = append(out.y, v/nHat)
		s := margSig[i] / nHat
		out.w = append(out.w, 1/(s*s))
	}
	if mw != nil {
		op, err := mw.Compile(nil)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	if hasRows {
		for j, v := range rowNoisy {
			if math.IsNaN(v) {
				out.y = append(out.y, 0)
				out.w = append(out.w, 0)
				continue
			}
			wt := w.Weight(j)
			out.y = append(out.y, wt*v/nHat)
			s := wt * rowSig[j] / nHat
			out.w = append(out.w, 1/(s*s))
		}
		ops = append(ops, p.Op)
	}
	out.op = stack(ops...)
	for _, g := range groups {
		out.groupSigma = append(out.groupSigma, g.sigma/nHat)
	}
	return out, nil
}

// noiser draws measure's noisy counts, group by group, and keeps each
// group's noisy total and its variance for n̂.
type noiser struct {
	p            *Problem
	groups       []group
	sums, sumVar []float64
	prior        *nPrior
}

// gauss adds group gi's discrete Gaussian noise to the exact counts cnt
// (rounded to integers) into out.
func (nz *noiser) gauss(gi int, cnt []float64, out []float64) error {
	sigma := nz.groups[gi].sigma
	dg, err := privacy.NewDiscreteGaussian(sigma)
	if err != nil {
		return err
	}
	s := 0.0
	for i, c := range cnt {
		v := float64(int64(math.Round(c)) + dg.Sample(nz.p.Rand))
		if nz.p.noPrivacy {
			v = math.Round(c)
		}
		out[i] = v
		s += v
	}
	nz.sums[gi] = s
	nz.sumVar[gi] = float64(len(cnt)) * sigma * sigma
	return nil
}

// marginals measures the marginal groups, whose tables are mw's marginals
// in order: the noisy counts and each query's σ (counts). The exact tables
// come from Problem.Counts, or from Problem.Data for a source of marginal
// tables only (a database, a count file).
func (nz *noiser) marginals(mw *query.Workload) (noisy, sig []float64, err error) {
	p := nz.p
	n := float64(p.N)
	var ans []float64
	var tabs [][]int64
	if p.Counts != nil {
		ans = mw.AnswerCounts(p.Counts, make([]float64, mw.M()))
	} else {
		sets := make([][]int, len(mw.Marginals()))
		for i, s := range mw.Marginals() {
			sets[i] = s.Attrs
		}
		if tabs, err = p.Data.Marginals(context.Background(), sets); err != nil {
			return nil, nil, err
		}
	}
	noisy = make([]float64, mw.M())
	sig = make([]float64, mw.M())
	si := 0
	for gi, g := range nz.groups {
		if g.attrs == nil {
			continue
		}
		s := mw.Marginals()[si]
		var cnt []float64
		if tabs != nil {
			cnt = make([]float64, s.Cells)
			for i, v := range tabs[si] {
				cnt[i] = float64(v)
			}
		} else {
			cnt = ans[s.Offset : s.Offset+s.Cells]
			for i := range cnt {
				cnt[i] *= n // exact counts (answers are count/n)
			}
		}
		si++
		if err := nz.gauss(gi, cnt, noisy[s.Offset:s.Offset+s.Cells]); err != nil {
			return nil, nil, err
		}
		for i := s.Offset; i < s.Offset+s.Cells; i++ {
			sig[i] = g.sigma
		}
	}
	return noisy, sig, nil
}

// rows measures the groups of non-marginal workload families as they are:
// per workload row, its noisy count (NaN where no group measures it) and σ.
func (nz *noiser) rows() (noisy, sig []float64, err error) {
	p := nz.p
	w, n := p.Workload, float64(p.N)
	m := w.M()
	noisy = make([]float64, m)
	sig = make([]float64, m)
	for j := range noisy {
		noisy[j] = math.NaN()
	}
	for gi, g := range nz.groups {
		if g.attrs != nil {
			continue
		}
		fam := w.Families()[g.family]
		cnt := make([]float64, fam.Len)
		for i := range cnt {
			j := fam.Offset + i
			cnt[i] = p.Answers[j] * n / w.Weight(j)
		}
		if err := nz.gauss(gi, cnt, noisy[fam.Offset:fam.Offset+fam.Len]); err != nil {
			return nil, nil, err
		}
		for i := range cnt {
			sig[fam.Offset+i] = g.sigma
		}
	}
	return noisy, sig, nil
}

// nHat is the count the fractions are relative to: n under replace-one;
// under add/remove the noisy record count when the plan has one, else the
// inverse-variance weighted mean of the marginal groups' noisy totals and
// the prior count if there is one (post-processing). Its standard error is
// the plan's n_estimate_se (planNSE, or the staged plan's measureStaged).
func (nz *noiser) nHat(nb Neighbours, count *countPlan) (float64, error) {
	p := nz.p
	n := float64(p.N)
	switch {
	case nb == AddRemove && count != nil:
		if p.noPrivacy {
			count.estimate(p.Rand, p.N) // the draw the private path makes
			return n, nil
		}
		return float64(count.estimate(p.Rand, p.N)), nil
	case nb == AddRemove:
		var ms, mv []float64
		for i, g := range nz.groups {
			if g.attrs != nil {
				ms, mv = append(ms, nz.sums[i]), append(mv, nz.sumVar[i])
			}
		}
		if len(ms) == 0 {
			return 0, fmt.Errorf("%w: add/remove neighbours need at least one marginal measurement to estimate n", ErrUnsupported)
		}
		if nz.prior != nil {
			ms, mv = append(ms, nz.prior.value), append(mv, nz.prior.variance)
		}
		return estimateN(ms, mv), nil
	}
	return n, nil
}

// estimateN estimates n from the noisy totals of marginal tables (each
// sums to n plus noise of the given variance): their inverse-variance
// weighted mean, at least 1. Post-processing of the measurements.
func estimateN(sums, vars []float64) float64 {
	num, den := 0.0, 0.0
	for i, s := range sums {
		num += s / vars[i]
		den += 1 / vars[i]
	}
	return max(num/den, 1)
}

// estimateNSE is the standard error of estimateN's mean for totals of
// these variances, 1/√(Σ 1/var).
func estimateNSE(vars []float64) float64 {
	den := 0.0
	for _, v := range vars {
		den += 1 / v
	}
	return 1 / math.Sqrt(den)
}

// stacked applies operators one above the other: the rows of ops[0], then
// ops[1], ...
type stacked struct {
	ops []Operator
	m   int
	tmp []float64
}

func stack(ops ...Operator) Operator {
	if len(ops) == 1 {
		return ops[0]
	}
	s := &stacked{ops: ops, tmp: make([]float64, ops[0].K())}
	for _, o := range ops {
		s.m += o.M()
	}
	return s
}

func (s *stacked) M() int { return s.m }
func (s *stacked) K() int { return s.ops[0].K() }
func (s *stacked) Answer(d, out []float64) {
	off := 0
	for _, o := range s.ops {
		o.Answer(d, out[off:off+o.M()])
		off += o.M()
	}
}
func (s *stacked) Adjoint(y, out []float64) {
	off := 0
	for i, o := range s.ops {
		if i == 0 {
			o.Adjoint(y[:o.M()], out)
		} else {
			o.Adjoint(y[off:off+o.M()], s.tmp)
			for c, v := range s.tmp {
				out[c] += v
			}
		}
		off += o.M()
	}
}
func (s *stacked) AddQuery(j int, a float64, x []float64) {
	for _, o := range s.ops {
		if j < o.M() {
			o.AddQuery(j, a, x)
			return
		}
		j -= o.M()
	}
	panic("solvers: stacked query index out of range")
}
func (s *stacked) Range(j int) (lo, hi float64) {
	for _, o := range s.ops {
		if j < o.M() {
			return o.Range(j)
		}
		j -= o.M()
	}
	panic("solvers: stacked query index out of range")
}

// downwardClosure returns every distinct attribute subset of the
// workload's marginal sets with exactly r attributes, in a deterministic
// order.
func downwardClosure(w *query.Workload, r int) [][]int {
	seen := map[string]bool{}
	var out [][]int
	for _, s := range w.Marginals() {
		subsets(s.Attrs, r, func(sub []int) {
			key := fmt.Sprint(sub)
			if !seen[key] {
				seen[key] = true
				out = append(out, append([]int(nil), sub...))
			}
		})
	}
	sort.Slice(out, func(i, j int) bool { return lessInts(out[i], out[j]) })
	return out
}

func lessInts(a, b []int) bool {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// subsets calls f with every r-subset of set (in increasing order; f must
// not keep the slice).
func subsets(set []int, r int, f func([]int)) {
	cur := make([]int, 0, r)
	var rec func(start int)
	rec = func(start int) {
		if len(cur) == r {
			f(cur)
			return
		}
		for i := start; i <= len(set)-(r-len(cur)); i++ {
			cur = append(cur, set[i])
			rec(i + 1)
			cur = cur[:len(cur)-1]
		}
	}
	rec(0)
}

// cellsOf is the number of cells of a marginal over attrs.
func cellsOf(d *universe.Domain, attrs []int) int {
	c := 1
	for _, a := range attrs {
		c *= d.Attr(a).Size()
	}
	return c
}
