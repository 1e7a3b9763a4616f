package release

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func seeded(seed uint64) *rand.Rand {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return rand.New(rand.NewChaCha8(s))
}

// randomDist returns a distribution over k cells with about a third of the
// cells zero.
func randomDist(r *rand.Rand, k int) []float64 {
	d := make([]float64, k)
	var sum float64
	for i := range d {
		if r.IntN(3) == 0 {
			continue
		}
		d[i] = r.ExpFloat64()
		sum += d[i]
	}
	if sum == 0 {
		d[0], sum = 1, 1
	}
	for i := range d {
		d[i] /= sum
	}
	return d
}

func total(cells []CellCount) int64 {
	var t int64
	for _, c := range cells {
		t += c.Count
	}
	return t
}

func checkCells(t *testing.T, cells []CellCount, d []float64) {
	t.Helper()
	for i, c := range cells {
		if c.Count <= 0 {
			t.Fatalf("entry %d: cell %d has count %d, want > 0", i, c.Cell, c.Count)
		}
		if i > 0 && cells[i-1].Cell >= c.Cell {
			t.Fatalf("entries %d, %d: cells %d, %d not increasing", i-1, i, cells[i-1].Cell, c.Cell)
		}
		if !(d[c.Cell] > 0) {
			t.Fatalf("cell %d has D = %v but %d rows", c.Cell, d[c.Cell], c.Count)
		}
	}
}

func TestSampleSystematicWithinOne(t *testing.T) {
	r := seeded(1)
	for trial := range 200 {
		k := 1 + r.IntN(300)
		d := randomDist(r, k)
		n := int64(r.IntN(5000))
		if trial%10 == 0 {
			n = int64(r.IntN(5)) // tiny samples: most cells get 0 or 1
		}
		var sum float64
		for _, x := range d {
			sum += x
		}
		cells, err := Sample(nil, d, n, Systematic, r)
		if err != nil {
			t.Fatal(err)
		}
		if got := total(cells); got != n {
			t.Fatalf("trial %d: Sample(k=%d, n=%d) total = %d, want %d", trial, k, n, got, n)
		}
		checkCells(t, cells, d)
		got := make([]int64, k)
		for _, c := range cells {
			got[c.Cell] = c.Count
		}
		for z, x := range d {
			want := float64(n) * x / sum
			lo, hi := math.Floor(want-1e-9), math.Ceil(want+1e-9)
			if c := float64(got[z]); c < lo || c > hi {
				t.Fatalf("trial %d: cell %d count = %v, want within one of N·D = %v", trial, z, c, want)
			}
		}
	}
}

func TestSampleIIDTotals(t *testing.T) {
	r := seeded(2)
	for trial := range 100 {
		k := 1 + r.IntN(300)
		d := randomDist(r, k)
		n := int64(r.IntN(5000))
		cells, err := Sample(nil, d, n, IID, r)
		if err != nil {
			t.Fatal(err)
		}
		if got := total(cells); got != n {
			t.Fatalf("trial %d: Sample(k=%d, n=%d, iid) total = %d, want %d", trial, k, n, got, n)
		}
		checkCells(t, cells, d)
	}
}

// TestSampleUnbiased checks E[count(z)] = N·D(z) for both methods, and the
// multinomial variance N·D(1−D) for IID.
//
// Sample size T = 40,000 draws of N = 13 rows from a fixed D over 8 cells.
// For each cell the mean count is compared with N·D(z) within 5 standard
// errors (sd/√T, with sd² = φ(1−φ) for systematic, N·D(1−D) for IID). By the
// normal approximation a false failure has probability about 6e-7 per cell
// and 1e-5 over the 16 mean checks. The IID variance is checked within 6
// standard errors of the variance estimate (its standard error computed
// from the binomial's fourth central moment), false-failure probability
// about 2e-9 per cell. The seed is fixed, so the test is deterministic; the
// figures say how likely a correct sampler with another seed would fail.
func TestSampleUnbiased(t *testing.T) {
	d := []float64{0.31, 0.0, 0.17, 0.125, 0.005, 0.2, 0.09, 0.1}
	const (
		n      = 13
		trials = 40000
	)
	for _, m := range []SampleMethod{Systematic, IID} {
		t.Run(m.String(), func(t *testing.T) {
			r := seeded(3)
			sum := make([]float64, len(d))
			sq := make([]float64, len(d))
			var cells []CellCount
			for range trials {
				var err error
				cells, err = Sample(cells[:0], d, n, m, r)
				if err != nil {
					t.Fatal(err)
				}
				if got := total(cells); got != n {
					t.Fatalf("total = %d, want %d", got, n)
				}
				for _, c := range cells {
					x := float64(c.Count)
					sum[c.Cell] += x
					sq[c.Cell] += x * x
				}
			}
			for z, p := range d {
				mean := sum[z] / trials
				want := n * p
				v := n * p * (1 - p)
				if m == Systematic {
					phi := want - math.Floor(want)
					v = phi * (1 - phi)
				}
				if v == 0 {
					if mean != want {
						t.Errorf("cell %d: mean count = %v, want exactly %v", z, mean, want)
					}
					continue
				}
				if se := math.Sqrt(v / trials); math.Abs(mean-want) > 5*se {
					t.Errorf("cell %d: mean count = %.5f, want %.5f ± %.5f (5 s.e.)", z, mean, want, 5*se)
				}
				if m == IID {
					variance := sq[z]/trials - mean*mean
					// Fourth central moment of Binomial(n, p).
					mu4 := n * p * (1 - p) * (1 + 3*(n-2)*p*(1-p))
					se := math.Sqrt((mu4 - v*v) / trials)
					if math.Abs(variance-v) > 6*se {
						t.Errorf("cell %d: variance = %.5f, want %.5f ± %.5f (6 s.e.)", z, variance, v, 6*se)
					}
				}
			}
		})
	}
}

func TestSampleBadDistribution(t *testing.T) {
	cases := []struct {
		name string
		d    []float64
		cell int
	}{
		{"empty", nil, -1},
		{"nan", []float64{0.5, math.NaN(), 0.5}, 1},
		{"inf", []float64{math.Inf(1), 0.5}, 0},
		{"negative", []float64{0.6, -0.1, 0.5}, 1},
		{"sum", []float64{0.5, 0.4}, -1},
		{"zero", []float64{0, 0}, -1},
	}
	for _, c := range cases {
		_, err := Sample(nil, c.d, 10, Systematic, seeded(1))
		var de *DistributionError
		if !errors.As(err, &de) {
			t.Errorf("%s: Sample(%v) error = %v, want *DistributionError", c.name, c.d, err)
			continue
		}
		if de.Cell != c.cell {
			t.Errorf("%s: error cell = %d, want %d (%v)", c.name, de.Cell, c.cell, err)
		}
	}
	// Tiny negatives and a sum off by rounding are accepted; the negative
	// cell gets no rows.
	d := []float64{0.5, -1e-12, 0.5 + 1e-9}
	for _, m := range []SampleMethod{Systematic, IID} {
		cells, err := Sample(nil, d, 1000, m, seeded(1))
		if err != nil {
			t.Fatalf("%v: Sample(%v) error = %v, want nil", m, d, err)
		}
		checkCells(t, cells, d)
	}
	if _, err := Sample(nil, []float64{1}, -1, Systematic, seeded(1)); err == nil {
		t.Error("Sample with n = -1: no error")
	}
}

func TestSampleMethodNames(t *testing.T) {
	for _, m := range []SampleMethod{Systematic, IID} {
		got, err := ParseSampleMethod(m.String())
		if err != nil || got != m {
			t.Errorf("ParseSampleMethod(%q) = %v, %v, want %v", m.String(), got, err, m)
		}
	}
	if _, err := ParseSampleMethod("bogus"); err == nil {
		t.Error(`ParseSampleMethod("bogus"): no error`)
	}
}

func TestFixTotal(t *testing.T) {
	// Force the rare path: remove and add rows after a clean sample and
	// check that fixTotal restores the total within one.
	d := []float64{0.25, 0.35, 0, 0.4}
	nf := 10.0
	base := []CellCount{{0, 3}, {1, 3}, {3, 4}} // floors 2, 3, 4 plus one extra
	got := fixTotal(slices.Clone(base), 0, d, nf, -1)
	if total(got) != 9 {
		t.Fatalf("fixTotal(-1) total = %d, want 9", total(got))
	}
	got = fixTotal(slices.Clone(base), 0, d, nf, 1)
	want := []CellCount{{0, 3}, {1, 4}, {3, 4}}
	if !slices.Equal(got, want) {
		t.Fatalf("fixTotal(+1) = %v, want %v", got, want)
	}
	got = fixTotal([]CellCount{{0, 2}, {1, 3}, {3, 4}}, 0, d, nf, 2)
	want = []CellCount{{0, 3}, {1, 4}, {3, 4}}
	if !slices.Equal(got, want) {
		t.Fatalf("fixTotal from floors = %v, want %v", got, want)
	}
	// A cell with floor 0 enters the list, and leaves it again.
	d = []float64{0.05, 0.95}
	got = fixTotal([]CellCount{{1, 9}}, 0, d, nf, 1)
	want = []CellCount{{0, 1}, {1, 9}}
	if !slices.Equal(got, want) {
		t.Fatalf("fixTotal inserting = %v, want %v", got, want)
	}
	got = fixTotal(got, 0, d, nf, -1)
	want = []CellCount{{1, 9}}
	if !slices.Equal(got, want) {
		t.Fatalf("fixTotal removing = %v, want %v", got, want)
	}
}

func TestRowsShuffle(t *testing.T) {
	cells := []CellCount{{2, 3}, {5, 1}, {9, 2}}
	r := seeded(4)
	rows := Rows(nil, cells, r)
	sorted := slices.Sorted(slices.Values(rows))
	if want := []uint32{2, 2, 2, 5, 9, 9}; !slices.Equal(sorted, want) {
		t.Fatalf("Rows = %v (sorted %v), want the multiset %v", rows, sorted, want)
	}
	// Uniformity: all 6 orders of three distinct rows, 60,000 shuffles;
	// each count within 5 s.e. of 10,000 (false failure ~3e-6 in all).
	const trials = 60000
	seen := map[[3]uint32]int{}
	buf := make([]uint32, 3)
	for range trials {
		copy(buf, []uint32{0, 1, 2})
		Shuffle(buf, r)
		seen[[3]uint32(buf)]++
	}
	if len(seen) != 6 {
		t.Fatalf("Shuffle produced %d distinct orders, want 6", len(seen))
	}
	p := 1.0 / 6
	se := math.Sqrt(trials * p * (1 - p))
	for perm, c := range seen {
		if math.Abs(float64(c)-trials*p) > 5*se {
			t.Errorf("order %v seen %d times, want %.0f ± %.0f", perm, c, trials*p, 5*se)
		}
	}
}

// TestRowsBucketed runs the Rao–Sandelius path on small inputs: the
// multiset is kept and all 24 orders of 4 distinct rows are equally likely
// (48,000 shuffles, each count within 5 s.e. of 2,000; false failure about
// 1e-5 in all).
func TestRowsBucketed(t *testing.T) {
	defer func(old int64) { bucketMin = old }(bucketMin)
	bucketMin = 1
	r := seeded(8)
	cells := []CellCount{{2, 3}, {5, 1}, {9, 700}}
	rows := Rows([]uint32{42}, cells, r)
	if rows[0] != 42 || len(rows) != 705 {
		t.Fatalf("Rows kept prefix %d, len %d; want 42, 705", rows[0], len(rows))
	}
	counts := map[uint32]int{}
	for _, c := range rows[1:] {
		counts[c]++
	}
	if counts[2] != 3 || counts[5] != 1 || counts[9] != 700 {
		t.Fatalf("Rows multiset = %v", counts)
	}
	const trials = 48000
	seen := map[[4]uint32]int{}
	four := []CellCount{{0, 1}, {1, 1}, {2, 1}, {3, 1}}
	buf := make([]uint32, 0, 4)
	for range trials {
		buf = Rows(buf[:0], four, r)
		seen[[4]uint32(buf)]++
	}
	if len(seen) != 24 {
		t.Fatalf("bucketed Rows produced %d distinct orders, want 24", len(seen))
	}
	p := 1.0 / 24
	se := math.Sqrt(trials * p * (1 - p))
	for perm, c := range seen {
		if math.Abs(float64(c)-trials*p) > 5*se {
			t.Errorf("order %v seen %d times, want %.0f ± %.0f", perm, c, trials*p, 5*se)
		}
	}
}

func TestUintn(t *testing.T) {
	r := seeded(5)
	for _, n := range []uint64{1, 2, 3, 7, 1 << 40, math.MaxUint64} {
		for range 1000 {
			if v := uintn(r, n); v >= n {
				t.Fatalf("uintn(%d) = %d, out of range", n, v)
			}
		}
	}
}

func TestHistogram(t *testing.T) {
	out := Histogram([]CellCount{{0, 1}, {3, 3}}, make([]float64, 5))
	if want := []float64{0.25, 0, 0, 0.75, 0}; !slices.Equal(out, want) {
		t.Errorf("Histogram = %v, want %v", out, want)
	}
}

func TestSampleAllocs(t *testing.T) {
	d := randomDist(seeded(6), 10000)
	dst := make([]CellCount, 0, len(d))
	rows := make([]uint32, 0, 20000)
	r := seeded(7)
	for _, m := range []SampleMethod{Systematic, IID} {
		allocs := testing.AllocsPerRun(10, func() {
			cells, err := Sample(dst[:0], d, 20000, m, r)
			if err != nil {
				t.Fatal(err)
			}
			rows = Rows(rows[:0], cells, r)
		})
		if allocs != 0 {
			t.Errorf("%v: Sample + Rows into preallocated buffers: %v allocs, want 0", m, allocs)
		}
	}
}

// FuzzSample checks the invariants of both methods on arbitrary
// distributions: totals, within-one (systematic), no rows in empty cells,
// and errors (never panics) on bad input.
func FuzzSample(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0, 5}, uint16(10), uint64(1))
	f.Add([]byte{255}, uint16(0), uint64(2))
	f.Add([]byte{0, 0, 7}, uint16(1000), uint64(3))
	f.Fuzz(func(t *testing.T, w []byte, n uint16, seed uint64) {
		d := make([]float64, len(w))
		var sum float64
		for i, b := range w {
			d[i] = float64(b)
			sum += d[i]
		}
		for i := range d {
			d[i] /= sum // NaN when sum is 0: must be an error
		}
		for _, m := range []SampleMethod{Systematic, IID} {
			cells, err := Sample(nil, d, int64(n), m, seeded(seed))
			if err != nil {
				if sum > 0 && len(d) > 0 {
					t.Fatalf("%v: Sample(%v) error %v on a valid distribution", m, d, err)
				}
				continue
			}
			if got := total(cells); got != int64(n) {
				t.Fatalf("%v: total = %d, want %d", m, got, n)
			}
			checkCells(t, cells, d)
			if m == Systematic {
				for _, c := range cells {
					x := float64(n) * d[c.Cell]
					if float64(c.Count) < math.Floor(x-1e-9) || float64(c.Count) > math.Ceil(x+1e-9) {
						t.Fatalf("cell %d count %d not within one of %v", c.Cell, c.Count, x)
					}
				}
			}
		}
	})
}
