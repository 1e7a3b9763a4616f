package privacy

import (
	"fmt"
	"math"
	"math/big"
)

// GridFor returns the exponent e of the granularity g = 2^e to snap a
// real-valued statistic of sensitivity Δ: the largest power of two with
// g <= Δ/1024. Rounding to that grid raises the sensitivity from Δ to at most
// Δ + g, a cost of at most 0.1% (see SnappedLaplace).
func GridFor(sensitivity float64) int {
	if !(sensitivity > 0) || math.IsInf(sensitivity, 0) {
		panic(fmt.Sprintf("privacy: GridFor(%v)", sensitivity))
	}
	_, e := math.Frexp(sensitivity / 1024) // x = m·2^e with m in [0.5, 1)
	return e - 1
}

// snapGrid is the part shared by the snapped mechanisms.
type snapGrid struct {
	exp int     // g = 2^exp
	g   float64 // the granularity
}

func newSnapGrid(exp int) (snapGrid, error) {
	if exp < -1000 || exp > 1000 {
		return snapGrid{}, fmt.Errorf("privacy: grid exponent %d out of range [-1000, 1000]", exp)
	}
	return snapGrid{exp: exp, g: pow2(exp)}, nil
}

// snap returns x/g rounded to the nearest integer (ties to even).
func (s snapGrid) snap(x float64) (int64, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("privacy: cannot release %v", x)
	}
	k := math.RoundToEven(math.Ldexp(x, -s.exp))
	if math.Abs(k) >= 1<<52 {
		return 0, fmt.Errorf("privacy: value %g is too large for the grid 2^%d (more than 2^52 steps); use a coarser grid", x, s.exp)
	}
	return int64(k), nil
}

// SnappedLaplace releases real values with pure DP by snapping them to the
// grid g = 2^e and adding g times an exact discrete Laplace draw:
//
//	release(x) = g·(round(x/g) + Z),  Z ~ Lap_Z((Δ + c·g)/(ε·g)).
//
// Privacy: ε-DP for a statistic with ℓ1 sensitivity Δ in which at most c
// coordinates differ between neighbours (c = 1 for a scalar) under the
// neighbouring relation (replace one record, n public, by default).
// Rounding moves each coordinate by at most g/2, so the snapped integer
// vector has ℓ1 sensitivity at most Δ/g + c, and the discrete Laplace
// mechanism on it is exact (CKS 2020). The cost of snapping is that the
// noise scale is (Δ + c·g)/ε instead of Δ/ε: with g from GridFor, at most
// 0.1% more noise per changed coordinate.
type SnappedLaplace struct {
	grid snapGrid
	eps  float64
	lap  *DiscreteLaplace
}

// NewSnappedLaplace returns the mechanism for a statistic of ℓ1 sensitivity
// l1Sensitivity with at most changed coordinates differing between
// neighbours, budget eps and grid 2^gridExp (see GridFor).
func NewSnappedLaplace(l1Sensitivity float64, changed int, eps float64, gridExp int) (*SnappedLaplace, error) {
	if err := checkSnap(l1Sensitivity, changed, eps, "ε"); err != nil {
		return nil, err
	}
	grid, err := newSnapGrid(gridExp)
	if err != nil {
		return nil, err
	}
	// Scale in grid units: (Δ + c·g)/(ε·g), exactly.
	var num, den, t big.Rat
	num.SetFloat64(l1Sensitivity)
	t.SetFloat64(grid.g)
	t.Mul(&t, new(big.Rat).SetInt64(int64(changed)))
	num.Add(&num, &t)
	den.SetFloat64(eps)
	t.SetFloat64(grid.g)
	den.Mul(&den, &t)
	num.Quo(&num, &den)
	lap, err := NewDiscreteLaplaceRat(&num)
	if err != nil {
		return nil, fmt.Errorf("privacy: snapped Laplace with grid 2^%d: %w", gridExp, err)
	}
	return &SnappedLaplace{grid: grid, eps: eps, lap: lap}, nil
}

func checkSnap(sens float64, changed int, budget float64, name string) error {
	if !(sens > 0) || math.IsInf(sens, 0) {
		return fmt.Errorf("privacy: sensitivity %v: must be finite and positive", sens)
	}
	if changed < 1 {
		return fmt.Errorf("privacy: %d changed coordinates: must be at least 1", changed)
	}
	if !(budget > 0) || math.IsInf(budget, 0) {
		return fmt.Errorf("privacy: %s = %v: must be finite and positive", name, budget)
	}
	return nil
}

// Release returns one noisy value of x.
func (m *SnappedLaplace) Release(r *Rand, x float64) (float64, error) {
	k, err := m.grid.snap(x)
	if err != nil {
		return 0, err
	}
	return math.Ldexp(float64(k+m.lap.Sample(r)), m.grid.exp), nil
}

// ReleaseVector writes noisy values of x into out (same length); x is one
// statistic, so the whole vector costs Cost() once.
func (m *SnappedLaplace) ReleaseVector(r *Rand, x, out []float64) error {
	return releaseVector(x, out, func(v float64) (float64, error) { return m.Release(r, v) })
}

// Cost returns ε-DP (pure).
func (m *SnappedLaplace) Cost() Cost { return PureCost(m.eps) }

// Granularity returns g.
func (m *SnappedLaplace) Granularity() float64 { return m.grid.g }

func releaseVector(x, out []float64, f func(float64) (float64, error)) error {
	if len(x) != len(out) {
		panic(fmt.Sprintf("privacy: releasing %d values into %d", len(x), len(out)))
	}
	for i, v := range x {
		y, err := f(v)
		if err != nil {
			return fmt.Errorf("coordinate %d: %w", i, err)
		}
		out[i] = y
	}
	return nil
}

// SnappedGaussian releases real values under zCDP by snapping them to the
// grid g = 2^e and adding g times an exact discrete Gaussian draw of
// parameter σ/g:
//
//	release(x) = g·(round(x/g) + Z),  Z ~ N_Z(0, (σ/g)²).
//
// Privacy: ρ-zCDP with ρ = (Δ + g·√c)²/(2σ²) for a statistic with ℓ2
// sensitivity Δ in which at most c coordinates differ between neighbours
// (replace one record, n public, by default): rounding adds at most g to
// each differing coordinate's change, so the snapped vector's ℓ2
// sensitivity is at most Δ + g·√c, and the discrete Gaussian mechanism is
// exact (CKS 2020, Theorem 14). With g from GridFor the cost of snapping is
// at most a factor (1 + √c/1024)² on ρ.
type SnappedGaussian struct {
	grid    snapGrid
	sens    float64
	changed int
	sigma   float64
	dg      *DiscreteGaussian
}

// NewSnappedGaussian returns the mechanism for a statistic of ℓ2 sensitivity
// l2Sensitivity with at most changed coordinates differing between
// neighbours, noise σ (in the statistic's units) and grid 2^gridExp.
func NewSnappedGaussian(l2Sensitivity float64, changed int, sigma float64, gridExp int) (*SnappedGaussian, error) {
	if err := checkSnap(l2Sensitivity, changed, sigma, "σ"); err != nil {
		return nil, err
	}
	grid, err := newSnapGrid(gridExp)
	if err != nil {
		return nil, err
	}
	var s big.Rat
	s.SetFloat64(math.Ldexp(sigma, -gridExp)) // σ/g, exact unless it over- or underflows
	if v, _ := s.Float64(); v*grid.g != sigma {
		return nil, fmt.Errorf("privacy: σ = %g is out of range for the grid 2^%d", sigma, gridExp)
	}
	s.Mul(&s, &s)
	dg, err := NewDiscreteGaussianRat(&s)
	if err != nil {
		return nil, fmt.Errorf("privacy: snapped Gaussian with grid 2^%d: %w", gridExp, err)
	}
	return &SnappedGaussian{grid: grid, sens: l2Sensitivity, changed: changed, sigma: sigma, dg: dg}, nil
}

// Release returns one noisy value of x.
func (m *SnappedGaussian) Release(r *Rand, x float64) (float64, error) {
	k, err := m.grid.snap(x)
	if err != nil {
		return 0, err
	}
	return math.Ldexp(float64(k+m.dg.Sample(r)), m.grid.exp), nil
}

// ReleaseVector writes noisy values of x into out (same length); x is one
// statistic, so the whole vector costs Cost() once.
func (m *SnappedGaussian) ReleaseVector(r *Rand, x, out []float64) error {
	return releaseVector(x, out, func(v float64) (float64, error) { return m.Release(r, v) })
}

// Cost returns ρ = (Δ + g·√c)²/(2σ²), rounded up.
func (m *SnappedGaussian) Cost() Cost {
	return GaussianCost(up(m.sens+up(m.grid.g*math.Sqrt(float64(m.changed)))), m.sigma)
}

// Granularity returns g.
func (m *SnappedGaussian) Granularity() float64 { return m.grid.g }
