package solvers

import (
	"errors"
	"math"

	"github.com/dpsynth/synth/query"
)

// fwGeometry is the public geometry of a workload that DPFW and SMD need:
// computed from the workload's structure alone, never from data.
type fwGeometry struct {
	// k is the universe size on the explicit model (0 on the factored one,
	// whose universe need not fit an int); lnk is ln k on both.
	k, m int
	lnk  float64
	// R is the largest range max q_j − min q_j over the queries (1 for
	// counting queries of weight 1): under replace-one neighbours with n
	// public, the answer ⟨q_j, P_n⟩ and the score ±⟨q_j, P_n − D⟩ of either
	// sign move by at most R/n.
	R float64
	// A is the largest absolute value max_j max(|min q_j|, |max q_j|) (1 for
	// counting queries of weight 1): a record added or removed moves
	// ⟨q_j, counts⟩ by q_j(z), at most A, so under add/remove neighbours
	// with units of up to K records an answer or score ⟨q_j, counts⟩/n̂ moves
	// by at most K·A/n̂.
	A float64
	// D1 and DInf are the diameters of the query hull conv(Q ∪ −Q) in ℓ1
	// and ℓ∞ (seed 001, L125): max over vertex pairs of ‖v − v'‖, attained
	// by a query and its negation, so D1 = 2·max_j ‖q_j‖₁ and DInf =
	// 2·max_j ‖q_j‖∞.
	D1, DInf float64
	// D1Exact is false when some query is not a marginal cell: its ‖q_j‖₁
	// is then bounded by weight·k (the workload does not expose the size of
	// a range's or predicate's support), which can only enlarge D1.
	D1Exact bool
}

func newFWGeometry(w *query.Workload) (fwGeometry, error) {
	k64, ok := w.Domain().Size()
	if !ok || k64 == 0 || k64 > uint64(math.MaxInt) {
		return fwGeometry{}, errors.New("solvers: the universe is not explicit (too many cells for a dense distribution)")
	}
	g := fwGeometry{k: int(k64), m: w.M(), D1Exact: true, lnk: math.Log(float64(k64))}
	return g, g.fill(w, float64(k64))
}

// newFWGeometryFactored is the geometry of a workload on the factored
// model: no explicit universe (k = 0), ln k summed over the attributes.
func newFWGeometryFactored(w *query.Workload) (fwGeometry, error) {
	lnk := 0.0
	for _, s := range w.Domain().Sizes() {
		lnk += math.Log(float64(s))
	}
	g := fwGeometry{m: w.M(), D1Exact: true, lnk: lnk}
	return g, g.fill(w, math.Exp(lnk))
}

// fill computes R and the diameters over a universe of k cells.
func (g *fwGeometry) fill(w *query.Workload, k float64) error {
	if g.m == 0 {
		return errors.New("solvers: the workload has no queries")
	}
	marg := w.Marginals()
	for j := 0; j < g.m; j++ {
		lo, hi := w.Range(j)
		g.R = max(g.R, hi-lo)
		g.A = max(g.A, math.Abs(lo), math.Abs(hi))
		g.DInf = max(g.DInf, 2*math.Max(math.Abs(lo), math.Abs(hi)))
		var norm1 float64
		if s := w.MarginalOf(j); s >= 0 {
			norm1 = marg[s].Weight * k / float64(marg[s].Cells)
		} else {
			norm1 = w.Weight(j) * k
			g.D1Exact = false
		}
		g.D1 = max(g.D1, 2*norm1)
	}
	return nil
}

// sensitivity is the per-step score sensitivity R/n (1/n if every query is
// constant, so that it is never zero).
func (g *fwGeometry) sensitivity(n int) float64 {
	r := g.R
	if r == 0 {
		r = 1
	}
	return r / float64(n)
}

// scoreSensitivity is the per-step sensitivity of an answer or score
// ⟨q_j, counts⟩/n on n (public) records under the shape's relation: R/n
// under replace-one, K·A/n under add/remove (n = n̂ there). Neither is ever
// zero (constant queries count as range 1).
func (g *fwGeometry) scoreSensitivity(sh *Shape, n int) float64 {
	if sh.Neighbours != AddRemove {
		return g.sensitivity(n)
	}
	a := g.A
	if a == 0 {
		a = 1
	}
	return float64(sh.Unit()) * a / float64(n)
}

// shapeGeometry is the geometry of a shape's workload on its model; the
// factored model takes marginal families only.
func shapeGeometry(sh *Shape, solver string) (fwGeometry, error) {
	if sh.Model != Factored {
		return newFWGeometry(sh.Workload)
	}
	if err := factoredFamilies(sh.Workload, solver); err != nil {
		return fwGeometry{}, err
	}
	return newFWGeometryFactored(sh.Workload)
}

// kParam is the universe size for Plan.Params (e^lnk on the factored
// model).
func (g *fwGeometry) kParam() float64 {
	if g.k == 0 {
		return math.Exp(g.lnk)
	}
	return float64(g.k)
}
