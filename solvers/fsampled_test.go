package solvers

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dpsynth/synth/internal/par"
)

// TestSampleTable counts random columns' tables on sets of one to four
// attributes and checks each cell against a count row by row.
func TestSampleTable(t *testing.T) {
	sizes := []int{3, 1, 7, 2, 300}
	const rows = 1000
	rng := rand.New(rand.NewPCG(1, 2))
	cols := make([][]uint16, len(sizes))
	cols8 := make([][]uint8, len(sizes))
	for a, s := range sizes {
		cols[a] = make([]uint16, rows+5) // longer than rows: only rows count
		cols8[a] = make([]uint8, rows+5)
		for r := range cols[a] {
			cols[a][r] = uint16(rng.IntN(s))
			cols8[a][r] = uint8(cols[a][r])
		}
	}
	for _, set := range [][]int{{2}, {4}, {0, 2}, {1, 4}, {0, 2, 4}, {0, 1, 3}, {0, 2, 3, 4}} {
		cells := 1
		for _, a := range set {
			cells *= sizes[a]
		}
		got := make([]float64, cells)
		for k := range got {
			got[k] = -1 // sampleTable clears
		}
		sampleTable(cols, sizes, set, rows, got)
		got8 := make([]float64, cells)
		if slices.Max(sizes) <= 1<<8 || !slices.Contains(set, 4) {
			sampleTable(cols8, sizes, set, rows, got8)
			if !slices.Equal(got8, got) {
				t.Errorf("sampleTable(%v) on bytes differs from the 16-bit codes'", set)
			}
		}
		want := make([]float64, cells)
		for r := range rows {
			x := 0
			for _, a := range set {
				x = x*sizes[a] + int(cols[a][r])
			}
			want[x] += 1.0 / rows
		}
		for k := range want {
			if math.Abs(got[k]-want[k]) > 1e-12 {
				t.Errorf("sampleTable(%v) cell %d = %v, want %v", set, k, got[k], want[k])
				break
			}
		}
	}
}

// TestSampledAllowance checks the allowance per cell, √(2/π)·n̂·√(p(1−p)/M),
// against the binomial's exact mean absolute deviation E|X/M − p|·n̂
// (X ~ Binomial(M, p), summed over every outcome in log space): the normal
// approximation is within 1% where M·p·(1−p) ≥ 50, and the cells' terms add.
func TestSampledAllowance(t *testing.T) {
	const nHat = 50000.0
	for _, c := range []struct {
		rows int
		p    float64
	}{{1 << 16, 0.001}, {1 << 16, 0.05}, {1 << 16, 0.5}, {200000, 0.0004}} {
		got := sampledAllowance([]float64{c.p}, nHat, c.rows)
		want := nHat * binomialMAD(c.rows, c.p) / float64(c.rows)
		if math.Abs(got/want-1) > 0.01 {
			t.Errorf("sampledAllowance(p %v, M %d) = %v, want %v (binomial)", c.p, c.rows, got, want)
		}
	}
	p := []float64{0.2, 0.5}
	got := sampledAllowance(p, nHat, 1<<16)
	want := sampledAllowance([]float64{0.2}, nHat, 1<<16) + sampledAllowance([]float64{0.5}, nHat, 1<<16)
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("sampledAllowance(%v) = %v, want %v (the cells' sum)", p, got, want)
	}
}

// binomialMAD is E|X − M·p| for X ~ Binomial(M, p).
func binomialMAD(m int, p float64) float64 {
	lm, _ := math.Lgamma(float64(m) + 1)
	s := 0.0
	for x := range m + 1 {
		lx, _ := math.Lgamma(float64(x) + 1)
		ly, _ := math.Lgamma(float64(m-x) + 1)
		lp := lm - lx - ly + float64(x)*math.Log(p) + float64(m-x)*math.Log1p(-p)
		s += math.Exp(lp) * math.Abs(float64(x)-float64(m)*p)
	}
	return s
}

// TestSampledScores compares the scores on a sample with the exact ones:
// on each model of a run of the rounds (adult-reduced, all 3-way
// marginals, ε = 1, a 64 KiB cap), every candidate's score is computed
// exactly and then, for every candidate no clique covers, on a sample of
// 2^20 rows. The sample's L1 distance
// less its allowance differs from the exact distance by at most the
// allowance (which it over-corrects where the model is wrong) plus six
// standard deviations of the sample's L1 noise (about n̂/√M): a false
// failure has probability far below 10^-6 per candidate.
func TestSampledScores(t *testing.T) {
	fx := loadFixture(t, "adult-reduced", nil, 3)
	ctx := context.Background()
	p, plan, fit, r := startRounds(t, fx, &Project{}, AddRemove, 1)
	const rows = 1 << 20
	sampledModels := 0
	res, start := &Result{Plan: plan}, time.Now()
	for final := false; !final && r.fits < 6; r.fits++ {
		var err error
		if final, err = r.score(ctx, fit); err != nil {
			t.Fatal(err)
		}
		var idx []int
		for i := range r.fp.cands {
			if r.active[i] != nil {
				idx = append(idx, i)
			}
		}
		// Exact.
		sm := r.sampled
		r.sampled, r.scan.sampled = nil, nil
		r.evaluate(fit.cur, idx)
		exact := make([]float64, len(idx))
		for k, i := range idx {
			exact[k] = r.scan.l1[i]
			r.evaluated[i] = false
		}
		// On a sample of every candidate no clique covers.
		r.sampled, r.scan.sampled = sm, sm
		sm.rows = rows
		sm.on, sm.drawn = true, false
		for i, c := range r.fp.cands {
			sm.is[i] = fit.cur.Tree().Covering(c) < 0
		}
		r.evaluate(fit.cur, idx)
		if r.evalErr != nil {
			t.Fatal(r.evalErr)
		}
		for k, i := range idx {
			if !sm.is[i] {
				if r.scan.l1[i] != exact[k] {
					t.Errorf("fit %d: covered candidate %v: L1 %v, want %v", r.fits, r.fp.cands[i], r.scan.l1[i], exact[k])
				}
				continue
			}
			sampledModels++
			p := r.bufs[i]
			if g := r.scan.groupsOf(i); g != nil {
				p = g.sums(p, nil)
			}
			allow := sampledAllowance(p, r.nHat, rows)
			if d := math.Abs(r.scan.l1[i] - allow - exact[k]); d > allow+6*r.nHat/math.Sqrt(rows) {
				t.Errorf("fit %d: candidate %v: sampled L1 %v less allowance %v is %v from the exact %v", r.fits, r.fp.cands[i], r.scan.l1[i], allow, d, exact[k])
			}
		}
		sm.reset(fit.cur, r.fp.cands)
		for _, i := range idx {
			r.evaluated[i] = false
		}
		batch, tree, last, err := r.selectBatch(p, fit, final)
		if err != nil {
			t.Fatal(err)
		}
		final = last
		if err := r.fitBatch(ctx, fit, tree, batch, final); err != nil {
			t.Fatal(err)
		}
		if err := r.afterFit(p, res, fit, batch, final, start); err != nil {
			t.Fatal(err)
		}
	}
	if sampledModels == 0 {
		t.Fatal("no candidate was scored on a sample")
	}
}

// BenchmarkSampledTables times the sample's tables of every triple of 32
// attributes of 2 to 24 values (4,960 sets) over 2^17 rows on every core,
// in ns per row and set:
//
//	go test ./solvers -run '^$' -bench SampledTables -benchtime 5x
func BenchmarkSampledTables(b *testing.B) {
	const d, rows = 32, 1 << 17
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := make([]int, d)
	for a := range sizes {
		sizes[a] = 2 + rng.IntN(23)
	}
	s := &sampledScores{rows: rows, sizes: sizes, cols8: make([][]uint8, d)}
	for a := range s.cols8 {
		s.cols8[a] = make([]uint8, rows)
		for r := range s.cols8[a] {
			s.cols8[a][r] = uint8(rng.IntN(sizes[a]))
		}
	}
	var sets [][]int
	var idx []int
	var outs [][]float64
	for x := range d {
		for y := x + 1; y < d; y++ {
			for z := y + 1; z < d; z++ {
				idx = append(idx, len(sets))
				sets = append(sets, []int{x, y, z})
				outs = append(outs, make([]float64, sizes[x]*sizes[y]*sizes[z]))
			}
		}
	}
	team := par.NewTeam(0)
	defer team.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.tables(team, sets, idx, outs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(sets)*rows), "ns/row-set")
}
