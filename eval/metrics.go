package eval

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpsynth/synth/query"
)

// Metrics summarises the absolute errors of a workload's queries.
type Metrics struct {
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
	RMSE float64 `json:"rmse"`
	// P95 is the 95th percentile by the nearest-rank rule: the
	// ⌈0.95·m⌉-th smallest error.
	P95 float64 `json:"p95"`
}

// AbsErrors writes |a_j − b_j| into out (len m) and returns it.
func AbsErrors(a, b, out []float64) []float64 {
	if len(a) != len(b) || len(out) != len(a) {
		panic(fmt.Sprintf("eval: AbsErrors lengths %d, %d, %d", len(a), len(b), len(out)))
	}
	for j := range a {
		out[j] = math.Abs(a[j] - b[j])
	}
	return out
}

// Summarize returns the max, mean, RMSE and p95 of errs (zero for none).
// It does not modify errs.
func Summarize(errs []float64) Metrics {
	m := moments(errs)
	m.P95 = Percentile(errs, 0.95)
	return m
}

// moments returns the max, mean and RMSE of errs (zero when empty).
func moments(errs []float64) Metrics {
	if len(errs) == 0 {
		return Metrics{}
	}
	var m Metrics
	var sum, sq float64
	for _, e := range errs {
		m.Max = max(m.Max, e)
		sum += e
		sq += e * e
	}
	n := float64(len(errs))
	m.Mean = sum / n
	m.RMSE = math.Sqrt(sq / n)
	return m
}

// Percentile returns the q-quantile (0 < q <= 1) of xs by the
// nearest-rank rule: the ⌈q·len⌉-th smallest value. It copies xs.
func Percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return selectKth(slices.Clone(xs), nearestRank(len(xs), q))
}

// nearestRank is the 0-based index of the ⌈q·n⌉-th smallest of n values.
func nearestRank(n int, q float64) int {
	r := int(math.Ceil(q*float64(n))) - 1
	return min(max(r, 0), n-1)
}

// selectKth returns the k-th smallest value of s (0-based), reordering s:
// quickselect with a median-of-three pivot, O(len(s)) expected, so that a
// report over 10^7 queries does not sort them.
func selectKth(s []float64, k int) float64 {
	lo, hi := 0, len(s)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if s[mid] < s[lo] {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[mid] {
			s[hi], s[mid] = s[mid], s[hi]
		}
		p := s[mid]
		i, j := lo, hi
		for i <= j {
			for s[i] < p {
				i++
			}
			for s[j] > p {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return s[k]
		}
	}
	return s[k]
}

// MeanMarginalL1 is the mean over the workload's marginals of the L1
// distance between the answers a and b on each (each marginal's cells
// divided by its weight), NaN without marginals.
func MeanMarginalL1(w *query.Workload, a, b []float64) float64 {
	ms := w.Marginals()
	if len(ms) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, s := range ms {
		sum += l1(a, b, s) / s.Weight
	}
	return sum / float64(len(ms))
}
