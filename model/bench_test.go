package model

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"
)

// benchTrees are the trees of the benchmarks: (a) shaped like full ADULT
// with a few 3-way cliques, on the brief sizes of the 14 attributes and on
// adult's real domain, and a wider model on adult's domain (14 sets, 2- and
// 3-way, triangulated into cliques of up to 5 attributes, 8e5 cells), and
// (b) one 1e6-cell clique.
func benchTrees(b *testing.B) []struct {
	name string
	tr   *Tree
} {
	briefSizes := []int{9, 16, 7, 15, 6, 5, 2, 3, 3, 2, 5, 20, 42, 2}
	var out []struct {
		name string
		tr   *Tree
	}
	for _, c := range []struct {
		name  string
		sizes []int
		sets  [][]int
	}{
		{"adult-small", briefSizes, adultSets},
		{"adult", adultSizes, adultSets},
		{"adult-wide", adultSizes, adultWideSets},
		{"clique-1e6", []int{100, 100, 100}, [][]int{{0, 1, 2}}},
	} {
		tr, err := NewTree(c.sizes, c.sets)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, struct {
			name string
			tr   *Tree
		}{c.name, tr})
	}
	return out
}

// adultWideSets is a model on adult's domain of 14 sets, 2- and 3-way.
var adultWideSets = [][]int{{0, 3, 13}, {4, 6, 8}, {1, 5, 13}, {7, 12}, {9, 10, 13}, {0, 11}, {2, 13}, {3, 5},
	{4, 6, 13}, {0, 4, 6}, {5, 8, 11}, {3, 12}, {0, 9}, {6, 11, 13}}

var sink float64

func randomTheta(m *Model, r *rand.Rand) {
	for c := range m.Tree().Cliques() {
		th := m.Theta(c)
		for i := range th {
			th[i] = r.NormFloat64()
		}
	}
}

// cpuNanos is the process's CPU time (user and system).
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// readCells times b.N plain reads of x (one core, four accumulators) and
// returns ns per cell.
//
//go:noinline
func readCells(b *testing.B, x []float64) float64 {
	start := time.Now()
	for range b.N {
		s0, s1, s2, s3 := 0.0, 0.0, 0.0, 0.0
		i := 0
		for ; i+3 < len(x); i += 4 {
			s0 += x[i]
			s1 += x[i+1]
			s2 += x[i+2]
			s3 += x[i+3]
		}
		for ; i < len(x); i++ {
			s0 += x[i]
		}
		sink += s0 + s1 + s2 + s3
	}
	return float64(time.Since(start).Nanoseconds()) / float64(b.N) / float64(len(x))
}

// BenchmarkCalibrate times one belief-propagation pass (both passes over
// every clique) in ns per clique cell, against as many plain reads of a
// []float64 of the model's total cells timed right after it (read-ns/cell,
// x-read), and the CPU time per cell (both cores add up). Run with
//
//	go test ./model -run '^$' -bench 'Calibrate|Read' -count 5
func BenchmarkCalibrate(b *testing.B) {
	for _, bt := range benchTrees(b) {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/cells=%.0f/workers=%d", bt.name, bt.tr.TotalCells(), w), func(b *testing.B) {
				m := New(bt.tr, &Settings{Workers: w})
				defer m.Close()
				randomTheta(m, rand.New(rand.NewPCG(1, 1)))
				m.Calibrate()
				cells := bt.tr.TotalCells()
				b.ReportAllocs()
				cpu0 := cpuNanos()
				for b.Loop() {
					m.Calibrate()
				}
				op := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / cells
				cpu := float64(cpuNanos()-cpu0) / float64(b.N) / cells
				read := readCells(b, make([]float64, int(cells)))
				b.ReportMetric(op, "ns/cell")
				b.ReportMetric(cpu, "cpu-ns/cell")
				b.ReportMetric(read, "read-ns/cell")
				b.ReportMetric(op/read, "x-read")
			})
		}
	}
}

// BenchmarkRead is one plain read of a []float64 of each tree's total
// cells, in ns per cell.
func BenchmarkRead(b *testing.B) {
	for _, bt := range benchTrees(b) {
		b.Run(fmt.Sprintf("%s/cells=%.0f", bt.name, bt.tr.TotalCells()), func(b *testing.B) {
			x := make([]float64, int(bt.tr.TotalCells()))
			for i := range x {
				x[i] = float64(i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.ReportMetric(readCells(b, x), "ns/cell")
		})
	}
}

// BenchmarkStep times one fit step on the model: AddTheta of a gradient on
// every clique, Calibrate, and the marginal on every clique and on every
// single attribute, in ns per clique cell.
func BenchmarkStep(b *testing.B) {
	for _, bt := range benchTrees(b) {
		b.Run(fmt.Sprintf("%s/cells=%.0f", bt.name, bt.tr.TotalCells()), func(b *testing.B) {
			m := New(bt.tr, nil)
			defer m.Close()
			r := rand.New(rand.NewPCG(1, 1))
			randomTheta(m, r)
			m.Calibrate()
			cl := bt.tr.Cliques()
			grads := make([][]float64, len(cl))
			outs := make([][]float64, len(cl))
			for c := range cl {
				grads[c] = make([]float64, bt.tr.Cells(c))
				outs[c] = make([]float64, bt.tr.Cells(c))
				for i := range grads[c] {
					grads[c][i] = r.NormFloat64()
				}
			}
			sizes := bt.tr.Sizes()
			single := make([][]float64, len(sizes))
			for a := range sizes {
				single[a] = make([]float64, sizes[a])
			}
			attr := make([][]int, len(sizes))
			for a := range sizes {
				attr[a] = []int{a}
			}
			b.ReportAllocs()
			for b.Loop() {
				for c := range cl {
					m.AddTheta(cl[c], 1e-3, grads[c])
				}
				m.Calibrate()
				for c := range cl {
					_ = m.Marginal(cl[c], outs[c])
				}
				for a := range sizes {
					_ = m.Marginal(attr[a], single[a])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/bt.tr.TotalCells(), "ns/cell")
		})
	}
}

func BenchmarkNewTree(b *testing.B) {
	b.Run("adult", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := NewTree(adultSizes, adultSets); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A wide table's candidate check: 64 attributes, 150 random pairs
	// measured (what the rounds rebuild for every candidate).
	b.Run("wide64", func(b *testing.B) {
		r := rand.New(rand.NewPCG(1, 2))
		sizes := make([]int, 64)
		for i := range sizes {
			sizes[i] = 2 + r.IntN(10)
		}
		var sets [][]int
		for len(sets) < 150 {
			a, c := r.IntN(64), r.IntN(64)
			if a != c {
				sets = append(sets, []int{min(a, c), max(a, c)})
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := NewTree(sizes, sets); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSample draws 10^6 rows from a random model on each tree, in ns
// per row.
func BenchmarkSample(b *testing.B) {
	for _, bt := range benchTrees(b) {
		for _, method := range []SampleMethod{Systematic, IID, Stratified} {
			b.Run(fmt.Sprintf("%s/%v", bt.name, method), func(b *testing.B) { benchSample(b, bt.tr, method, 1_000_000) })
		}
	}
}

// BenchmarkMarginals answers all 364 3-way marginals of adult's 14
// attributes (most of them across cliques) on a random model of the adult
// tree, one Marginal at a time and with one Marginals call.
func BenchmarkMarginals(b *testing.B) {
	tr, err := NewTree(adultSizes, adultSets)
	if err != nil {
		b.Fatal(err)
	}
	var sets [][]int
	n := len(adultSizes)
	for a := range n {
		for c := a + 1; c < n; c++ {
			for d := c + 1; d < n; d++ {
				sets = append(sets, []int{a, c, d})
			}
		}
	}
	outs := make([][]float64, len(sets))
	for i, s := range sets {
		outs[i] = make([]float64, int(cellsOf(adultSizes, s)))
	}
	m := New(tr, nil)
	defer m.Close()
	randomTheta(m, rand.New(rand.NewPCG(1, 1)))
	m.Calibrate()
	b.Run("Marginal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i, s := range sets {
				_ = m.Marginal(s, outs[i])
			}
		}
	})
	b.Run("Marginals", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = m.Marginals(sets, outs)
		}
	})
}

// evidenceSets are the cliques of the factored project solver's model at
// the end of the ADULT evidence run at ε = 1 (13,000 clique cells).
var evidenceSets = [][]int{{3, 5, 6, 8, 13}, {1, 5, 6, 8, 13}, {5, 6, 7}, {1, 4, 6, 8, 13}, {8, 11, 13}, {9, 13}, {12}, {2}, {10}, {0, 4, 13}}

// BenchmarkFitStep is one step of a factored fit: copy the model, add every
// measured set's gradient, calibrate and read the measured marginals, set
// by set (Loop) and batched (Batch), on the adult test tree and on the
// ADULT evidence run's tree; Batch-serial keeps the batches and the
// Calibrate levels on one worker, Batch-split4k splits them from 4,096
// cells.
func BenchmarkFitStep(b *testing.B) {
	for _, tc := range []struct {
		name string
		sets [][]int
	}{{"adult", adultSets}, {"evidence", evidenceSets}} {
		tr, err := NewTree(adultSizes, tc.sets)
		if err != nil {
			b.Fatal(err)
		}
		sets := slices.Clone(tc.sets)
		for a := range adultSizes {
			sets = append(sets, []int{a})
		}
		r := rand.New(rand.NewPCG(1, 1))
		gs := make([][]float64, len(sets))
		mu := make([][]float64, len(sets))
		for i, s := range sets {
			gs[i] = make([]float64, int(cellsOf(adultSizes, s)))
			mu[i] = make([]float64, len(gs[i]))
			for k := range gs[i] {
				gs[i][k] = r.NormFloat64()
			}
		}
		m, o := New(tr, nil), New(tr, nil)
		randomTheta(m, r)
		m.Calibrate()
		b.Run(tc.name+"/Loop", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				o.CopyFrom(m)
				for i, s := range sets {
					o.AddTheta(s, -1e-3, gs[i])
				}
				o.Calibrate()
				for i, s := range sets {
					_ = o.Marginal(s, mu[i])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/tr.TotalCells(), "ns/cell")
		})
		for _, split := range []struct {
			name string
			min  int
		}{{"", -1}, {"-serial", math.MaxInt}, {"-split4k", 1 << 12}} {
			b.Run(tc.name+"/Batch"+split.name, func(b *testing.B) {
				defer func(v, w int) { minSplit, minBatchSplit = v, w }(minSplit, minBatchSplit)
				if split.min >= 0 {
					minSplit, minBatchSplit = split.min, split.min
				}
				b.ReportAllocs()
				for b.Loop() {
					o.CopyFrom(m)
					o.AddThetas(sets, -1e-3, gs)
					o.Calibrate()
					_ = o.Marginals(sets, mu)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/tr.TotalCells(), "ns/cell")
			})
		}
		m.Close()
		o.Close()
	}
}

// BenchmarkStratified draws 50,000 rows (about full ADULT) by Stratified
// sampling from a random model on adult's domain (adult: 8 sets; adult-wide:
// 14 sets, 2- and 3-way), the release's case.
func BenchmarkStratified(b *testing.B) {
	for _, bt := range benchTrees(b) {
		if bt.name != "adult" && bt.name != "adult-wide" {
			continue
		}
		b.Run(fmt.Sprintf("%s/cliques=%d", bt.name, len(bt.tr.Cliques())), func(b *testing.B) { benchSample(b, bt.tr, Stratified, 50_000) })
	}
}

// benchSample draws n rows by method from a random model on tree tr, in
// ns per row.
func benchSample(b *testing.B, tr *Tree, method SampleMethod, n int64) {
	m := New(tr, nil)
	defer m.Close()
	randomTheta(m, rand.New(rand.NewPCG(1, 1)))
	m.Calibrate()
	r := rand.New(rand.NewPCG(2, 2))
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Sample(context.Background(), n, method, r, 0, func([]int32) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
}
