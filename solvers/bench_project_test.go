package solvers

import (
	"testing"
	"time"

	"github.com/dpsynth/synth/internal/par"
)

// BenchmarkProjectStep times one step of the project solver's fit (tuned,
// ε = 1: the measured 2- and 3-way marginals of adult-reduced, or the 2-
// and 3-way closure of the 10^7-cell case's 50 sets): the fused
// mirror-descent step and Armijo test (with its share of rejected trials),
// Answer and Adjoint of the measurement operator, and the SURE shadows'
// steps; each trial in one pass over the universe (the operator's
// AdjointMapAnswer, as releases run it) and in three (Adjoint, the step,
// Answer). Against one plain read of a k-vector in the same run:
//
//	go test ./solvers -run '^$' -bench ProjectStep -benchtime 50x -count 3
func BenchmarkProjectStep(b *testing.B) {
	for _, bc := range amBenchCases {
		for _, passes := range []string{"one-pass", "three-passes"} {
			b.Run(bc.name+"/"+passes, func(b *testing.B) {
				benchProjectStep(b, bc, passes == "three-passes")
			})
		}
	}
}

// plainOperator hides an operator's one-pass step (mapAnswerer) from the
// fit.
type plainOperator struct{ Operator }

func benchProjectStep(b *testing.B, bc amBenchCase, threePasses bool) {
	fx := bc.fixture(b)
	p, ms := fx.measured(b, 1, 1)
	team := par.NewTeam(0)
	defer team.Close()
	op := ms.op
	if threePasses {
		op = plainOperator{op}
	}
	f := newLSFit(op, ms.y, ms.w, team)
	f.start(nil)
	f.useSURE(p.Rand.NormFloat64, 0.01, 1<<30)
	for range 5 { // warm up: first-call allocations, a step size near its working value
		f.stepOnce()
	}
	f.sure.history = make([]float64, 0, 1<<20)
	f.sure.elapsed = make([]time.Duration, 0, 1<<20)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f.stepOnce()
	}
	readRatio(b, p.Op.K())
}
