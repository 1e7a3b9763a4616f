package vec

import (
	"math"

	"github.com/dpsynth/synth/internal/par"
)

// chunk is the number of cells one kernel call handles while they sit in
// the L1 cache (8 KiB per vector). The softmax shifts each chunk's
// exponentials by the chunk's own maximum, so that one pass computes them
// all and one more pass rescales them to the global maximum and normalises.
const chunk = 1024

// Softmax computes out = softmax(theta) = e^theta / Σ e^theta and returns
// log Σ e^theta (the log-partition function), in two parallel passes:
// each chunk of theta gives its maximum and its exponentials shifted by it
// (the vector exponential of ExpShiftSum), then each chunk is rescaled to
// the global maximum and normalised. It never overflows. theta and out may
// be the same slice. It panics if theta holds a NaN or +Inf, or only −Inf.
//
// Apply allocates only when called with a longer vector than any before
// (per-chunk statistics).
type Softmax struct {
	job mdJob
}

// NewSoftmax returns a softmax kernel running on team.
func NewSoftmax(team *par.Team) *Softmax {
	return &Softmax{job: mdJob{team: team}}
}

// Apply writes softmax(theta) into out and returns log Σ e^theta.
func (s *Softmax) Apply(theta, out []float64) float64 {
	if len(theta) != len(out) {
		panic("vec: Softmax with different lengths")
	}
	j := &s.job
	j.theta, j.d2 = theta, out
	defer j.reset()
	return j.run(len(theta))
}

// Step computes the trial point of one step of entropic mirror descent
// (exponentiated gradient) kept in log-weights θ, in one parallel pass over
// the k-vectors:
//
//	θ2 = θ − s·g,   e = e^(θ2 − c),   softmax(θ2) = z·e with z = 1/Σ e,
//
// leaving the normalisation to the caller: the distribution is the pair
// (e, z), and a linear map of it is z times the map of e, so a fit that
// only answers linear queries of the distribution never rescales the
// k-vector. The shift c is the caller's guess of log Σ e^θ2, usually the
// current iterate's log-partition function: then Σ e is near 1. Per chunk
// the pass writes θ2 and its maximum while the chunk sits in the L1 cache,
// then the exponentials shifted by c and their sum. Where the guess is far
// off (the largest θ2 − c outside ±shiftRange, where e could overflow or
// lose the cells near the maximum), a second pass takes the exponentials
// again with c = max θ2. Step allocates only when called with a longer
// vector than any before (per-chunk statistics).
type Step struct {
	job mdJob
}

// shiftRange bounds how far Step's shift may sit from the largest θ2
// before it redoes the exponentials at the maximum: e^300 times any
// number of cells a machine holds is far from overflow, and a cell within
// e^−400 of the maximum keeps a normal exponential.
const shiftRange = 300

// NewStep returns a mirror-descent step kernel running on team.
func NewStep(team *par.Team) *Step {
	return &Step{job: mdJob{team: team}}
}

// Apply writes θ2 = θ − s·g into theta2 (s·g rounded before the
// subtraction) and e^(θ2 − c) into e for a shift c near shift, and returns
// log Σ e^θ2 and z = 1/Σ e, so that softmax(θ2) = z·e. All slices have one
// length; theta2 may be theta, but e must not share memory with theta2 or
// grad. It panics if θ2 holds a NaN or +Inf, or only −Inf, or if shift is
// not finite.
func (st *Step) Apply(theta2, theta, grad []float64, s, shift float64, e []float64) (logZ, z float64) {
	k := len(theta)
	if len(theta2) != k || len(grad) != k || len(e) != k {
		panic("vec: Step with different lengths")
	}
	if math.IsNaN(shift) || math.IsInf(shift, 0) {
		panic("vec: Step with a shift that is not finite")
	}
	j := &st.job
	j.theta2, j.theta, j.grad, j.s, j.d2, j.shift = theta2, theta, grad, s, e, shift
	defer j.reset()
	return j.runStep(k)
}

// Exp writes e^(θ − shift) into e, in parallel, and returns log Σ e^θ
// and z = 1/Σ e (Step's second pass, for TiledStep). e must not share
// memory with theta.
func (st *Step) Exp(theta []float64, shift float64, e []float64) (logZ, z float64) {
	if len(e) != len(theta) {
		panic("vec: Step.Exp with different lengths")
	}
	j := &st.job
	j.theta2, j.d2 = theta, e
	defer j.reset()
	nc := (len(theta) + chunk - 1) / chunk
	j.stats(nc)
	j.exps(len(theta), shift)
	return logSum(shift, j.sum[:nc])
}

// mdJob runs Softmax and Step on a team.
type mdJob struct {
	team *par.Team

	// The current call. Softmax reads theta and writes d2; Step reads
	// theta and grad and writes theta2 and d2.
	theta2, theta, grad, d2 []float64
	s, shift                float64

	pass int
	// Per chunk: maximum and sum of the shifted exponentials; Softmax's
	// second pass reads its scale from sum.
	mx, sum []float64
}

// The passes of an mdJob.
const (
	passSoftmaxExp   = iota // Softmax: each chunk's maximum and exponentials shifted by it
	passSoftmaxScale        // Softmax: each chunk rescaled to the global maximum and normalised
	passStep                // Step: θ2, each chunk's maximum, exponentials shifted by j.shift
	passStepExp             // Step, when the shift was far off: the exponentials of θ2 again, shifted by its maximum
)

func (j *mdJob) reset() {
	j.theta2, j.theta, j.grad, j.d2 = nil, nil, nil, nil
}

// stats makes sure the per-chunk statistics hold nc chunks.
func (j *mdJob) stats(nc int) {
	if len(j.mx) < nc {
		j.mx = make([]float64, nc)
		j.sum = make([]float64, nc)
	}
}

// globalMax is the largest chunk maximum; it panics where Softmax and Step
// are undefined.
func (j *mdJob) globalMax(nc int) float64 { return maxOfMaxima(j.mx[:nc]) }

// maxOfMaxima is the largest of the chunks' (or tiles') maxima mx; it
// panics where Softmax and Step are undefined: a NaN (TiledStep's mark of
// a tile that did not run, too) or +Inf, or only −Inf.
func maxOfMaxima(mx []float64) float64 {
	m := math.Inf(-1)
	for _, v := range mx {
		m = max(m, v) // NaN wins
	}
	switch {
	case math.IsNaN(m) || math.IsInf(m, 1):
		panic("vec: softmax of a vector holding NaN or +Inf")
	case math.IsInf(m, -1):
		panic("vec: softmax of a vector whose entries are all −Inf (or empty)")
	}
	return m
}

// run does Softmax's two passes over k cells and returns log Σ e^θ.
func (j *mdJob) run(k int) (logZ float64) {
	nc := (k + chunk - 1) / chunk
	j.stats(nc)
	j.pass = passSoftmaxExp
	j.team.For(k, chunk, j)
	mx := j.globalMax(nc)
	z := 0.0
	for c, s := range j.sum[:nc] {
		z += s * Exp(j.mx[c]-mx)
	}
	if math.IsNaN(z) {
		panic("vec: softmax of a vector holding NaN or +Inf")
	}
	for c := range j.sum[:nc] {
		j.sum[c] = Exp(j.mx[c]-mx) / z
	}
	j.pass = passSoftmaxScale
	j.team.For(k, chunk, j)
	return mx + math.Log(z)
}

// runStep does Step's pass over k cells (and the second one when the shift
// was far off) and returns log Σ e^θ2 and 1/Σ e.
func (j *mdJob) runStep(k int) (logZ, z float64) {
	nc := (k + chunk - 1) / chunk
	j.stats(nc)
	j.pass = passStep
	j.team.For(k, chunk, j)
	if mx := j.globalMax(nc); math.Abs(mx-j.shift) > shiftRange {
		j.exps(k, mx)
	}
	return logSum(j.shift, j.sum[:nc])
}

// exps is Step's second pass: the exponentials of θ2 over k cells again,
// shifted by shift.
func (j *mdJob) exps(k int, shift float64) {
	j.shift = shift
	j.pass = passStepExp
	j.team.For(k, chunk, j)
}

// logSum is log Σ e^θ2 and 1/Σ e from the chunks' (or tiles') sums of
// e = e^(θ2 − shift).
func logSum(shift float64, sums []float64) (logZ, z float64) {
	sum := 0.0
	for _, v := range sums {
		sum += v
	}
	if math.IsNaN(sum) {
		panic("vec: softmax of a vector holding NaN or +Inf")
	}
	return shift + math.Log(sum), 1 / sum
}

// Run implements par.Job; lo is a multiple of chunk.
func (j *mdJob) Run(_, lo, hi int) {
	for c0 := lo; c0 < hi; c0 += chunk {
		c1 := min(c0+chunk, hi)
		c := c0 / chunk
		e := j.d2[c0:c1]
		switch j.pass {
		case passSoftmaxExp:
			j.mx[c], j.sum[c] = expChunk(e, j.theta[c0:c1])
		case passSoftmaxScale:
			Scale(e, j.sum[c])
		case passStep:
			t := j.theta2[c0:c1]
			j.mx[c] = subScaledMax(t, j.theta[c0:c1], j.grad[c0:c1], j.s)
			j.sum[c] = ExpShiftSum(e, t, j.shift)
		case passStepExp:
			j.sum[c] = ExpShiftSum(e, j.theta2[c0:c1], j.shift)
		}
	}
}

// expChunk writes e^(t − max t) into e and returns max t and the sum; a
// chunk that is all −Inf has exponentials 0 (a NaN among them shows in the
// sum).
func expChunk(e, t []float64) (m, sum float64) {
	m = maxOf(t)
	if math.IsInf(m, -1) {
		for i, v := range t {
			e[i] = 0
			if v != v {
				e[i] = v // caught by the sum
			}
		}
		return m, sumOf(e)
	}
	return m, ExpShiftSum(e, t, m)
}

func sumOf(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}
