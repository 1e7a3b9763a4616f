package privacy

import (
	"math"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestGaussianVectorDistribution: N = 4·10^6 values (quick) or 2·10^7 (long)
// from GaussianVector with σ = 2.5; χ² over 200 equiprobable cells of
// N(0, σ²) plus the two tails beyond ±zigR (the ziggurat's tail method),
// threshold the 1 − 1e-6 quantile; and the mean and variance (z-tests,
// total rate 1e-6).
func TestGaussianVectorDistribution(t *testing.T) {
	const sigma = 2.5
	n := size(4_000_000, 20_000_000)
	r := testRand(t, 700)
	xs := make([]float64, n)
	GaussianVector(r, sigma, xs)

	const cells = 200
	counts := make([]int, cells+2)
	probs := make([]float64, cells+2)
	tail := distuv.UnitNormal.CDF(-zigR)
	// Cell 0: x < −zigR; cells 1..200 equiprobable inside; cell 201: x > zigR.
	inner := make([]float64, cells+1)
	for i := range inner {
		inner[i] = distuv.UnitNormal.Quantile(tail + (1-2*tail)*float64(i)/cells)
	}
	inner[0], inner[cells] = -zigR, zigR
	probs[0], probs[cells+1] = tail, tail
	for i := 1; i <= cells; i++ {
		probs[i] = (1 - 2*tail) / cells
	}
	for _, x := range xs {
		u := x / sigma
		switch {
		case u < -zigR:
			counts[0]++
		case u > zigR:
			counts[cells+1]++
		default:
			lo, hi := 0, cells
			for hi-lo > 1 {
				mid := (lo + hi) / 2
				if u < inner[mid] {
					hi = mid
				} else {
					lo = mid
				}
			}
			counts[lo+1]++
		}
	}
	stat, df := chiSquare(counts, probs, n, 5)
	if th := chi2Threshold(df, falseFailure); stat > th {
		t.Errorf("χ² = %.1f > %.1f (df %d)", stat, th, df)
	}
	checkMoments(t, xs, 0, sigma*sigma, 3*sigma*sigma*sigma*sigma)
	for _, x := range xs {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			t.Fatalf("GaussianVector produced %v", x)
		}
	}
}

// TestNormalFloat64: the serial sampler, same checks on moments.
func TestNormalFloat64(t *testing.T) {
	r := testRand(t, 701)
	xs := make([]float64, size(200_000, 10_000_000))
	for i := range xs {
		xs[i] = r.NormFloat64()
	}
	checkMoments(t, xs, 0, 1, 3)
}

// TestGaussianVectorDeterministic: the output depends on the stream only,
// not on GOMAXPROCS, and consecutive calls differ.
func TestGaussianVectorDeterministic(t *testing.T) {
	const n = 5*vecChunk + 123
	a, b := make([]float64, n), make([]float64, n)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(1)
	GaussianVector(NewSeeded(4), 1, a)
	runtime.GOMAXPROCS(4)
	GaussianVector(NewSeeded(4), 1, b)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("value %d differs between GOMAXPROCS 1 and 4: %v, %v", i, a[i], b[i])
		}
	}
	r := NewSeeded(4)
	GaussianVector(r, 1, a)
	GaussianVector(r, 1, b)
	if a[0] == b[0] && a[n-1] == b[n-1] {
		t.Error("two calls on one stream gave the same noise")
	}
	// Chunks are independent streams: no chunk repeats another.
	if a[0] == a[vecChunk] && a[1] == a[vecChunk+1] {
		t.Error("chunks 0 and 1 start alike")
	}
}

func TestGaussianVectorAllocs(t *testing.T) {
	r := NewSeeded(1)
	out := make([]float64, 336_000)
	GaussianVector(r, 1, out) // first call allocates the per-Rand state
	if a := testing.AllocsPerRun(20, func() { GaussianVector(r, 1, out) }); a != 0 {
		t.Errorf("GaussianVector allocates %v times per call", a)
	}
}

func TestGaussianVectorEdge(t *testing.T) {
	r := NewSeeded(1)
	GaussianVector(r, 1, nil)
	out := []float64{1, 2, 3}
	GaussianVector(r, 0, out)
	if out[0] != 0 || out[1] != 0 || out[2] != 0 {
		t.Errorf("σ = 0 gave %v", out)
	}
	for _, s := range []float64{-1, math.NaN(), math.Inf(1)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("GaussianVector with σ = %v did not panic", s)
				}
			}()
			GaussianVector(r, s, out)
		}()
	}
}
