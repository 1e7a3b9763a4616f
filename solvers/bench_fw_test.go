package solvers

import (
	"testing"
	"time"

	"gonum.org/v1/gonum/floats"

	"github.com/dpsynth/synth/internal/par"
	"github.com/dpsynth/synth/privacy"
)

// Per-iteration benchmarks of DPFW and SMD, with the ratio to one plain
// sequential read of a k-vector (gonum's floats.Sum) timed right after
// the iterations ("read-ns/cell", "x-read"), so that each ratio compares
// figures from the same moment of a shared machine. Run with
//
//	go test ./solvers -run '^$' -bench 'DPFW|SMD' -benchtime 100x -count 5
//
// docs/BENCHMARKS.md ("### dpfw", "### smd") records the figures. The
// cases: adult-reduced with all 35 3-way marginals (k = 336,000, m =
// 14,955, its 48,842 records), and the synthetic universe of exactly 10^7
// cells of query/bench_test.go with 50 of its 3-way marginals (m = 20,700)
// and 100,000 uniform random records.

var fwSink float64

type fwBenchCase struct {
	name string
	prob func(b *testing.B) *Problem
}

var fwBenchCases = []fwBenchCase{
	{"adult-reduced", func(b *testing.B) *Problem { return adultReduced(b).problem(b, 1, 1e-9, 1) }},
	{"synthetic-1e7", func(b *testing.B) *Problem { return synthetic1e7(b).problem(b, 1, 1e-9, 1) }},
}

// fwPerCell reports the benchmark's ns per universe cell, then times b.N
// plain reads of a k-vector and reports their ns per cell and the ratio.
func fwPerCell(b *testing.B, k int, d []float64) {
	op := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(k)
	start := time.Now()
	for range b.N {
		fwSink += floats.Sum(d)
	}
	read := float64(time.Since(start).Nanoseconds()) / float64(b.N) / float64(k)
	b.ReportMetric(op, "ns/cell")
	b.ReportMetric(read, "read-ns/cell")
	b.ReportMetric(op/read, "x-read")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/iter")
}

func BenchmarkDPFW(b *testing.B) {
	for _, bc := range fwBenchCases {
		b.Run(bc.name, func(b *testing.B) {
			p := bc.prob(b)
			k := p.Op.K()
			for _, set := range []Setting{Tuned, Paper} {
				b.Run(set.String(), func(b *testing.B) {
					// T large enough that the selections' buffers never grow.
					_, fp, err := (&DPFW{Setting: set, T: 1 << 20}).plan(&p.Shape)
					if err != nil {
						b.Fatal(err)
					}
					team := par.NewTeam(0)
					defer team.Close()
					r := newFWRun(p, fp, team, 0)
					it := 0
					b.ReportAllocs()
					for b.Loop() {
						r.step(it)
						it++
					}
					fwPerCell(b, k, r.e)
				})
			}
			// The parts of a step, for the record.
			_, fp, err := (&DPFW{T: 1 << 20}).plan(&p.Shape)
			if err != nil {
				b.Fatal(err)
			}
			team := par.NewTeam(0)
			defer team.Close()
			r := newFWRun(p, fp, team, 0)
			r.step(0)
			r.step(1)
			b.Run("part=exp", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					fwSink, _ = r.ex.run(r.shift)
				}
				fwPerCell(b, k, r.e)
			})
			b.Run("part=answer", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					p.Op.Answer(r.e, r.ans)
				}
				fwPerCell(b, k, r.e)
			})
			b.Run("part=select-em", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					fwSink += float64(privacy.ExponentialMechanism(p.Rand, r.score, fp.eps0, fp.sens))
				}
				fwPerCell(b, k, r.e)
			})
		})
	}
}

func BenchmarkSMD(b *testing.B) {
	for _, bc := range fwBenchCases {
		b.Run(bc.name, func(b *testing.B) {
			p := bc.prob(b)
			k := p.Op.K()
			// T = 1000 draws (B = ⌊n/1000⌋ records per batch); the step
			// index wraps around so the run never runs out of batches.
			const T = 1000
			_, sp, err := (&SMD{T: T}).plan(&p.Shape)
			if err != nil {
				b.Fatal(err)
			}
			team := par.NewTeam(0)
			defer team.Close()
			r, err := newSMDRun(p, sp, team, 0)
			if err != nil {
				b.Fatal(err)
			}
			it := 0
			b.ReportAllocs()
			for b.Loop() {
				r.step(it % T)
				it++
			}
			fwPerCell(b, k, r.e)
		})
	}
}
