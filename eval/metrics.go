package eval

import (
	"fmt"
	"math"
	"slices"
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
	m.P95 = Percentile(errs, 0.95)
	return m
}

// Percentile returns the q-quantile (0 < q <= 1) of xs by the
// nearest-rank rule: the ⌈q·len⌉-th smallest value. It copies xs.
func Percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	r := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(r, 0), len(s)-1)]
}
