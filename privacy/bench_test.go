package privacy

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

// Benchmarks for docs/BENCHMARKS.md "Privacy samplers":
//
//	go test ./privacy -run '^$' -bench . -benchmem -cpu 1,2

var sink int64

func BenchmarkDiscreteLaplace(b *testing.B) {
	for _, scale := range []float64{1, 1000, 1e6, 1000.1} {
		b.Run(fmt.Sprintf("scale=%g", scale), func(b *testing.B) {
			d, err := NewDiscreteLaplace(scale)
			if err != nil {
				b.Fatal(err)
			}
			r := NewSeeded(1)
			b.ReportAllocs()
			for b.Loop() {
				sink += d.Sample(r)
			}
		})
	}
	b.Run("scale=big", func(b *testing.B) {
		s, _ := new(big.Rat).SetString("1180591620717411303425/295147905179352825856")
		d, _ := NewDiscreteLaplaceRat(s)
		r := NewSeeded(1)
		b.ReportAllocs()
		for b.Loop() {
			sink += d.Sample(r)
		}
	})
}

func BenchmarkDiscreteGaussian(b *testing.B) {
	// σ = 1, 1000 and 1e6 are integers (64-bit σ²); 3.7 and 327.3 have
	// 106-bit σ² numerators (big-integer acceptance test).
	for _, sigma := range []float64{1, 3.7, 327.3, 1000, 1e6} {
		b.Run(fmt.Sprintf("sigma=%g", sigma), func(b *testing.B) {
			g, err := NewDiscreteGaussian(sigma)
			if err != nil {
				b.Fatal(err)
			}
			r := NewSeeded(1)
			b.ReportAllocs()
			for b.Loop() {
				sink += g.Sample(r)
			}
		})
	}
}

func BenchmarkExponentialMechanism(b *testing.B) {
	scores := make([]float64, 30_000)
	for i := range scores {
		scores[i] = float64(i%997) / 997
	}
	r := NewSeeded(1)
	b.Run("gumbel/30000", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink += int64(ExponentialMechanism(r, scores, 0.01, 1.0/48842))
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(scores)), "ns/score")
	})
	b.Run("laplace-rnm/30000", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink += int64(ReportNoisyMaxLaplace(r, scores, 0.01, 1.0/48842, NonMonotone))
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(scores)), "ns/score")
	})
}

func BenchmarkGaussianVector(b *testing.B) {
	for _, k := range []int{336_000, 10_000_000} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			out := make([]float64, k)
			r := NewSeeded(1)
			GaussianVector(r, 1, out)
			b.SetBytes(int64(8 * k))
			b.ReportAllocs()
			for b.Loop() {
				GaussianVector(r, 0.0067, out)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(k), "ns/value")
		})
	}
}

// BenchmarkDiscreteGaussianVector is the exact alternative for DPAM:
// discrete Gaussian noise on integer counts (σ = nσ' ≈ 327 counts on
// adult-reduced), one core.
func BenchmarkDiscreteGaussianVector(b *testing.B) {
	const k = 336_000
	g, _ := NewDiscreteGaussian(327.3)
	counts := make([]int64, k)
	r := NewSeeded(1)
	b.ReportAllocs()
	for b.Loop() {
		g.AddTo(r, counts)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(k), "ns/value")
}

// BenchmarkConversions: the accountant's searches (not hot, but a ledger
// runs them on every charge).
func BenchmarkConversions(b *testing.B) {
	b.Run("RhoToDelta", func(b *testing.B) {
		for b.Loop() {
			_ = RhoToDelta(0.0149, 1)
		}
	})
	b.Run("EpsToRho", func(b *testing.B) {
		for b.Loop() {
			_ = EpsToRho(1, 1e-9, Tight)
		}
	})
}

// BenchmarkBaseline gives, in the same run, the costs the samplers are
// built from: one ChaCha8 word and Go's own rand.NormFloat64 over ChaCha8
// (to compare GaussianVector with).
func BenchmarkBaseline(b *testing.B) {
	b.Run("chacha8-uint64", func(b *testing.B) {
		r := NewSeeded(1)
		var s uint64
		for b.Loop() {
			s += r.Uint64()
		}
		sink += int64(s)
	})
	b.Run("stdlib-normfloat64", func(b *testing.B) {
		r := rand.New(rand.NewChaCha8([32]byte{}))
		var s float64
		for b.Loop() {
			s += r.NormFloat64()
		}
		sink += int64(s)
	})
}

// BenchmarkStagedGaussianDelta: one evaluation of the exact accountant on
// the staged plan of mplsstops at ε = 0.1 (a count at σ = 502, then 165
// tables at σ = 648, 45 at 338 or 120 at 553); the project solver's
// calibration makes 17.
func BenchmarkStagedGaussianDelta(b *testing.B) {
	g := StagedGaussian{CountSigma: 502.1, Branches: []GaussianBranch{{Tables: 165, Sigma: 648.2}, {Tables: 45, Sigma: 338.5}, {Tables: 120, Sigma: 552.8}}}
	b.ReportAllocs()
	for b.Loop() {
		if d := g.Delta(0.1); !(d > 0.9e-9 && d < 1.1e-9) {
			b.Fatalf("Delta = %v", d)
		}
	}
}
