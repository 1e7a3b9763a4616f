package bench

import (
	"math"
	"testing"
)

func TestRatioInterval(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name           string
		a              stats
		bMean, bSD     float64
		bRuns          int
		wantLo, wantHi float64
	}{
		// Both relative standard errors 0.2/√4 = 0.1: se = √0.02, the
		// ratio 2 times exp(±1.6449·0.1414).
		{"both spread", stats{N: 4, Mean: 2, SD: 0.4}, 1, 0.2, 4, 1.584913, 2.523797},
		// No spread on either side: the interval is the ratio.
		{"no spread", stats{N: 3, Mean: 1, SD: 0}, 2, 0, 5, 0.5, 0.5},
		{"one seed", stats{N: 1, Mean: 1, SD: nan}, 1, 0.1, 4, nan, nan},
		{"one reference run", stats{N: 3, Mean: 1, SD: 0.1}, 1, nan, 1, nan, nan},
		{"no reference spread", stats{N: 3, Mean: 1, SD: 0.1}, 1, nan, 4, nan, nan},
	} {
		got := ratioInterval(tc.a, tc.bMean, tc.bSD, tc.bRuns)
		same := func(x, y float64) bool { return math.IsNaN(x) && math.IsNaN(y) || math.Abs(x-y) < 1e-6 }
		if !same(got[0], tc.wantLo) || !same(got[1], tc.wantHi) {
			t.Errorf("%s: ratioInterval = %v, want [%v %v]", tc.name, got, tc.wantLo, tc.wantHi)
		}
	}
}
