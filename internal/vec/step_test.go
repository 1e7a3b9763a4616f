package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats"

	"github.com/dpsynth/synth/internal/par"
)

// stepRef is the straightforward mirror-descent trial step: θ2 = θ − s·g
// and d2 = e^(θ2 − max)/Σ, with math.Exp.
func stepRef(theta, grad []float64, s float64) (theta2, d2 []float64, logZ, mx float64) {
	k := len(theta)
	theta2, d2 = make([]float64, k), make([]float64, k)
	mx = math.Inf(-1)
	for i := range theta {
		theta2[i] = theta[i] - s*grad[i]
		mx = max(mx, theta2[i])
	}
	z := 0.0
	for i, v := range theta2 {
		d2[i] = math.Exp(v - mx)
		z += d2[i]
	}
	for i := range d2 {
		d2[i] /= z
	}
	return theta2, d2, mx + math.Log(z), mx
}

// TestStep: Step.Apply's θ2 is exact, and z·e is the softmax of θ2 to the
// exponential's accuracy, with the shift at the current log-partition
// function (the fit's use), at 0, and far enough off either way that the
// second pass runs; in place (theta2 = theta) it gives the same.
func TestStep(t *testing.T) {
	forPaths(t, func(t *testing.T) {
		for _, workers := range []int{1, 2} {
			team := par.NewTeam(workers)
			st := NewStep(team)
			for _, k := range []int{1, 7, 8, 1023, 1025, 3*chunk + 5, par.MinParallel*2 + 13} {
				for _, shape := range []string{"normal", "wide", "zeros"} {
					r := rand.New(rand.NewPCG(uint64(k), 3))
					theta, grad := make([]float64, k), make([]float64, k)
					for i := range theta {
						theta[i] = r.NormFloat64()
						grad[i] = r.NormFloat64()
						switch shape {
						case "wide": // log-weights spread over hundreds: many values underflow
							theta[i] *= 300
						case "zeros": // structural zeros, including a whole chunk
							if i%3 == 0 || i >= chunk && i < 2*chunk {
								theta[i] = math.Inf(-1)
							}
						}
					}
					if shape == "zeros" {
						theta[k-1] = 0 // at least one finite cell
					}
					lz0 := NewSoftmax(team).Apply(theta, make([]float64, k))
					const s = 0.7
					want2, wantD, wantZ, mx := stepRef(theta, grad, s)
					for _, shift := range []float64{lz0, 0, lz0 + 1000, lz0 - 1000} {
						name := fmt.Sprintf("workers=%d/k=%d/%s/shift=%g", workers, k, shape, shift)
						// The exponentials round x = θ2 − c (e^x has condition
						// number |x|), with c the shift, or the maximum when the
						// shift is more than shiftRange from it.
						off := math.Abs(mx - shift)
						if off > shiftRange {
							off = 0
						}
						theta2, e := make([]float64, k), make([]float64, k)
						lz, z := st.Apply(theta2, theta, grad, s, shift, e)
						for i := range theta2 {
							if theta2[i] != want2[i] && !(math.IsInf(want2[i], -1) && math.IsInf(theta2[i], -1)) {
								t.Fatalf("%s: theta2[%d] = %v, want %v", name, i, theta2[i], want2[i])
							}
							if tol := (1e-14 + 4e-16*(math.Abs(want2[i]-mx)+off)) * wantD[i]; math.Abs(z*e[i]-wantD[i]) > tol+1e-300 {
								t.Fatalf("%s: z·e[%d] = %v, want %v", name, i, z*e[i], wantD[i])
							}
						}
						if math.Abs(lz-wantZ) > 1e-13*(1+math.Abs(wantZ)) {
							t.Errorf("%s: logZ = %v, want %v", name, lz, wantZ)
						}
						th := append([]float64(nil), theta...)
						e2 := make([]float64, k)
						lz2, z2 := st.Apply(th, th, grad, s, shift, e2)
						if lz2 != lz || z2 != z || !slices.Equal(e2, e) || !slices.Equal(th, theta2) {
							t.Errorf("%s: in place: logZ %v, z %v; want %v, %v and the same vectors", name, lz2, z2, lz, z)
						}
					}
				}
			}
			team.Close()
		}
	})
}

func TestStepPanics(t *testing.T) {
	team := par.NewTeam(1)
	st := NewStep(team)
	inf := math.Inf(1)
	for _, tt := range []struct {
		name  string
		theta []float64
	}{
		{"NaN", []float64{0, math.NaN(), 1}},
		{"+Inf", []float64{0, inf, 1}},
		{"all -Inf", []float64{-inf, -inf}},
		{"NaN in a -Inf chunk", append(make([]float64, chunk), math.NaN())},
	} {
		if tt.name == "NaN in a -Inf chunk" {
			for i := range chunk {
				tt.theta[i] = -inf
			}
			tt.theta = append(tt.theta, 5)
		}
		k := len(tt.theta)
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Step.Apply with %s did not panic", tt.name)
				}
			}()
			st.Apply(make([]float64, k), tt.theta, make([]float64, k), 1, 0, make([]float64, k))
		}()
	}
	for _, shift := range []float64{math.NaN(), inf, -inf} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Step.Apply with shift %v did not panic", shift)
				}
			}()
			st.Apply(make([]float64, 2), make([]float64, 2), make([]float64, 2), 1, shift, make([]float64, 2))
		}()
	}
}

func TestStepAllocs(t *testing.T) {
	team := par.NewTeam(2)
	defer team.Close()
	st := NewStep(team)
	k := 1 << 17
	theta, grad, theta2, e := make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
	st.Apply(theta2, theta, grad, 1, 0, e)
	if a := testing.AllocsPerRun(20, func() { st.Apply(theta2, theta, grad, 1, 0, e) }); a != 0 {
		t.Errorf("Step.Apply allocates %v times per call, want 0", a)
	}
}

// BenchmarkStep times Step.Apply (one mirror-descent trial step, its
// normalisation left to the caller, shifted by the current log-partition
// function as the fit does) and, for comparison, the same step done by
// the separate kernels (θ2 = θ − s·g, then Softmax.Apply: three passes),
// each against as many plain reads of one k-vector (gonum's floats.Sum,
// one core) timed right after it: ns/cell, read-ns/cell and x-read. Run
// with
//
//	go test ./internal/vec -run '^$' -bench 'Step|Softmax' -count 5
func BenchmarkStep(b *testing.B) {
	for _, k := range []int{336000, 10_000_000} {
		team := par.NewTeam(0)
		st := NewStep(team)
		theta, grad, d, theta2, d2 := make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
		r := rand.New(rand.NewPCG(1, 1))
		for i := range theta {
			theta[i] = r.NormFloat64()
			grad[i] = r.NormFloat64()
		}
		lz := NewSoftmax(team).Apply(theta, d)
		st.Apply(theta2, theta, grad, 0.1, lz, d2) // per-chunk statistics allocated once
		b.Run(fmt.Sprintf("k=%d/fused", k), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuNanos()
			for b.Loop() {
				_, z := st.Apply(theta2, theta, grad, 0.1, lz, d2)
				sink += z
			}
			readRatio(b, k, d, cpu0)
		})
		b.Run(fmt.Sprintf("k=%d/separate", k), func(b *testing.B) {
			sm := NewSoftmax(team)
			var sj subJob
			sj.t2, sj.t, sj.g, sj.s = theta2, theta, grad, 0.1
			sm.Apply(theta2, d2) // per-chunk statistics allocated once
			b.ReportAllocs()
			cpu0 := cpuNanos()
			for b.Loop() {
				team.For(k, 512, &sj)
				sink += sm.Apply(theta2, d2)
			}
			readRatio(b, k, d, cpu0)
		})
		team.Close()
	}
}

// readRatio reports the benchmark's ns per cell, the ns per cell of b.N
// plain reads of x (one core) timed right after it, and their ratio, in
// wall time and in process CPU time since cpu0 (on a loaded machine the
// wall times include waiting for a core; with 2 workers the CPU times add
// up both cores' work).
func readRatio(b *testing.B, k int, x []float64, cpu0 int64) {
	op := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(k)
	opCPU := float64(cpuNanos()-cpu0) / float64(b.N) / float64(k)
	start, c0 := time.Now(), cpuNanos()
	for range b.N {
		sink += floats.Sum(x)
	}
	readCPU := float64(cpuNanos()-c0) / float64(b.N) / float64(k)
	read := float64(time.Since(start).Nanoseconds()) / float64(b.N) / float64(k)
	b.ReportMetric(op, "ns/cell")
	b.ReportMetric(read, "read-ns/cell")
	b.ReportMetric(op/read, "x-read")
	if readCPU > 0 {
		b.ReportMetric(opCPU, "cpu-ns/cell")
		b.ReportMetric(readCPU, "cpu-read-ns/cell")
		b.ReportMetric(opCPU/readCPU, "cpu-x-read")
	}
}

// subJob is the θ2 pass of the unfused step.
type subJob struct {
	t2, t, g []float64
	s        float64
}

func (j *subJob) Run(_, lo, hi int) {
	t2, t, g := j.t2[lo:hi], j.t[lo:hi], j.g[lo:hi]
	for i := range t2 {
		t2[i] = t[i] - j.s*g[i]
	}
}
