package solvers

import (
	"math"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/internal/vec"
)

// fwExp is the per-iteration pass of the entropic solvers (DPFW, SMD) over
// the universe. Their log-weights are kept as θ = c·φ with a lazy scale
// factor c > 0, so that shrinking θ by (1 − γ) is O(1); one call of run
// writes the unnormalised weights e_i = exp(c·φ_i − shift) and returns
// their sum and the exact max of c·φ, in a single parallel read of φ. The
// weights are never normalised inside the loop: the operator is linear, so
// the answers of softmax(θ) are Answer(e)/Σe.
//
// shift is an upper bound on max(c·φ) that the caller tracks across
// iterations (the exact max of the previous pass plus the largest possible
// increase of the step in between), so no separate max pass is needed. If
// the bound might be loose by more than fwMaxSlack the caller asks for an
// exact max pass first (exact = true), so the largest weight is never below
// e^−fwMaxSlack and the sum never underflows.
//
// With acc set, the pass also adds accW·e_old to acc before overwriting e
// (SMD's running average of its iterates, one iteration behind).
type fwExp struct {
	team *par.Team
	phi  []float64
	e    []float64
	acc  []float64
	c    float64
	// per-pass inputs
	shift, accW float64
	phase       int
	// per-worker outputs
	sum, mx []float64
}

// fwMaxSlack bounds how far the shift may lie above the true max of c·φ:
// e^−500 is far from underflow (e^−708), and a cell 200 below the max
// still keeps a weight above e^−700.
const fwMaxSlack = 500

// fwChunk is the grain of the parallel split.
const fwChunk = 512

func newFWExp(team *par.Team, phi, e []float64) *fwExp {
	w := team.Workers()
	return &fwExp{team: team, phi: phi, e: e, c: 1, sum: make([]float64, w), mx: make([]float64, w)}
}

// maxPass returns the exact max of c·φ.
func (f *fwExp) maxPass() float64 {
	f.phase = 0
	for i := range f.mx {
		f.mx[i] = math.Inf(-1)
	}
	f.team.For(len(f.phi), fwChunk, f)
	mx := math.Inf(-1)
	for _, v := range f.mx {
		mx = max(mx, v)
	}
	return f.c * mx
}

// run writes e = exp(c·φ − shift) and returns Σe and the exact max of c·φ.
func (f *fwExp) run(shift float64) (sum, maxTheta float64) {
	f.shift = shift
	f.phase = 1
	clear(f.sum)
	for i := range f.mx {
		f.mx[i] = math.Inf(-1)
	}
	f.team.For(len(f.phi), fwChunk, f)
	mx := math.Inf(-1)
	for w := range f.sum {
		sum += f.sum[w]
		mx = max(mx, f.mx[w])
	}
	return sum, f.c * mx
}

// Run implements par.Job.
func (f *fwExp) Run(w, lo, hi int) {
	switch f.phase {
	case 0:
		m := math.Inf(-1)
		for _, v := range f.phi[lo:hi] {
			m = max(m, v)
		}
		f.mx[w] = m
	case 1:
		if f.acc != nil {
			acc, e, a := f.acc[lo:hi], f.e[lo:hi], f.accW
			for i, v := range e {
				acc[i] += a * v
			}
		}
		s, m := vec.ExpScaleShiftSum(f.e[lo:hi], f.phi[lo:hi], f.c, f.shift)
		f.sum[w] += s
		f.mx[w] = max(f.mx[w], m)
	case 2:
		// Rescale φ by c (when c is about to underflow).
		vec.Scale(f.phi[lo:hi], f.c)
	}
}

// rescale folds c into φ (φ ← c·φ, c ← 1). It costs one pass; the solvers
// call it only when c falls below fwMinScale.
func (f *fwExp) rescale() {
	f.phase = 2
	f.team.For(len(f.phi), fwChunk, f)
	f.c = 1
}

// fwMinScale is the smallest lazy scale factor kept before folding it into
// φ: the increments added to φ grow as 1/c, and this keeps them far from
// overflow.
const fwMinScale = 1e-100

// fwNormalize writes out = e/sum (out may be e).
func fwNormalize(team *par.Team, e, out []float64, sum float64) {
	j := fwScaleJob{src: e, dst: out, a: 1 / sum}
	team.For(len(e), fwChunk, &j)
}

type fwScaleJob struct {
	src, dst []float64
	a        float64
}

func (j *fwScaleJob) Run(_, lo, hi int) {
	src, dst, a := j.src[lo:hi], j.dst[lo:hi], j.a
	for i, v := range src {
		dst[i] = a * v
	}
}
