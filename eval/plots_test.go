package eval

import (
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
