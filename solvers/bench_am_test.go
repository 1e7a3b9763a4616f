package solvers

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats"

	"github.com/dpsynth/synth/privacy"
	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// Benchmarks of one DPAM iteration and one MWEM round, against one plain
// sequential read of a k-vector (gonum's assembly floats.Sum) timed right
// after the loop, as in query/bench_test.go. Run with
//
//	go test ./solvers -run '^$' -bench 'DPAMIter|MWEMRound' -benchtime 20x -count 3
//
// docs/BENCHMARKS.md "### dpam" and "### mwem" record the figures.

type amBenchCase struct {
	name    string
	fixture func(testing.TB) *fixture
}

var amBenchCases = []amBenchCase{
	// All 35 3-way marginals of adult-reduced, k = 336,000 (the real data).
	{"adult-reduced-3way", adultReduced},
	// 10^7 cells, 50 of its 120 3-way marginals (the operator benchmark's
	// synthetic case), with 100,000 records drawn from a fixed skewed
	// distribution (the data only moves the selections, not the cost).
	{"synthetic-1e7-50sets", synthetic1e7},
}

func synthetic1e7(tb testing.TB) *fixture {
	fixtureMu.Lock()
	if f, ok := fixtureCache["synthetic-1e7"]; ok {
		fixtureMu.Unlock()
		return f
	}
	fixtureMu.Unlock()
	dom, err := universe.ParseDomain([]byte(`{"a": 2, "b": 5, "c": 2, "d": 5, "e": 10, "f": 10, "g": 4, "h": 5, "i": 5, "j": 10}`))
	if err != nil {
		tb.Fatal(err)
	}
	wl, err := query.SampleKWay(dom, 3, 50, 1)
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	counts := universe.NewCounts(dom)
	codes := make([]int, dom.Len())
	for range 100000 {
		for i, size := range dom.Sizes() {
			// A geometric-like skew: small codes are more frequent.
			codes[i] = min(int(r.ExpFloat64()*float64(size)/3), size-1)
		}
		if err := counts.Add(codes, 1); err != nil {
			tb.Fatal(err)
		}
	}
	fx := &fixture{name: "synthetic-1e7", dom: dom, counts: counts, wl: wl, answers: wl.AnswerCounts(counts, make([]float64, wl.M()))}
	fixtureMu.Lock()
	fixtureCache["synthetic-1e7"] = fx
	fixtureMu.Unlock()
	return fx
}

// readRatio reports ns per cell of the timed loop, of as many plain reads
// of a k-vector timed right after it, and their ratio.
func readRatio(b *testing.B, k int) {
	el := b.Elapsed()
	b.StopTimer()
	d := make([]float64, k)
	for i := range d {
		d[i] = 1 / float64(k)
	}
	start := time.Now()
	s := 0.0
	for range b.N {
		s += floats.Sum(d)
	}
	read := float64(time.Since(start).Nanoseconds()) / float64(b.N) / float64(k)
	op := float64(el.Nanoseconds()) / float64(b.N) / float64(k)
	if s < 0 {
		b.Log(s)
	}
	b.ReportMetric(op, "ns/cell")
	b.ReportMetric(read, "read-ns/cell")
	b.ReportMetric(op/read, "x-read")
}

// BenchmarkDPAMIter times one DPAM iteration (tuned, with noise: the
// Gaussian vector, the mix pass, the oracle's Answer and selection, the
// prox update and the exponential pass; the trace's error pass is off),
// and, in the same run, the Gaussian vector alone (privacy.GaussianVector,
// the part of the iteration that is not this package's).
func BenchmarkDPAMIter(b *testing.B) {
	for _, bc := range amBenchCases {
		b.Run(bc.name, func(b *testing.B) {
			fx := bc.fixture(b)
			p := fx.problem(b, 1, 1e-9, 1)
			s := &DPAM{T: 100, Alpha: 0.01}
			run, err := s.derive(&p.Shape, p.Op, false)
			if err != nil {
				b.Fatal(err)
			}
			st := newDPAMState(run, p, -1, false)
			defer st.team.Close()
			st.step(1) // first-call allocations (GaussianVector's state)
			b.Run("iteration", func(b *testing.B) {
				st.res.Trace = make([]Step, 0, b.N+1)
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					st.step(2 + i%99)
				}
				readRatio(b, p.Op.K())
			})
			b.Run("gaussian-vector", func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					privacy.GaussianVector(p.Rand, st.sigma, st.v)
				}
				readRatio(b, p.Op.K())
			})
		})
	}
}

// BenchmarkMWEMRound times one MWEM round (tuned at ε = 1: Answer, the
// exponential mechanism over the m queries, one discrete Gaussian count, 10
// sequential multiplicative-weights sweeps over all measured queries) from
// the middle of a run (T/2 untimed rounds first, as the fit's cost grows
// with the number of measured queries), and, in the same run, the
// selection alone (Answer and the exponential mechanism).
func BenchmarkMWEMRound(b *testing.B) {
	for _, bc := range amBenchCases {
		b.Run(bc.name, func(b *testing.B) {
			fx := bc.fixture(b)
			p := fx.problem(b, 1, 1e-9, 1)
			s := &MWEM{TraceEvery: -1}
			run, err := s.derive(&p.Shape, false)
			if err != nil {
				b.Fatal(err)
			}
			st, err := newMWEMState(run, p, -1, 0)
			if err != nil {
				b.Fatal(err)
			}
			warm := run.T / 2
			for t := 1; t <= warm; t++ {
				st.step(t)
			}
			b.Logf("T = %d, %d rounds before timing, %d distinct queries measured", run.T, warm, len(st.order))
			b.Run("round", func(b *testing.B) {
				b.ReportAllocs()
				for i := range b.N {
					st.step(warm + 1 + i%(run.T-warm))
				}
				readRatio(b, p.Op.K())
			})
			b.Run("select", func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					p.Op.Answer(st.w, st.ans)
					for j, a := range p.Answers {
						st.score[j] = math.Abs(a - st.ans[j]/st.z)
					}
					privacy.ExponentialMechanism(p.Rand, st.score, run.eps0, run.sens)
				}
				readRatio(b, p.Op.K())
			})
		})
	}
}

// TestStepAllocs: an iteration of DPAM and a round of MWEM allocate
// nothing (after the first, which sets up the Gaussian vector's state), on
// the small fixture and, outside -short, on adult-reduced, where the
// passes run on both cores.
func TestStepAllocs(t *testing.T) {
	fixtures := []func(testing.TB) *fixture{small}
	if !testing.Short() {
		fixtures = append(fixtures, adultReduced)
	}
	for _, f := range fixtures {
		fx := f(t)
		p := fx.problem(t, 1, 1e-9, 1)
		s := &DPAM{T: 200, Alpha: 0.01}
		run, err := s.derive(&p.Shape, p.Op, false)
		if err != nil {
			t.Fatal(err)
		}
		st := newDPAMState(run, p, 3, false)
		st.step(1)
		it := 2
		if a := testing.AllocsPerRun(50, func() { st.step(it); it++ }); a != 0 {
			t.Errorf("%s: DPAM iteration: %v allocations, want 0", fx.name, a)
		}
		st.team.Close()
		p = fx.problem(t, 1, 1e-9, 1)
		ms := &MWEM{T: 100}
		mrun, err := ms.derive(&p.Shape, false)
		if err != nil {
			t.Fatal(err)
		}
		mst, err := newMWEMState(mrun, p, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		mst.step(1)
		r := 2
		if a := testing.AllocsPerRun(50, func() { mst.step(r); r++ }); a != 0 {
			t.Errorf("%s: MWEM round: %v allocations, want 0", fx.name, a)
		}
	}
}
