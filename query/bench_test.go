package query

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats"

	"github.com/dpsynth/synth/datasets"
	"github.com/dpsynth/synth/universe"
)

// Benchmarks of the fused operator against one plain sequential read of D
// (gonum's assembly floats.Sum on one core, the memory-bandwidth limit).
// Answer and Adjoint report their wall time per cell of D ("ns/cell"), the
// wall time per cell of as many plain reads timed right after them
// ("read-ns/cell") and the ratio ("x-read"), and the same three figures in
// process CPU time ("cpu-ns/cell", "cpu-read-ns/cell", "cpu-x-read"): on a
// shared, loaded machine the wall times include waiting for a core, the
// CPU times do not (with 2 workers they add up both cores' work). Run with
//
//	go test ./query -run '^$' -bench Operator -cpu 1,2 -count 5
//
// docs/BENCHMARKS.md records the figures.

type benchCase struct {
	name string
	dom  func(testing.TB) *universe.Domain
	work func(testing.TB, *universe.Domain) *Workload
}

var benchCases = []benchCase{
	{
		// All 35 3-way marginals of adult-reduced, k = 336,000.
		name: "adult-reduced-3way",
		dom:  func(tb testing.TB) *universe.Domain { return datasetDomain(tb, "adult-reduced") },
		work: func(tb testing.TB, d *universe.Domain) *Workload {
			w, err := KWay(d, 3, nil)
			if err != nil {
				tb.Fatal(err)
			}
			return w
		},
	},
	{
		// A synthetic universe of exactly 10^7 cells (10 attributes) and 50
		// of its 120 3-way marginals, drawn with seed 1.
		name: "synthetic-1e7-50sets",
		dom: func(tb testing.TB) *universe.Domain {
			return mustDomain(tb, `{"a": 2, "b": 5, "c": 2, "d": 5, "e": 10, "f": 10, "g": 4, "h": 5, "i": 5, "j": 10}`)
		},
		work: func(tb testing.TB, d *universe.Domain) *Workload {
			w, err := SampleKWay(d, 3, 50, 1)
			if err != nil {
				tb.Fatal(err)
			}
			return w
		},
	},
}

func datasetDomain(tb testing.TB, name string) *universe.Domain {
	tb.Helper()
	ds, err := datasets.Lookup(name)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := datasets.ReadFile(ds.Domain)
	if err != nil {
		tb.Fatal(err)
	}
	d, err := universe.ParseDomain(b)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

var sink float64

func BenchmarkOperator(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			dom := bc.dom(b)
			w := bc.work(b, dom)
			op, err := w.Compile(nil)
			if err != nil {
				b.Fatal(err)
			}
			defer op.Close()
			k := op.K()
			d := make([]float64, k)
			for i := range d {
				d[i] = 1 / float64(k)
			}
			ans := make([]float64, op.M())
			perCell := func(b *testing.B) float64 {
				return float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(k)
			}
			// readRatio times b.N plain reads of d right after the loop, so
			// that the ratio compares figures from the same moment of a
			// shared, noisy machine.
			var cpu0 int64
			readRatio := func(b *testing.B) {
				op := perCell(b)
				opCPU := float64(cpuNanos()-cpu0) / float64(b.N) / float64(k)
				start, c0 := time.Now(), cpuNanos()
				for range b.N {
					sink += floats.Sum(d)
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
			b.Run("read", func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(8 * k))
				for b.Loop() {
					sink += floats.Sum(d)
				}
				b.ReportMetric(perCell(b), "ns/cell")
			})
			b.Run("Answer", func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(8 * k))
				cpu0 = cpuNanos()
				for b.Loop() {
					op.Answer(d, ans)
				}
				readRatio(b)
			})
			b.Run("Adjoint", func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(8 * k))
				cpu0 = cpuNanos()
				for b.Loop() {
					op.Adjoint(ans, d)
				}
				readRatio(b)
			})
		})
	}
}

// BenchmarkAnswerCounts answers every 3-way marginal of 24 attributes of
// 4–24 values on 100,000 distinct cells (the true answers of a wide
// release).
func BenchmarkAnswerCounts(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	d, sizes := encodedDomain(b, r, 24, 4, 24)
	w, err := KWay(d, 3, nil)
	if err != nil {
		b.Fatal(err)
	}
	c := universe.NewCounts(d)
	codes := make([]int, len(sizes))
	for range 100000 {
		for a, s := range sizes {
			codes[a] = r.IntN(s)
		}
		if err := c.Add(codes, int64(1+r.IntN(3))); err != nil {
			b.Fatal(err)
		}
	}
	out := make([]float64, w.M())
	b.ReportAllocs()
	for b.Loop() {
		w.AnswerCounts(c, out)
	}
}

// BenchmarkTallyAddRows counts 200,000 rows of 64 attributes of 2–24
// values into all 2,016 pair marginals, in batches of 4,096 rows (as the
// release's row writer does).
func BenchmarkTallyAddRows(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	d, sizes := encodedDomain(b, r, 64, 2, 24)
	w, err := KWay(d, 2, nil)
	if err != nil {
		b.Fatal(err)
	}
	const n, batch = 200000, 4096
	rows := make([]int32, n*len(sizes))
	for i := range rows {
		rows[i] = int32(r.IntN(sizes[i%len(sizes)]))
	}
	b.ReportAllocs()
	for b.Loop() {
		t := w.NewTally()
		for lo := 0; lo < n; lo += batch {
			hi := min(lo+batch, n)
			t.AddRows(rows[lo*len(sizes) : hi*len(sizes)])
		}
	}
}

// encodedDomain returns a domain of n encoded attributes of lo–hi values
// drawn from r, and their sizes.
func encodedDomain(tb testing.TB, r *rand.Rand, n, lo, hi int) (*universe.Domain, []int) {
	tb.Helper()
	sizes := make([]int, n)
	attrs := make([]*universe.Attribute, n)
	for i := range attrs {
		sizes[i] = lo + r.IntN(hi-lo+1)
		a, err := universe.NewEncoded(fmt.Sprintf("c%02d", i), sizes[i])
		if err != nil {
			tb.Fatal(err)
		}
		attrs[i] = a
	}
	d, err := universe.NewDomain(attrs...)
	if err != nil {
		tb.Fatal(err)
	}
	return d, sizes
}
