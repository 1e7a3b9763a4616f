package release

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpsynth/synth/query"
	"github.com/dpsynth/synth/universe"
)

// TestBalance: on a random distribution over a 4-attribute universe with
// all 2-way marginals, Balance keeps every count within one of N·D(z) and
// the total at N, and lowers the workload's sampling error below the
// systematic rounding's it starts from.
func TestBalance(t *testing.T) {
	dom, err := universe.ParseDomain([]byte(`{"a": 6, "b": 5, "c": 7, "d": 4}`))
	if err != nil {
		t.Fatal(err)
	}
	wl, err := query.KWay(dom, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	op, err := wl.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	r := rand.New(rand.NewPCG(4, 5))
	d := make([]float64, op.K())
	sum := 0.0
	for i := range d {
		d[i] = r.ExpFloat64() * r.Float64()
		sum += d[i]
	}
	for i := range d {
		d[i] /= sum
	}
	const n = 500
	cells, err := Sample(nil, d, n, Systematic, r)
	if err != nil {
		t.Fatal(err)
	}
	sampErr := func(cells []CellCount) float64 {
		h := Histogram(cells, make([]float64, op.K()))
		a, b := make([]float64, op.M()), make([]float64, op.M())
		op.Answer(h, a)
		op.Answer(d, b)
		s := 0.0
		for j := range a {
			s += (a[j] - b[j]) * (a[j] - b[j])
		}
		return math.Sqrt(s / float64(op.M()))
	}
	before := sampErr(cells)
	bal, st, err := Balance(append([]CellCount(nil), cells...), d, n, op, MarginalTouch(wl), 50)
	if err != nil {
		t.Fatal(err)
	}
	after := sampErr(bal)
	if math.Abs(st.Before-before) > 1e-12 || math.Abs(st.After-after) > 1e-12 {
		t.Errorf("stats before/after = %g/%g, recomputed %g/%g", st.Before, st.After, before, after)
	}
	if !(after < 0.8*before) || st.Moves == 0 {
		t.Errorf("Balance: rms sampling error %g -> %g with %d moves, want a clear reduction", before, after, st.Moves)
	}
	total := int64(0)
	prev := int64(-1)
	for _, c := range bal {
		if int64(c.Cell) <= prev {
			t.Fatalf("cells not increasing at %d", c.Cell)
		}
		prev = int64(c.Cell)
		total += c.Count
		if x := n * d[c.Cell]; math.Abs(float64(c.Count)-x) >= 1 {
			t.Errorf("cell %d: count %d, N·D = %.3f: not within one", c.Cell, c.Count, x)
		}
	}
	if total != n {
		t.Errorf("total %d rows, want %d", total, n)
	}
	// Cells without rows must have N·D < 1.
	has := map[uint64]bool{}
	for _, c := range bal {
		has[c.Cell] = true
	}
	for z, v := range d {
		if !has[uint64(z)] && n*v >= 1 {
			t.Errorf("cell %d has no row but N·D = %.3f", z, n*v)
		}
	}
}

// TestBalanceCandidates: the bounded parallel pick returns the same cells
// in the same order as the full lists with quickselect and sort, on
// universes large enough to split across workers, with few and many
// candidates (buffers pruned many times), distinct keys and keys full of
// ties (where pick must fall back to the full lists).
func TestBalanceCandidates(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, k := range []int{1000, 100_000} {
		for _, cand := range []int{1, 8, 300, 4096} {
			for _, ties := range []bool{false, true} {
				diff, s := make([]float64, k), make([]float64, k)
				for z := range diff {
					diff[z] = r.Float64()*2.2 - 1.1 // some cells outside both sides
					if r.IntN(50) == 0 {
						diff[z] = 0
					}
					s[z] = r.NormFloat64()
					if ties {
						s[z] = math.Round(s[z] * 20)
					}
				}
				c := newCandidates(diff, s, cand)
				up, down := c.pick()
				up, down = slices.Clone(up), slices.Clone(down)
				if !ties && c.fallbacks != 0 {
					t.Errorf("k=%d cand=%d: distinct keys fell back to the full lists", k, cand)
				}
				wu, wd := c.exact()
				if !slices.Equal(up, wu) || !slices.Equal(down, wd) {
					t.Errorf("k=%d cand=%d ties=%v: pick differs from the full lists (%d/%d vs %d/%d cells)",
						k, cand, ties, len(up), len(down), len(wu), len(wd))
				}
				if len(up) != min(cand, countIn(diff, 1e-9, 1+1e-9)) || len(down) != min(cand, countIn(diff, -1-1e-9, -1e-9)) {
					t.Errorf("k=%d cand=%d: %d up and %d down cells", k, cand, len(up), len(down))
				}
				c.close()
			}
		}
	}
}

func countIn(x []float64, lo, hi float64) int {
	n := 0
	for _, v := range x {
		if v > lo && v < hi {
			n++
		}
	}
	return n
}

// BenchmarkBalancePick times one round's choice of cells over a universe of
// 2,150,400 cells (healthins' size) where most cells are down cells.
func BenchmarkBalancePick(b *testing.B) {
	const k = 2_150_400
	r := rand.New(rand.NewPCG(1, 2))
	diff, s := make([]float64, k), make([]float64, k)
	for z := range diff {
		diff[z] = -r.Float64() * 0.01
		if r.IntN(300) == 0 {
			diff[z] = r.Float64()
		}
		s[z] = r.NormFloat64()
	}
	c := newCandidates(diff, s, balanceCand)
	defer c.close()
	b.Run("bounded", func(b *testing.B) {
		c.pick()
		b.ReportAllocs()
		for b.Loop() {
			c.pick()
		}
	})
	b.Run("full-lists", func(b *testing.B) {
		c.exact()
		b.ReportAllocs()
		for b.Loop() {
			c.exact()
		}
	})
}
