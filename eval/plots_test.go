package eval

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// TestHistBins: every value lands in a bin that holds it, the counts add up,
// and a value that rounding would put one past the last bin goes to the last
// one (the values of a release whose report's histogram made plotter.NewHist
// panic: x just below the largest, (x − least)/width computed as 40).
func TestHistBins(t *testing.T) {
	for _, tc := range []struct {
		name string
		vs   []float64
		n    int
	}{
		{"rounding at the top", []float64{-4.449555531677038, -1.6481518216596724, -1.6481518216596722, -3}, 40},
		{"one value", []float64{-2}, 5},
		{"all equal", []float64{-3, -3, -3}, 8},
		{"spread", []float64{-6, -5.5, -5, -4, -3.2, -3.1, -1}, 5},
	} {
		bins, w := histBins(tc.vs, tc.n)
		if w <= 0 {
			t.Errorf("%s: histBins width = %g, want > 0", tc.name, w)
		}
		total := 0.0
		for _, b := range bins {
			total += b.Weight
		}
		if total != float64(len(tc.vs)) {
			t.Errorf("%s: histBins counts %g values, want %d", tc.name, total, len(tc.vs))
		}
		last := bins[len(bins)-1]
		for _, v := range tc.vs {
			in := false
			for _, b := range bins {
				if b.Weight > 0 && v >= b.Min-1e-12 && (v < b.Max || b == last) {
					in = true
				}
			}
			if !in {
				t.Errorf("%s: value %g is in no counted bin", tc.name, v)
			}
		}
	}
	svg, err := errorHistogram([]float64{1e-4, 2.2e-2, 2.25e-2, 3e-3}, 1)
	if err != nil || !strings.Contains(svg, "<svg") {
		t.Errorf("errorHistogram = %.40q, %v; want an SVG", svg, err)
	}
}

// FuzzHistBins: for any values (finite, |v| ≤ 1e6: the report bins log10
// errors, −12 to 0) and bin count, histBins counts every value once, in a
// bin that holds it.
func FuzzHistBins(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40}, uint8(40))
	f.Fuzz(func(t *testing.T, raw []byte, nb uint8) {
		var vs []float64
		for i := 0; i+8 <= len(raw); i += 8 {
			v := math.Float64frombits(binary.LittleEndian.Uint64(raw[i:]))
			if !math.IsNaN(v) && math.Abs(v) <= 1e6 {
				vs = append(vs, v)
			}
		}
		n := int(nb%64) + 1
		if len(vs) == 0 {
			return
		}
		bins, w := histBins(vs, n)
		total := 0.0
		for _, b := range bins {
			total += b.Weight
		}
		if total != float64(len(vs)) || !(w > 0) {
			t.Fatalf("histBins(%v, %d): %g values counted, width %g", vs, n, total, w)
		}
		lo, hi := bins[0].Min, bins[len(bins)-1].Max
		for _, v := range vs {
			if v < lo-1e-9*max(1, math.Abs(lo)) || v > hi+1e-9*max(1, math.Abs(hi)) {
				t.Fatalf("histBins(%v, %d): value %g outside the bins [%g, %g]", vs, n, v, lo, hi)
			}
		}
	})
}
