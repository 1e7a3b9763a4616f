package vec

import (
	"math"

	"github.com/dpsynth/synth/internal/par"
)

// ExpShiftSum writes dst[i] = e^(src[i]-shift) and returns their sum: the
// inner kernel of Softmax, with Exp inlined so that the independent
// evaluations overlap.
func ExpShiftSum(dst, src []float64, shift float64) float64 {
	dst = dst[:len(src)]
	var s0, s1 float64
	i := 0
	for ; i+1 < len(src); i += 2 {
		x0, x1 := src[i]-shift, src[i+1]-shift
		var e0, e1 float64
		if x0 > expLo && x0 <= expHi && x1 > expLo && x1 <= expHi {
			e0, e1 = expCore(x0), expCore(x1)
		} else {
			e0, e1 = Exp(x0), Exp(x1)
		}
		dst[i], dst[i+1] = e0, e1
		s0 += e0
		s1 += e1
	}
	for ; i < len(src); i++ {
		e := Exp(src[i] - shift)
		dst[i] = e
		s0 += e
	}
	return s0 + s1
}

// Softmax computes out = softmax(theta) = e^theta / Σ e^theta and returns
// log Σ e^theta (the log-partition function), in three parallel passes
// (max, exponentials and their sum, scaling). It never overflows: the
// exponentials are taken of theta - max(theta). theta and out may be the
// same slice. It panics if theta holds a NaN or +Inf.
type Softmax struct {
	team  *par.Team
	part  []float64
	theta []float64
	out   []float64
	phase int
	shift float64
}

// NewSoftmax returns a softmax kernel running on team.
func NewSoftmax(team *par.Team) *Softmax {
	return &Softmax{team: team, part: make([]float64, team.Workers())}
}

const grain = 512

// Apply writes softmax(theta) into out and returns log Σ e^theta.
func (s *Softmax) Apply(theta, out []float64) float64 {
	if len(theta) != len(out) {
		panic("vec: Softmax with different lengths")
	}
	s.theta, s.out = theta, out
	defer func() { s.theta, s.out = nil, nil }()
	s.phase = 0
	for i := range s.part {
		s.part[i] = math.Inf(-1)
	}
	s.team.For(len(theta), grain, s)
	mx := math.Inf(-1)
	for _, v := range s.part {
		mx = max(mx, v)
	}
	if math.IsNaN(mx) || math.IsInf(mx, 1) {
		panic("vec: Softmax of a vector holding NaN or +Inf")
	}
	if math.IsInf(mx, -1) { // all -Inf: empty support
		panic("vec: Softmax of a vector whose entries are all -Inf")
	}
	s.shift = mx
	s.phase = 1
	clear(s.part)
	s.team.For(len(theta), grain, s)
	sum := 0.0
	for _, v := range s.part {
		sum += v
	}
	s.shift = 1 / sum
	s.phase = 2
	s.team.For(len(theta), grain, s)
	return mx + math.Log(sum)
}

// Run implements par.Job.
func (s *Softmax) Run(w, lo, hi int) {
	switch s.phase {
	case 0:
		m := math.Inf(-1)
		for _, v := range s.theta[lo:hi] {
			if v > m || v != v {
				m = v
				if v != v {
					break
				}
			}
		}
		s.part[w] = m
	case 1:
		s.part[w] = ExpShiftSum(s.out[lo:hi], s.theta[lo:hi], s.shift)
	case 2:
		Scale(s.out[lo:hi], s.shift)
	}
}

// Scale multiplies x by a in place.
func Scale(x []float64, a float64) {
	for i := range x {
		x[i] *= a
	}
}
