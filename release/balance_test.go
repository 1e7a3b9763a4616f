package release

import (
	"math"
	"math/rand/v2"
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
