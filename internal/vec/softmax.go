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
	lz, _ := j.run(len(theta), false)
	return lz
}

// Step computes the trial point of one step of entropic mirror descent
// (exponentiated gradient) kept in log-weights θ:
//
//	θ2 = θ − s·g,   d2 = softmax(θ2),   dot = Σ_i g_i·(d_i − d2_i),
//
// where d = softmax(θ) is the current distribution and dot is the
// first-order decrease that an Armijo test compares with the decrease of
// the loss. It touches the k-vectors in two parallel passes instead of
// five: per chunk, θ2 and its maximum, then the exponentials shifted by
// that maximum and their sum; then the rescaling of each chunk to the
// global maximum and the normalisation, with the dot product of the
// rescaled values. Step allocates only when called with a longer vector
// than any before (per-chunk statistics).
type Step struct {
	job mdJob
}

// NewStep returns a mirror-descent step kernel running on team.
func NewStep(team *par.Team) *Step {
	return &Step{job: mdJob{team: team}}
}

// Apply writes θ2 = θ − s·g into theta2 (s·g rounded before the
// subtraction) and softmax(θ2) into d2, and returns log Σ e^θ2 and, if d
// is not nil, Σ g·(d − d2) (else 0). All slices have one length; theta2
// may be theta, but d2 must not share memory with theta2, grad or d. It
// panics if θ2 holds a NaN or +Inf, or only −Inf.
func (st *Step) Apply(theta2, theta, grad []float64, s float64, d, d2 []float64) (logZ, dot float64) {
	k := len(theta)
	if len(theta2) != k || len(grad) != k || len(d2) != k || d != nil && len(d) != k {
		panic("vec: Step with different lengths")
	}
	j := &st.job
	j.theta2, j.theta, j.grad, j.s, j.d, j.d2 = theta2, theta, grad, s, d, d2
	defer j.reset()
	return j.run(k, true)
}

// mdJob runs Softmax and Step on a team.
type mdJob struct {
	team *par.Team

	// The current call. Softmax reads theta and writes d2; Step reads
	// theta, grad and d and writes theta2 and d2.
	theta2, theta, grad, d, d2 []float64
	s                          float64
	step                       bool

	pass int
	// Per chunk: maximum, sum of the shifted exponentials, then the scale
	// of pass 2 (in sum) and the dot product (in dot).
	mx, sum, dot []float64
}

func (j *mdJob) reset() {
	j.theta2, j.theta, j.grad, j.d, j.d2 = nil, nil, nil, nil, nil
}

// run does the two passes over k cells and returns log Σ e^θ and the dot
// product.
func (j *mdJob) run(k int, step bool) (logZ, dot float64) {
	nc := (k + chunk - 1) / chunk
	if len(j.mx) < nc {
		j.mx = make([]float64, nc)
		j.sum = make([]float64, nc)
		j.dot = make([]float64, nc)
	}
	j.step = step
	j.pass = 0
	j.team.For(k, chunk, j)
	mx := math.Inf(-1)
	for _, v := range j.mx[:nc] {
		mx = max(mx, v)
	}
	switch {
	case math.IsNaN(mx) || math.IsInf(mx, 1):
		panic("vec: softmax of a vector holding NaN or +Inf")
	case math.IsInf(mx, -1):
		panic("vec: softmax of a vector whose entries are all −Inf (or empty)")
	}
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
	j.pass = 1
	j.team.For(k, chunk, j)
	if step && j.d != nil {
		for _, v := range j.dot[:nc] {
			dot += v
		}
	}
	return mx + math.Log(z), dot
}

// Run implements par.Job; lo is a multiple of chunk.
func (j *mdJob) Run(_, lo, hi int) {
	for c0 := lo; c0 < hi; c0 += chunk {
		c1 := min(c0+chunk, hi)
		c := c0 / chunk
		e := j.d2[c0:c1]
		if j.pass == 1 {
			if j.step && j.d != nil {
				j.dot[c] = scaleDot(e, j.grad[c0:c1], j.d[c0:c1], j.sum[c])
			} else {
				Scale(e, j.sum[c])
			}
			continue
		}
		var t []float64
		var m float64
		if j.step {
			t = j.theta2[c0:c1]
			m = subScaledMax(t, j.theta[c0:c1], j.grad[c0:c1], j.s)
		} else {
			t = j.theta[c0:c1]
			m = maxOf(t)
		}
		j.mx[c] = m
		if math.IsInf(m, -1) { // the chunk is all −Inf (or NaN, caught by the sum)
			for i, v := range t {
				e[i] = 0
				if v != v {
					e[i] = v // caught by the sum
				}
			}
			j.sum[c] = sumOf(e)
			continue
		}
		j.sum[c] = ExpShiftSum(e, t, m)
	}
}

func sumOf(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}
