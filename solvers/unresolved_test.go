package solvers

import (
	"math"
	"slices"
	"testing"
)

func TestNewUnresolvedGroups(t *testing.T) {
	sd := []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}
	for _, tc := range []struct {
		name    string
		est     []float64
		ordered int
		want    [][]int
	}{
		// Below κ·sd = 0.3: codes 0, 1 (a run), 3 (alone: no group), 5, 6.
		{"ordered runs", []float64{0.1, 0.2, 0.5, 0.29, 0.9, -0.1, 0.05}, 7, [][]int{{0, 1}, {5, 6}}},
		// The same values, categorical: one group of every low value.
		{"categorical", []float64{0.1, 0.2, 0.5, 0.29, 0.9, -0.1, 0.05}, 0, [][]int{{0, 1, 3, 5, 6}}},
		// Ordered codes 0–5 and a null code 6: the null code is not in a run.
		{"null code apart", []float64{0.5, 0.5, 0.1, 0.1, 0.5, 0.1, 0.1}, 6, [][]int{{2, 3}}},
		{"every value resolved", []float64{0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}, 7, nil},
	} {
		u := newUnresolved(tc.est, sd, tc.ordered, 3)
		if !slices.EqualFunc(u.groups, tc.want, slices.Equal) {
			t.Errorf("%s: newUnresolved(%v, ordered %d).groups = %v, want %v", tc.name, tc.est, tc.ordered, u.groups, tc.want)
		}
	}
}

func TestUnresolvedShrink(t *testing.T) {
	const sd = 0.1
	for _, tc := range []struct {
		name     string
		est      []float64
		group    []int
		want     []float64
		tolerate float64
	}{
		// m ≤ 3: the mean; values outside the group keep theirs.
		{"small group pooled", []float64{0.9, 0.1, -0.05, 0.25}, []int{1, 2, 3}, []float64{0.9, 0.1, 0.1, 0.1}, 1e-15},
		// A negative mean counts as 0.
		{"negative mean", []float64{-0.2, 0.1}, []int{0, 1}, []float64{0, 0}, 0},
		// m = 5, deviations ±0.01 (Σ = 4e-4 against (m − 3)·σ² = 0.02): b = 0.
		{"noise only", []float64{0.11, 0.09, 0.11, 0.09, 0.1}, []int{0, 1, 2, 3, 4}, []float64{0.1, 0.1, 0.1, 0.1, 0.1}, 1e-15},
		// m = 5, deviations ±1 and 0: Σ = 4, b = 1 − 0.02/4 = 0.995.
		{"signal kept", []float64{1, -1, 1, -1, 0}, []int{0, 1, 2, 3, 4}, []float64{0.995, -0.995, 0.995, -0.995, 0}, 1e-12},
	} {
		u := &unresolved{groups: [][]int{tc.group}, sd: slices.Repeat([]float64{sd}, len(tc.est))}
		got := slices.Clone(tc.est)
		u.shrink(got)
		for v := range got {
			if math.Abs(got[v]-tc.want[v]) > tc.tolerate {
				t.Errorf("%s: shrink(%v) = %v, want %v", tc.name, tc.est, got, tc.want)
				break
			}
		}
	}
	var none *unresolved
	est := []float64{0.5, -0.1}
	none.shrink(est) // an attribute in no measured table: nothing to pool
	if est[0] != 0.5 || est[1] != -0.1 {
		t.Errorf("nil shrink changed the estimate to %v", est)
	}
}

// TestSmoothedSD checks the noise of a triangular moving average: half-width
// 1 has weights 1, 2, 1 inside (‖w‖₂/Σw = √6/4) and 2, 1 at the ends
// (√5/3); beyond the ordered codes (a null code) the noise is σ.
func TestSmoothedSD(t *testing.T) {
	sd := make([]float64, 5)
	smoothedSD(sd, 2, 1, 4)
	want := []float64{2 * math.Sqrt(5) / 3, 2 * math.Sqrt(6) / 4, 2 * math.Sqrt(6) / 4, 2 * math.Sqrt(5) / 3, 2}
	for v := range sd {
		if math.Abs(sd[v]-want[v]) > 1e-15 {
			t.Errorf("smoothedSD(σ 2, h 1, 4 codes)[%d] = %g, want %g", v, sd[v], want[v])
		}
	}
	smoothedSD(sd, 2, 0, 4)
	for v, s := range sd {
		if s != 2 {
			t.Errorf("smoothedSD(σ 2, h 0)[%d] = %g, want 2", v, s)
		}
	}
}
